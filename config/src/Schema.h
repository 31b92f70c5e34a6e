#pragma once
// A declarative YAML schema: each key is bound once to a struct member and a value kind, and
// that one binding parses, validates, rejects unknown keys and renders the config back.
// Errors read "file:line: key.path: expected ..., got ...".

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace mtm::config::schema {

struct Context {
  std::string file;
  std::vector<std::string> errors;

  void fail(const YAML::Node& at, const std::string& path, const std::string& message) {
    errors.push_back(file + ":" + std::to_string(at.Mark().line + 1) + ": " + path + ": " + message);
  }
  std::string origin(const YAML::Node& at) const { return file + ":" + std::to_string(at.Mark().line + 1); }
};

// How a node looks in "got ..." messages.
std::string describe(const YAML::Node& n);

template <class S>
class Section {
 public:
  using Check = std::function<void(const YAML::Node&, const std::string& path, S&, Context&)>;

  // Spec: bool read(const YAML::Node&, const std::string& path, T&, Context&) const;
  //       void write(YAML::Emitter&, const T&) const;  bool present(const T&) const;
  template <class T, class Spec>
  Section& field(std::string key, T S::*member, Spec spec) {
    fields_.push_back(
        Field{key, [member, spec](const YAML::Node& n, const std::string& path, S& s, Context& ctx) { spec.read(n, path, s.*member, ctx); },
              [member, spec, key](YAML::Emitter& e, const S& s) {
                if (!spec.present(s.*member)) return;
                e << YAML::Key << key << YAML::Value;
                spec.write(e, s.*member);
              }});
    return *this;
  }

  // Runs after the keys were read: checks that span several keys.
  Section& check(Check c) {
    checks_.push_back(std::move(c));
    return *this;
  }

  bool read(const YAML::Node& node, const std::string& path, S& out, Context& ctx) const {
    if (node.IsNull()) return true;  // "section:" with nothing keeps the defaults
    if (!node.IsMap()) {
      ctx.fail(node, path.empty() ? "(top level)" : path, "expected a mapping of keys (" + keyList() + "), got " + describe(node));
      return false;
    }
    size_t before = ctx.errors.size();
    std::map<std::string, int> lineOf;  // yaml-cpp keeps every pair of a key given twice
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      const std::string sub = path.empty() ? key : path + "." + key;
      if (auto [it, fresh] = lineOf.emplace(key, kv.first.Mark().line + 1); !fresh) {
        ctx.fail(kv.first, sub, "given twice (first at line " + std::to_string(it->second) + "): keep one");
        continue;
      }
      const Field* f = find(key);
      if (f == nullptr) {
        ctx.fail(kv.first, sub, "unknown key, expected one of " + keyList());
        continue;
      }
      f->read(kv.second, sub, out, ctx);
    }
    if (ctx.errors.size() == before)
      for (const auto& c : checks_) c(node, path, out, ctx);
    return ctx.errors.size() == before;
  }

  void write(YAML::Emitter& e, const S& s) const {
    e << YAML::BeginMap;
    for (const auto& f : fields_) f.write(e, s);
    e << YAML::EndMap;
  }
  bool present(const S&) const { return true; }

  void keys(const std::string& prefix, std::vector<std::string>& out) const {
    for (const auto& f : fields_) out.push_back(prefix + f.key);
  }
  std::string keyList() const {
    std::string s;
    for (const auto& f : fields_) s += (s.empty() ? "" : ", ") + f.key;
    return s;
  }

 private:
  struct Field {
    std::string key;
    std::function<void(const YAML::Node&, const std::string&, S&, Context&)> read;
    std::function<void(YAML::Emitter&, const S&)> write;
  };
  const Field* find(const std::string& key) const {
    for (const auto& f : fields_)
      if (f.key == key) return &f;
    return nullptr;
  }
  std::vector<Field> fields_;
  std::vector<Check> checks_;
};

// ---- value kinds -------------------------------------------------------------------------

struct Base {
  template <class T>
  bool present(const T&) const {
    return true;
  }
};

struct UInt : Base {
  uint64_t min, max;
  template <class T>
  bool read(const YAML::Node& n, const std::string& path, T& out, Context& ctx) const;
  template <class T>
  void write(YAML::Emitter& e, const T& v) const {
    e << static_cast<uint64_t>(v);
  }
};

// A number, or a percentage ("5%"), within [min, max].
struct Fraction : Base {
  double min, max;
  bool read(const YAML::Node& n, const std::string& path, double& out, Context& ctx) const;
  void write(YAML::Emitter& e, double v) const;
};

struct Size : Base {
  bool read(const YAML::Node& n, const std::string& path, uint64_t& out, Context& ctx) const;
  void write(YAML::Emitter& e, uint64_t v) const;
};

struct Rate : Base {
  bool read(const YAML::Node& n, const std::string& path, uint64_t& out, Context& ctx) const;
  void write(YAML::Emitter& e, uint64_t v) const;
};

struct Bool : Base {
  bool read(const YAML::Node& n, const std::string& path, bool& out, Context& ctx) const;
  void write(YAML::Emitter& e, bool v) const { e << v; }
};

struct Text : Base {
  bool absolutePath = false;
  bool allowEmpty = false;
  bool read(const YAML::Node& n, const std::string& path, std::string& out, Context& ctx) const;
  void write(YAML::Emitter& e, const std::string& v) const { e << v; }
  // Text that may not be empty is empty only when the key was left out: rendered, it stays out.
  bool present(const std::string& v) const { return allowEmpty || !v.empty(); }
};

struct Choice : Base {
  std::vector<std::string> choices;
  bool read(const YAML::Node& n, const std::string& path, std::string& out, Context& ctx) const;
  void write(YAML::Emitter& e, const std::string& v) const { e << v; }
};

// A node list: 2, "0,2-3" or [0, 2, 3].
struct NodeList : Base {
  bool read(const YAML::Node& n, const std::string& path, std::vector<int>& out, Context& ctx) const;
  void write(YAML::Emitter& e, const std::vector<int>& v) const;
};

struct PidList : Base {
  bool read(const YAML::Node& n, const std::string& path, std::vector<int>& out, Context& ctx) const;
  void write(YAML::Emitter& e, const std::vector<int>& v) const;
};

// A list of strings; with `choices`, each must be one of them.
struct TextList : Base {
  Text item;
  std::vector<std::string> choices;
  bool read(const YAML::Node& n, const std::string& path, std::vector<std::string>& out, Context& ctx) const;
  void write(YAML::Emitter& e, const std::vector<std::string>& v) const;
};

// An enum spelled by name.
template <class E>
struct Enum : Base {
  std::vector<std::pair<std::string, E>> names;
  bool read(const YAML::Node& n, const std::string& path, E& out, Context& ctx) const {
    std::string s;
    Choice c;
    for (const auto& [name, value] : names) c.choices.push_back(name);
    if (!c.read(n, path, s, ctx)) return false;
    for (const auto& [name, value] : names)
      if (name == s) out = value;
    return true;
  }
  void write(YAML::Emitter& e, E v) const {
    for (const auto& [name, value] : names)
      if (value == v) e << name;
  }
};

template <class Spec, class T>
struct Optional : Base {
  Spec spec;
  bool read(const YAML::Node& n, const std::string& path, std::optional<T>& out, Context& ctx) const {
    T v{};
    if (!spec.read(n, path, v, ctx)) return false;
    out = v;
    return true;
  }
  void write(YAML::Emitter& e, const std::optional<T>& v) const { spec.write(e, *v); }
  bool present(const std::optional<T>& v) const { return v.has_value(); }
};

// A sequence of mappings, each read by a Section.
template <class S>
struct ListOf : Base {
  const Section<S>* section;
  bool read(const YAML::Node& n, const std::string& path, std::vector<S>& out, Context& ctx) const {
    if (n.IsNull()) return true;
    if (!n.IsSequence()) {
      ctx.fail(n, path, "expected a list, got " + describe(n));
      return false;
    }
    out.clear();
    bool ok = true;
    for (size_t i = 0; i < n.size(); ++i) {
      S item{};
      const std::string at = path + "[" + std::to_string(i) + "]";
      if (n[i].IsNull()) {  // "- " alone, or an item commented out: not an item with every default
        ctx.fail(n, at, "expected a mapping of keys (" + section->keyList() + "), got nothing");  // the list's line: a null has none
        ok = false;
        continue;
      }
      ok = section->read(n[i], at, item, ctx) && ok;
      out.push_back(std::move(item));
    }
    return ok;
  }
  void write(YAML::Emitter& e, const std::vector<S>& v) const {
    if (v.empty()) e << YAML::Flow;
    e << YAML::BeginSeq;
    for (const auto& item : v) section->write(e, item);
    e << YAML::EndSeq;
  }
};

template <class S>
struct Nested : Base {
  const Section<S>* section;
  bool read(const YAML::Node& n, const std::string& path, S& out, Context& ctx) const { return section->read(n, path, out, ctx); }
  void write(YAML::Emitter& e, const S& v) const { section->write(e, v); }
};

bool readUnsigned(const YAML::Node& n, const std::string& path, uint64_t min, uint64_t max, uint64_t& out, Context& ctx);

template <class T>
bool UInt::read(const YAML::Node& n, const std::string& path, T& out, Context& ctx) const {
  uint64_t v = 0;
  if (!readUnsigned(n, path, min, max, v, ctx)) return false;
  out = static_cast<T>(v);
  return true;
}

}  // namespace mtm::config::schema

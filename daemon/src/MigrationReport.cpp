#include "mtm/daemon/MigrationReport.h"

#include <cerrno>
#include <cstdio>

#include "mtm/Parse.h"

namespace mtm::daemon {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kPage = kPageSize;

uint64_t failedWith(const MoveStats& s, int err) {
  auto it = s.failed.find(err);
  return it == s.failed.end() ? 0 : it->second;
}

Table statsTable(const MoveStats& s) {
  uint64_t other = s.pagesFailed();
  for (int e : {EBUSY, ENOMEM, EACCES, EFAULT, ENOENT}) other -= failedWith(s, e);
  Table t({{"requested_bytes", "requested[MiB]", kMiB},
           {"moved_bytes", "moved[MiB]", kMiB},
           {"fallback_bytes", "to_fallback[MiB]", kMiB},
           {"busy_pages", "EBUSY"},
           {"nomem_pages", "ENOMEM"},
           {"acces_pages", "EACCES"},
           {"fault_pages", "EFAULT"},
           {"noent_pages", "ENOENT"},
           {"other_failed_pages", "other"},
           {"deferred_pages", "deferred"},
           {"cancelled_pages", "cancelled"},
           {"retried_pages", "retried"},
           {"thp_moved_whole", "thp_whole"},
           {"thp_split", "thp_split"},
           {"hugetlb_moved", "hugetlb"},
           {"move_pages_calls", "calls"},
           {"seconds", "time[s]"},
           {"rate_bytes_per_s", "rate[MiB/s]", kMiB}});
  t.addRow({s.pagesRequested * kPage, s.pagesMoved * kPage, s.pagesToFallback * kPage, failedWith(s, EBUSY), failedWith(s, ENOMEM),
            failedWith(s, EACCES), failedWith(s, EFAULT), failedWith(s, ENOENT), other, s.pagesDeferred, s.pagesCancelled, s.retries,
            s.thpMovedWhole, s.thpSplit, s.hugetlbMoved, s.calls, std::chrono::duration<double>(s.elapsed).count(), s.bytesPerSecond()});
  return t;
}

Table nodeTable(const std::map<int, migrate::NodePages>& byNode, const config::TierMap& tiers) {
  Table t({{"node", "node"},
           {"tier", "tier"},
           {"base_bytes", "4k[MiB]", kMiB},
           {"thp_bytes", "thp[MiB]", kMiB},
           {"hugetlb_bytes", "hugetlb[MiB]", kMiB},
           {"total_bytes", "total[MiB]", kMiB}});
  for (const auto& [node, pages] : byNode) {
    const int tier = tiers.tierOfNode(node);
    t.addRow({static_cast<int64_t>(node), tier >= 0 ? Cell(static_cast<int64_t>(tier)) : Cell(), pages.base * kPage, pages.thp * kPage,
              pages.hugetlb * kPage, pages.total() * kPage});
  }
  return t;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string renderMoveStats(const MoveStats& s, Format format) {
  if (format != Format::Json) return statsTable(s).render(format);
  JsonWriter out;
  out.beginObject();
  out.key("pages_requested").value(s.pagesRequested);
  out.key("pages_moved").value(s.pagesMoved);
  out.key("pages_to_fallback").value(s.pagesToFallback);
  out.key("pages_failed").beginObject();
  for (const auto& [err, pages] : s.failed) out.key(errnoName(err)).value(pages);
  out.endObject();
  out.key("pages_deferred").value(s.pagesDeferred);
  out.key("pages_cancelled").value(s.pagesCancelled);
  out.key("pages_would_move").value(s.pagesWouldMove);
  out.key("pages_already_there").value(s.pagesAlreadyThere);
  out.key("pages_retried").value(s.retries);
  out.key("move_pages_calls").value(s.calls);
  out.key("thp_moved_whole").value(s.thpMovedWhole);
  out.key("thp_split").value(s.thpSplit);
  out.key("thp_collapsed").value(s.thpCollapsed);
  out.key("hugetlb_moved").value(s.hugetlbMoved);
  out.key("seconds").value(std::chrono::duration<double>(s.elapsed).count());
  out.key("bytes_per_second").value(s.bytesPerSecond());
  out.key("errors").beginArray();
  for (const auto& e : s.errors) out.value(e);
  out.endArray();
  out.endObject();
  return out.str();
}

std::string renderPlacement(const migrate::Placement& p, const config::TierMap& tiers, Format format) {
  Table vmas({{"start", "start"},
              {"end", "end"},
              {"perms", "perms"},
              {"path", "path"},
              {"size_bytes", "size[MiB]", kMiB},
              {"not_present_bytes", "absent[MiB]", kMiB},
              {"by_node", "resident by node [MiB]"}});
  for (const auto& v : p.vmas) {
    std::string byNode;
    char buf[48];
    for (const auto& [node, pages] : v.byNode) {
      std::snprintf(buf, sizeof buf, "%s%d:%.1f", byNode.empty() ? "" : " ", node, static_cast<double>(pages.total() * kPage) / kMiB);
      byNode += buf;
    }
    vmas.addRow({hex(v.vma.start), hex(v.vma.end), v.vma.perms, v.vma.path.empty() ? "[anon]" : v.vma.path, v.vma.end - v.vma.start,
                 v.notPresent * kPage, byNode.empty() ? "-" : byNode});
  }
  if (format == Format::Csv) return nodeTable(p.byNode, tiers).renderCsv();
  if (format == Format::Text) {
    return "pid " + std::to_string(p.pid) + ": resident pages by node (THPs found by " + p.thpDetection + ")\n" +
           nodeTable(p.byNode, tiers).renderText() + "\nnot present: " + formatBytes(p.notPresent * kPage) + "\n\nby VMA:\n" +
           vmas.renderText();
  }
  JsonWriter w;
  w.beginObject();
  w.key("pid").value(p.pid);
  w.key("thp_detection").value(p.thpDetection);
  w.key("nodes");
  nodeTable(p.byNode, tiers).writeJson(w);
  w.key("not_present_bytes").value(p.notPresent * kPage);
  w.key("vmas").beginArray();
  for (const auto& v : p.vmas) {
    w.beginObject();
    w.key("start").value(v.vma.start).key("end").value(v.vma.end);
    w.key("perms").value(v.vma.perms).key("path").value(v.vma.path);
    w.key("not_present_bytes").value(v.notPresent * kPage);
    w.key("nodes");
    nodeTable(v.byNode, tiers).writeJson(w);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  return w.str();
}

}  // namespace mtm::daemon

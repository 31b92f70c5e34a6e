#include <catch2/catch.hpp>

#include "mtm/Table.h"

using namespace mtm;

namespace {
Table sample() {
  Table t({{"tier", "tier"},
           {"nodes", "nodes"},
           {"capacity_bytes", "capacity[MiB]", 1 << 20},
           {"latency_ns", "latency[ns]"},
           {"note", "note"},
           {"distances", "distances"}});
  t.addRow({int64_t{0}, std::vector<int>{0, 1, 2}, uint64_t{512} << 20, uint64_t{80}, std::string("a,\"b\""), IntList{{10, 20}}});
  t.addRow({int64_t{1}, std::vector<int>{3}, uint64_t{3} << 19, Cell(), std::string("x"), IntList{}});
  return t;
}
}  // namespace

TEST_CASE("one table renders as aligned text with units in headers", "[table]") {
  CHECK(sample().renderText() ==
        "tier  nodes  capacity[MiB]  latency[ns]  note   distances\n"
        "0     0-2    512.0          80           a,\"b\"  10 20\n"
        "1     3      1.5            -            x      -\n");
}

TEST_CASE("one table renders as CSV with raw values under keys", "[table]") {
  CHECK(sample().renderCsv() ==
        "tier,nodes,capacity_bytes,latency_ns,note,distances\n"
        "0,0-2,536870912,80,\"a,\"\"b\"\"\",10 20\n"
        "1,3,1572864,,x,-\n");
}

TEST_CASE("one table renders as JSON objects with typed values", "[table]") {
  CHECK(sample().render(Format::Json) ==
        "[{\"tier\":0,\"nodes\":[0,1,2],\"capacity_bytes\":536870912,\"latency_ns\":80,"
        "\"note\":\"a,\\\"b\\\"\",\"distances\":[10,20]},"
        "{\"tier\":1,\"nodes\":[3],\"capacity_bytes\":1572864,\"latency_ns\":null,\"note\":\"x\",\"distances\":[]}]\n");
  CHECK(jsonEscape("tab\there\nnl\x01") == "\"tab\\there\\nnl\\u0001\"");
  CHECK(parseFormat("yaml").error().message() == "expected a format text|json|csv, got \"yaml\"");
}

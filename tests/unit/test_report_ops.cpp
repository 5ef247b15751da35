// The ops in the result: JSON written and read back (every field checked, the call tree too), and
// the op table on the terminal, in Markdown and CSV, pinned line by line.
#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "model/errors.h"
#include "report/report.h"

namespace sdpa {
namespace {

OpProfile op(const std::string& name, int parent, int depth, double calls, double total_us, double self_us,
             double kernels, double memcpys = 0) {
  OpProfile o;
  o.name = name;
  o.parent = parent;
  o.depth = depth;
  o.calls = calls;
  o.total_us = total_us;
  o.self_us = self_us;
  o.kernels = kernels;
  o.memcpys = memcpys;
  return o;
}

RunReport ops_report() {
  CaseResult c;
  c.backend = "torch:naive";
  c.problem.batch = 8;
  c.problem.heads = 16;
  c.problem.kv_heads = 16;
  c.problem.seq_q = 1024;
  c.problem.seq_kv = 1024;
  c.problem.head_dim = 64;
  c.problem.causal = true;
  c.status = CaseStatus::ok;
  c.host = HostCost{0, 2100, 61.5, 30};
  c.profile = CaseProfile{};
  c.profile->forwards.resize(2);
  OpsProfile o;
  o.host_us = 120.25;
  o.launch_api_us = 18.5;
  o.launches_outside_ops = 1;
  o.ops = {op("aten::masked_fill", -1, 0, 1, 30, 5, 0), op("aten::clone", 0, 1, 1, 14, 5, 0),
           op("aten::copy_", 1, 2, 1, 9, 9, 0, 1), op("aten::masked_fill_", 0, 1, 1, 11, 11, 1)};
  o.ops[0].shapes = {"[[8, 16, 1024, 1024], [1024, 1024], []]"};
  c.profile->ops = o;
  RunReport r;
  r.cases = {c};
  return r;
}

TEST(OpsJson, RoundTrips) {
  const RunReport original = ops_report();
  const nlohmann::json j = report_to_json(original);
  EXPECT_GE(j["schema_version"].get<int>(), 6) << "the ops came with schema 6";
  const nlohmann::json& ops = j["cases"][0]["profile"]["ops"];
  EXPECT_EQ(ops["host_us"], 120.25);
  EXPECT_EQ(ops["ops"][2]["name"], "aten::copy_");
  EXPECT_EQ(ops["ops"][2]["parent"], 1);
  const RunReport back = report_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(report_to_json(back), j);
  ASSERT_TRUE(back.cases[0].profile->ops);
  EXPECT_EQ(back.cases[0].profile->ops->ops[0].shapes, original.cases[0].profile->ops->ops[0].shapes);
}

TEST(OpsJson, OlderFilesHaveNoOps) {
  nlohmann::json v5 = report_to_json(ops_report());
  v5["schema_version"] = 5;
  v5["cases"][0]["profile"].erase("ops");
  const RunReport back = report_from_json(v5);
  ASSERT_TRUE(back.cases[0].profile);
  EXPECT_FALSE(back.cases[0].profile->ops);
}

TEST(OpsJson, RejectsWhatIsNotAnOpTable) {
  const auto rejects = [](const std::string& field, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = report_to_json(ops_report());
    edit(j["cases"][0]["profile"]["ops"]);
    try {
      report_from_json(j);
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  rejects("ops.ops[1].parent", [](nlohmann::json& o) { o["ops"][1]["parent"] = 1; });  // itself
  rejects("ops.ops[0].parent", [](nlohmann::json& o) { o["ops"][0]["parent"] = 3; });  // a later row
  rejects("ops.ops[2].depth", [](nlohmann::json& o) { o["ops"][2]["depth"] = 1; });
  rejects("ops.ops[0].cpu_self_us", [](nlohmann::json& o) { o["ops"][0]["cpu_self_us"] = 31; });
  rejects("ops.ops[0].calls_per_forward", [](nlohmann::json& o) { o["ops"][0]["calls_per_forward"] = -1; });
  rejects("ops.ops[0].shapes", [](nlohmann::json& o) { o["ops"][0]["shapes"] = {1}; });
  rejects("ops.host_us", [](nlohmann::json& o) { o["host_us"] = "fast"; });
  rejects("ops.unclosed_ranges", [](nlohmann::json& o) { o["unclosed_ranges"] = 1e300; });
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out.push_back(text.substr(start, end - start));
  return out;
}

TEST(OpsText, CallTreeFittedToTheWidth) {
  const std::string text = format_ops(ops_report(), TextStyle{80, false});
  const std::vector<std::string> l = lines(text);
  ASSERT_GE(l.size(), 10u);
  EXPECT_EQ(l[0], "");
  EXPECT_EQ(l[1], "torch:naive B8 H16 S1024 D64 bf16 causal: 4 op calls per forward (4 ops in the");
  EXPECT_EQ(l[2], "    call tree); the forward's host time 120.2 us, 18.5 us of it inside launch");
  EXPECT_EQ(l[4], "    without op ranges");
  EXPECT_EQ(l[5], "  op                                   calls   CPU us  self us  kern  copy   set");
  EXPECT_EQ(l[6], "  aten::masked_fill                        1     30.0      5.0     -     -     -");
  EXPECT_EQ(l[7], "    aten::clone                            1     14.0      5.0     -     -     -");
  EXPECT_EQ(l[8], "      aten::copy_                          1      9.0      9.0     -     1     -");
  EXPECT_EQ(l[9], "    aten::masked_fill_                     1     11.0     11.0     1     -     -");
  for (const std::string& line : l) EXPECT_LE(line.size(), 80u) << line;
  // Wider: the name column takes the room, the numbers keep theirs.
  const std::vector<std::string> wide = lines(format_ops(ops_report(), TextStyle{120, false}));
  EXPECT_EQ(wide[4].size(), 120u) << wide[4];
}

TEST(OpsText, ABackwardsOpsArePerBackward) {
  RunReport r = ops_report();
  for (CaseResult& c : r.cases) c.problem.pass = AttentionPass::backward;
  const std::string text = format_ops(r, TextStyle{200, false});
  EXPECT_NE(text.find("4 op calls per backward (4 ops in the call tree); the backward's host time"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ops: per backward (mean of the profiled backwards)"), std::string::npos)
      << text;
  const std::string md = format_ops_markdown(r);
  EXPECT_NE(md.find("**CPU ops per backward**"), std::string::npos) << md;
  EXPECT_NE(md.find("| op | calls/bwd |"), std::string::npos) << md;
}

TEST(OpsText, SaysWhenNoCaseHasOps) {
  RunReport r = ops_report();
  r.cases[0].profile->ops.reset();
  EXPECT_NE(format_ops(r).find("no case has CPU op ranges"), std::string::npos);
  EXPECT_EQ(format_ops_markdown(r), "");
}

TEST(OpsText, MarkdownAndCsv) {
  const std::vector<std::string> md = lines(format_ops_markdown(ops_report()));
  ASSERT_GE(md.size(), 8u);
  EXPECT_EQ(md[1], "**CPU ops per forward**");
  EXPECT_EQ(md[5], "| op | calls/fwd | CPU total us | CPU self us | kernels | memcpys | memsets | shapes |");
  EXPECT_EQ(md[7], "| aten::masked_fill | 1 | 30.0 | 5.0 | 0 | 0 | 0 | [[8, 16, 1024, 1024], [1024, 1024], []] |");
  EXPECT_EQ(md[9], "| ....aten::copy_ | 1 | 9.0 | 9.0 | 0 | 1 | 0 |  |");
  const std::vector<std::string> csv = lines(format_ops_csv(ops_report()));
  ASSERT_EQ(csv.size(), 5u);
  EXPECT_TRUE(csv[0].starts_with("backend,")) << csv[0];
  EXPECT_TRUE(csv[0].ends_with(",op_index,op,parent,depth,calls_per_forward,cpu_total_us,cpu_self_us,kernels,memcpys,"
                               "memsets,shapes"))
      << csv[0];
  EXPECT_TRUE(csv[3].ends_with(",2,aten::copy_,1,2,1,9.000,9.000,0,1,0,")) << csv[3];
  EXPECT_TRUE(csv[1].ends_with(",\"[[8, 16, 1024, 1024], [1024, 1024], []]\"")) << csv[1];
}

}  // namespace
}  // namespace sdpa

// trace's side of the injection: a record file read as hostile input, and a traced process's
// records cut into cases by their ranges and analysed like `run`'s own profile pass.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/timeline_output.h"
#include "io/record_file.h"
#include "model/errors.h"
#include "model/range_name.h"
#include "trace/program_results.h"
#include "trace/traced_cases.h"

namespace sdpa {
namespace {

const std::string kRecorded = std::string(SDPA_SOURCE_DIR) + "/tests/data/trace-synthetic.records";

std::string recorded_text() {
  std::ifstream in(kRecorded, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A file of `text` in the test's temporary folder.
class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_((std::filesystem::temp_directory_path() /
               ("sdpa-trace-test-" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                  .string()) {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const CaseResult* find_case(const std::vector<CaseResult>& cases, const std::string& backend) {
  for (const CaseResult& c : cases)
    if (c.backend == backend) return &c;
  return nullptr;
}

TEST(TraceRecords, RecordedProcessBecomesCasesWithTheSameAnalysisAsRun) {
  const RecordFile file = read_record_file(kRecorded, 1000);
  EXPECT_TRUE(file.complete) << file.partial_reason;
  EXPECT_EQ(file.pid, 4242);
  const TracedProcess p = analyze_traced_process(file, arch_limits(9, 0), 132);
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_EQ(p.cases[0].backend, "torch:naive");  // in the order they began
  const CaseResult& naive = *find_case(p.cases, "torch:naive");
  EXPECT_EQ(naive.problem.seq_q, 1024);
  EXPECT_TRUE(naive.problem.causal);
  ASSERT_TRUE(naive.profile.has_value());
  EXPECT_EQ(naive.profile->forwards.size(), 2u);
  EXPECT_EQ(naive.profile->nvtx_ranges, 2);
  EXPECT_DOUBLE_EQ(naive.profile->kernels_per_forward(), 5.0);
  EXPECT_DOUBLE_EQ(naive.profile->memcpys_per_forward(), 1.0);
  EXPECT_FALSE(naive.profile->findings.empty());

  const CaseResult& flash = *find_case(p.cases, "torch:flash");
  ASSERT_TRUE(flash.profile.has_value());
  EXPECT_DOUBLE_EQ(flash.profile->kernels_per_forward(),
                   1.0);  // the aten range nested inside is still the forward
  ASSERT_EQ(flash.profile->kernels.size(), 1u);
  EXPECT_EQ(flash.profile->kernels[0].category, KernelCategory::fused_attention);
  ASSERT_TRUE(flash.profile->kernels[0].occupancy.has_value());
  EXPECT_DOUBLE_EQ(flash.profile->kernels[0].occupancy->theoretical,
                   0.125);  // 255 registers: 2 blocks of 4 warps

  // Everything else, by the innermost range that launched it.
  const ProcessTrace& t = p.trace;
  EXPECT_EQ(t.kernels, 3u + 10 + 2 + 6 + 1);
  EXPECT_EQ(t.cases, 2);
  ASSERT_EQ(t.outside_cases.size(), 3u);
  EXPECT_EQ(t.outside_cases[0].name, "");  // the randn kernels, then the memset at the end
  EXPECT_EQ(t.outside_cases[0].kernels, 3u);
  EXPECT_EQ(t.outside_cases[0].memsets, 1u);
  EXPECT_EQ(t.outside_cases[1].name, "torch_sdpa timing torch:flash");
  EXPECT_EQ(t.outside_cases[1].kernels, 6u);
  EXPECT_DOUBLE_EQ(t.outside_cases[1].kernel_us, 3 * (20.0 + 150.0));
  EXPECT_EQ(t.outside_cases[2].name,
            "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal/fwdX");  // not the grammar
  EXPECT_EQ(t.outside_cases[2].kernels, 1u);
}

// Autograd runs a backward's kernels from its own device thread while the main thread waits in
// the case's range: that work is the case's (counted by time, as the case's analysis counts it),
// not work outside the cases.
TEST(TraceRecords, WorkAnotherThreadLaunchesInsideACaseIsTheCases) {
  const std::string kernel =
      R"("grid":[1,1,1],"block":[128,1,1],"cluster":[1,1,1],"registers":32,"static_shared":0,"dynamic_shared":0,"shared_config":233472,"launch_type":"regular")";
  const TempFile records(
      R"({"schema":"sdpa-prof/trace-records","schema_version":1,"pid":7,"cupti":"test"})"
      "\n"
      R"({"marker":{"id":1,"timestamp":1000,"start":true,"name":"sdpa-prof/torch:math/B1_H1_S64_D64_bf16_bwd/fwd0","tid":1}})"
      "\n"
      R"({"api":{"start":1100,"end":1200,"correlation":5,"tid":2}})"
      "\n"
      R"({"kernel":{"name":"backward_kernel","start":1300,"end":1400,"correlation":5,)" +
      kernel + "}}\n" +
      R"({"marker":{"id":1,"timestamp":2000,"start":false,"name":"","tid":1}})"
      "\n"
      R"({"api":{"start":3000,"end":3100,"correlation":6,"tid":2}})"
      "\n"
      R"({"kernel":{"name":"later_kernel","start":3200,"end":3300,"correlation":6,)" +
      kernel + "}}\n");
  const TracedProcess p =
      analyze_traced_process(read_record_file(records.path(), 1000), arch_limits(9, 0), 132);
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_EQ(p.cases[0].problem.pass, AttentionPass::backward);
  ASSERT_TRUE(p.cases[0].profile.has_value());
  EXPECT_DOUBLE_EQ(p.cases[0].profile->kernels_per_forward(), 1.0);
  ASSERT_EQ(p.trace.outside_cases.size(), 1u) << "only the later kernel is outside";
  EXPECT_EQ(p.trace.outside_cases[0].kernels, 1u);
}

// Recorded on the H200: torch_sdpa.py --batch 1 --heads 2 --seq 128 --backend
// naive,naive-inplace,flash (PyTorch 2.11, 2 forwards each) under the injection library.
TEST(TraceRecords, RecordedPyTorchOnTheH200) {
  const RecordFile file = read_record_file(
      std::string(SDPA_SOURCE_DIR) + "/tests/data/trace-h200-torch-s128.records", 100000);
  ASSERT_TRUE(file.complete) << file.partial_reason;
  const TracedProcess p = analyze_traced_process(file, arch_limits(9, 0), 132);
  ASSERT_EQ(p.cases.size(), 3u);
  const CaseResult& naive = *find_case(p.cases, "torch:naive");
  EXPECT_EQ(naive.problem.seq_q, 128);
  EXPECT_EQ(naive.profile->nvtx_ranges, 2);
  EXPECT_DOUBLE_EQ(naive.profile->kernels_per_forward(), 5.0);
  EXPECT_DOUBLE_EQ(naive.profile->memcpys_per_forward(), 1.0);
  const CaseResult& inplace = *find_case(p.cases, "torch:naive-inplace");
  EXPECT_DOUBLE_EQ(inplace.profile->kernels_per_forward(), 5.0);
  EXPECT_DOUBLE_EQ(inplace.profile->memcpys_per_forward(), 0.0);
  const CaseResult& flash = *find_case(p.cases, "torch:flash");
  ASSERT_EQ(flash.profile->kernels.size(), 1u);
  EXPECT_EQ(flash.profile->kernels[0].category, KernelCategory::fused_attention);
  EXPECT_NE(flash.profile->kernels[0].full_name.find("flash_fwd_kernel"), std::string::npos);
  EXPECT_EQ(flash.profile->unattributed,
            p.trace.kernels + p.trace.memcpys + p.trace.memsets -
                static_cast<uint64_t>(flash.profile->kernels_per_forward() * 2));
  // The warm-up and timing ranges of each backend, and the setup outside any range.
  bool timing_range = false;
  for (const RangeActivity& r : p.trace.outside_cases)
    timing_range = timing_range || r.name == "torch_sdpa timing torch:flash";
  EXPECT_TRUE(timing_range);
}

// Recorded on an H100: torch_sdpa.py --batch 1 --heads 2 --seq 128 --backend
// naive,naive-inplace,math,flash,cudnn --forwards 2 (PyTorch 2.11, cuDNN 9.19) under the injection
// library, the profiled forwards under emit_nvtx(record_shapes=True): the study's CPU ops.
TEST(TraceRecords, RecordedPyTorchOpsOnTheH100) {
  const RecordFile file = read_record_file(
      std::string(SDPA_SOURCE_DIR) + "/tests/data/trace-h100-torch-ops-s128.records", 1000000);
  ASSERT_TRUE(file.complete) << file.partial_reason;
  const TracedProcess p = analyze_traced_process(file, arch_limits(9, 0), 132);
  ASSERT_EQ(p.cases.size(), 5u);
  const auto calls = [&](const std::string& backend, const std::string& op) {
    const CaseResult& c = *find_case(p.cases, backend);
    EXPECT_TRUE(c.profile && c.profile->ops) << backend;
    double n = 0;
    for (const OpProfile& row : ops_by_name(*c.profile->ops)) n += row.name == op ? row.calls : 0;
    return n;
  };
  EXPECT_DOUBLE_EQ(calls("torch:naive", "aten::clone"), 1.0);  // the out-of-place fill's copy
  EXPECT_DOUBLE_EQ(calls("torch:naive-inplace", "aten::clone"), 0.0);
  EXPECT_DOUBLE_EQ(calls("torch:math", "aten::ones"), 1.0);  // the causal mask, every call
  EXPECT_DOUBLE_EQ(calls("torch:math", "aten::tril"), 1.0);
  EXPECT_DOUBLE_EQ(calls("torch:math", "aten::_safe_softmax"), 1.0);
  EXPECT_GE(calls("torch:flash", "aten::transpose"), 4.0);
  EXPECT_DOUBLE_EQ(calls("torch:cudnn", "aten::transpose"), 0.0);
  for (const CaseResult& c : p.cases) {
    const OpsProfile& ops = *c.profile->ops;
    EXPECT_EQ(ops.unclosed, 0) << c.backend;
    EXPECT_GT(ops.host_us, 0.0) << c.backend;
    EXPECT_GT(ops.launch_api_us, 0.0) << c.backend;
    EXPECT_LE(ops.launch_api_us, ops.host_us) << c.backend;
    // Every kernel of the forward came from an op (the launches are PyTorch's, inside aten ops).
    EXPECT_DOUBLE_EQ(ops.launches() + ops.launches_outside_ops,
                     c.profile->kernels_per_forward() + c.profile->memcpys_per_forward() +
                         c.profile->memsets_per_forward())
        << c.backend;
  }
}

// trace --timeline: a traced process's records as their own track group, every kernel a slice.
TEST(TraceRecords, RecordedProcessAsATimeline) {
  RecordFile file = read_record_file(
      std::string(SDPA_SOURCE_DIR) + "/tests/data/trace-h200-torch-s128.records", 100000);
  const std::size_t kernels = file.records.kernels.size();
  TimelineRecorder timeline(uint64_t{64} << 20, "NVIDIA H200");
  timeline.add(std::move(file.records), static_cast<uint32_t>(file.pid),
               "python3 torch_sdpa.py (pid 538)");
  const TempFile out("");
  std::ostringstream progress;
  timeline.write(out.path(), progress);
  std::ifstream in(out.path());
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::size_t kernel_slices = 0;
  bool named = false;
  for (const nlohmann::json& e : doc.at("traceEvents")) {
    kernel_slices += e.value("cat", "") == "kernel" ? 1 : 0;
    named = named || (e.value("name", "") == "process_name" && e.at("pid") == 538);
  }
  EXPECT_EQ(kernel_slices, kernels);
  EXPECT_TRUE(named);
}

TEST(TraceRecords, FileCutShortIsPartialWithTheRecordsSoFar) {
  const std::string text = recorded_text();
  // As os._exit leaves it: no end line. Then cut inside a line, as a crash mid-write leaves it.
  const std::size_t end_line = text.rfind("{\"end\"");
  const TempFile no_end(text.substr(0, end_line));
  const RecordFile a = read_record_file(no_end.path(), 1000);
  EXPECT_FALSE(a.complete);
  EXPECT_NE(a.partial_reason.find("os._exit"), std::string::npos);
  EXPECT_EQ(a.records.kernels.size(), 22u);
  EXPECT_TRUE(analyze_traced_process(a, std::nullopt, 0).trace.partial);

  const TempFile mid_line(text.substr(0, text.find("\"kernel\"", 2000) + 20));
  const RecordFile b = read_record_file(mid_line.path(), 1000);
  EXPECT_FALSE(b.complete);
  EXPECT_NE(b.partial_reason.find("cut short"), std::string::npos);
  EXPECT_GT(b.records.kernels.size(), 0u);
  EXPECT_LT(b.records.kernels.size(), 22u);
}

TEST(TraceRecords, BadLinesEndTheRecordsThere) {
  const std::string header =
      "{\"schema\":\"sdpa-prof/trace-records\",\"schema_version\":1,\"pid\":7,\"cupti\":\"x\"}\n";
  const std::string api = "{\"api\":{\"start\":10,\"end\":20,\"correlation\":1}}\n";
  for (const std::string& bad : std::vector<std::string>{
           "{\"api\":{\"start\":30,\"end\":20,\"correlation\":1}}",   // ends before it starts
           "{\"api\":{\"start\":10,\"end\":20,\"correlation\":-1}}",  // negative id
           "{\"kernel\":{\"name\":\"k\"}}",                           // fields missing
           "{\"kernel\":{\"name\":\"k\",\"start\":1,\"end\":2,\"correlation\":1,\"grid\":[1,1],"
           "\"block\":[1,1,1],"
           "\"cluster\":[1,1,1],\"registers\":1,\"static_shared\":0,\"dynamic_shared\":0,\"shared_"
           "config\":0,"
           "\"launch_type\":\"regular\"}}",  // a grid of two sizes
           "{\"api\":{}, \"memcpy\":{}}",    // two records in one
           "[1,2,3]", "{{{{",
           std::string(100, '[') + std::string(100, ']'),  // not an object, nested too deep
       }) {
    const TempFile f(header + api + bad + "\n" + api + "{\"end\":{}}\n");
    const RecordFile r = read_record_file(f.path(), 1000);
    EXPECT_FALSE(r.complete) << bad;
    EXPECT_NE(r.partial_reason.find("line 3"), std::string::npos) << r.partial_reason;
    EXPECT_EQ(r.records.api_calls.size(), 1u) << bad;
  }
  const TempFile after_end(header + "{\"end\":{}}\n" + api);
  EXPECT_FALSE(read_record_file(after_end.path(), 1000).complete);
  const TempFile huge(header + std::string(kMaxRecordLine + 10, 'x') + "\n");
  EXPECT_NE(read_record_file(huge.path(), 1000).partial_reason.find("cut short"),
            std::string::npos);
}

TEST(TraceRecords, NotARecordFileIsBadInput) {
  for (const std::string& text :
       std::vector<std::string>{"", "{}\n", "{\"schema\":\"sdpa-prof/result\"}\n",
                                "{\"schema\":\"sdpa-prof/"
                                "trace-records\",\"schema_version\":99,\"pid\":1,\"cupti\":\"\"}\n",
                                "no newline"}) {
    const TempFile f(text);
    EXPECT_THROW(read_record_file(f.path(), 1000), InputError) << text;
  }
  EXPECT_THROW(read_record_file("/nonexistent/1.records", 1000), InputError);
}

TEST(TraceRecords, BoundedRecordsAreCountedNotKept) {
  const RecordFile r = read_record_file(kRecorded, 10);
  EXPECT_EQ(r.records.kernels.size(), 10u);
  EXPECT_GT(r.records_left_out, 0u);
  const TracedProcess p = analyze_traced_process(r, std::nullopt, 0);
  EXPECT_TRUE(p.trace.partial);
  EXPECT_NE(p.trace.partial_reason.find("counted, not analysed"), std::string::npos);
}

TEST(TraceRecords, OtherProfilerIsReported) {
  const TempFile f(
      "{\"schema\":\"sdpa-prof/trace-records\",\"schema_version\":1,\"pid\":9,\"cupti\":\"\"}\n" +
      error_line(kRecordErrorOtherProfiler, "another CUPTI client holds CUPTI") + end_line());
  const RecordFile r = read_record_file(f.path(), 10);
  EXPECT_EQ(r.error_code, kRecordErrorOtherProfiler);
  EXPECT_TRUE(r.complete);
}

TEST(TraceRecords, WrittenLinesReadBack) {
  KernelRecord k;
  k.name = "_Z4kern\"quoted\"\n";
  k.start = 5;
  k.end = 9;
  k.correlation = 4000000000u;
  k.grid = Dim3{2, 3, 4};
  k.registers_per_thread = 255;
  k.launch_type = "regular";
  k.place = GpuPlace{1, 2, 7, 3, uint64_t{1} << 40};  // a graph node's kernel on stream 7
  ApiRecord a;
  a.start = 1;
  a.end = 2;
  a.correlation = 4000000000u;
  a.kind = ApiKind::driver;
  a.name = "cuGraphLaunch";
  a.thread_id = 99;
  const TempFile f(record_file_header(1, "c") + record_line(k) + record_line(a) +
                   record_line(MarkerRecord{3, 7, true, "r", "", 0, 0}) + end_line());
  const RecordFile r = read_record_file(f.path(), 10);
  ASSERT_TRUE(r.complete) << r.partial_reason;
  ASSERT_EQ(r.records.kernels.size(), 1u);
  EXPECT_EQ(r.records.kernels[0].name,
            "_Z4kern\"quoted\"\\n");  // a control character comes back escaped
  EXPECT_EQ(r.records.kernels[0].correlation, k.correlation);
  EXPECT_EQ(r.records.kernels[0].grid, k.grid);
  EXPECT_EQ(r.records.kernels[0].place.stream_id, 7u);
  EXPECT_EQ(r.records.kernels[0].place.graph_node_id, k.place.graph_node_id);
  ASSERT_EQ(r.records.api_calls.size(), 1u);
  EXPECT_EQ(r.records.api_calls[0].kind, ApiKind::driver);
  EXPECT_EQ(r.records.api_calls[0].name, "cuGraphLaunch");
  EXPECT_EQ(r.records.api_calls[0].thread_id, 99u);
  ASSERT_EQ(r.records.markers.size(), 1u);
  EXPECT_EQ(r.records.markers[0].name, "r");
}

TEST(ProgramResults, TimesAndSkipsMergeIntoTheTracedCases) {
  const TracedProcess p =
      analyze_traced_process(read_record_file(kRecorded, 1000), arch_limits(9, 0), 132);
  std::vector<CaseResult> cases = p.cases;
  const TempFile f(
      R"({"schema":"sdpa-prof/program-results","schema_version":1,"source":"pytorch 2.11.0, cuDNN 91900",
    "cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16_causal","status":"ok","warmup":3,"cold_cache":true,
              "samples_ms":[0.2,0.1,0.3]},
             {"range":"sdpa-prof/torch:cudnn/B8_H16_S1024_D64_bf16_causal","status":"skipped","reason":"No available kernel."}]})");
  merge_program_results(read_program_results(f.path()), cases);
  ASSERT_EQ(cases.size(), 3u);
  const CaseResult& flash = *find_case(cases, "torch:flash");
  ASSERT_TRUE(flash.timing.has_value());
  EXPECT_DOUBLE_EQ(flash.timing->median_ms, 0.2);
  EXPECT_EQ(flash.timing->samples, 3);
  EXPECT_EQ(flash.source, "pytorch 2.11.0, cuDNN 91900");
  EXPECT_FALSE(
      find_case(cases, "torch:naive")->timing.has_value());  // traced, not timed by the program
  const CaseResult& cudnn = *find_case(cases, "torch:cudnn");
  EXPECT_EQ(cudnn.status, CaseStatus::skipped);
  EXPECT_EQ(cudnn.reason, "No available kernel.");
}

// A path whose run raised (a cuDNN that will not load) keeps its row, failed with the error.
TEST(ProgramResults, AFailedPathKeepsItsRowWithTheError) {
  std::vector<CaseResult> cases;
  const TempFile f(
      R"({"schema":"sdpa-prof/program-results","schema_version":1,"source":"pytorch 2.11.0",
    "cases":[{"range":"sdpa-prof/torch:cudnn/B8_H16_S1024_D64_bf16_causal","status":"failed",
              "reason":"RuntimeError: cuDNN version incompatibility"}]})");
  merge_program_results(read_program_results(f.path()), cases);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].backend, "torch:cudnn");
  EXPECT_EQ(cases[0].status, CaseStatus::failed);
  EXPECT_EQ(cases[0].reason, "RuntimeError: cuDNN version incompatibility");
}

TEST(ProgramResults, HostTimePerCallIsTheMedianOfTheProgramsSamples) {
  std::vector<CaseResult> cases;
  const TempFile f(
      R"({"schema":"sdpa-prof/program-results","schema_version":2,"source":"pytorch 2.11.0",
    "cases":[{"range":"sdpa-prof/torch:cudnn/B8_H16_S1024_D64_bf16_causal","status":"ok","samples_ms":[0.2],
              "host_first_call_us":2100.5,"host_us":[216.5,213,214]}]})");
  merge_program_results(read_program_results(f.path()), cases);
  ASSERT_EQ(cases.size(), 1u);
  ASSERT_TRUE(cases[0].host);
  EXPECT_DOUBLE_EQ(cases[0].host->per_call_us, 214);
  EXPECT_DOUBLE_EQ(cases[0].host->first_call_us, 2100.5);
  EXPECT_EQ(cases[0].host->calls, 3);
}

TEST(ProgramResults, HostileFilesAreBadInput) {
  for (
      const std::string& text : std::vector<std::string>{
          R"({"schema":"other"})",
          R"({"schema":"sdpa-prof/program-results","schema_version":1,"source":"x","cases":[{"range":"nope","status":"ok","samples_ms":[1]}]})",
          R"({"schema":"sdpa-prof/program-results","schema_version":1,"source":"x","cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16","status":"ok","samples_ms":[]}]})",
          R"({"schema":"sdpa-prof/program-results","schema_version":1,"source":"x","cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16","status":"ok","samples_ms":[-1]}]})",
          R"({"schema":"sdpa-prof/program-results","schema_version":1,"source":"x","cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16","status":"maybe"}]})",
          R"({"schema":"sdpa-prof/program-results","schema_version":3,"source":"x","cases":[]})",
          R"({"schema":"sdpa-prof/program-results","schema_version":2,"source":"x","cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16","status":"ok","samples_ms":[1],"host_us":[]}]})",
          R"({"schema":"sdpa-prof/program-results","schema_version":2,"source":"x","cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16","status":"ok","samples_ms":[1],"host_us":[0]}]})",
          R"({"schema":"sdpa-prof/program-results","schema_version":2,"source":"x","cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16","status":"ok","samples_ms":[1],"host_us":["fast"]}]})",
          R"({"schema":"sdpa-prof/program-results","schema_version":2,"source":"x","cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16","status":"ok","samples_ms":[1],"host_us":[5],"host_first_call_us":-1}]})",
          "{",
          "",
      }) {
    const TempFile f(text);
    EXPECT_THROW(read_program_results(f.path()), InputError) << text;
  }
}

}  // namespace
}  // namespace sdpa

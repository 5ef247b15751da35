// The timeline's trace-event JSON on hand-made records: pinned line by line against
// tests/data/timeline-*.json (which tests/timeline_check.py also checks against the schema).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/timeline_output.h"
#include "model/errors.h"
#include "report/timeline.h"

namespace sdpa {
namespace {

constexpr uint32_t kPid = 4242, kThread = 4243;

GpuPlace stream(uint32_t id) {
  return GpuPlace{0, 1, id, 0, 0};
}

ApiRecord api(ApiKind kind, const std::string& name, uint64_t start, uint64_t end,
              uint32_t correlation) {
  ApiRecord a;
  a.kind = kind;
  a.name = name;
  a.callback_id = kind == ApiKind::runtime ? 211 : 652;
  a.start = start;
  a.end = end;
  a.correlation = correlation;
  a.process_id = kPid;
  a.thread_id = kThread;
  return a;
}

MarkerRecord marker(uint32_t id, uint64_t ts, bool is_start, const std::string& name) {
  MarkerRecord m;
  m.id = id;
  m.timestamp = ts;
  m.is_start = is_start;
  m.name = name;
  m.process_id = kPid;
  m.thread_id = kThread;
  return m;
}

// One forward in an NVTX range: a runtime launch (a kernel on stream 7), a driver launch from a
// graph (stream 13), a device-to-device copy and a memset, and a range the program never closed.
// The range's name has a quote, a newline and a byte that is not UTF-8.
ActivityRecords forward_records() {
  ActivityRecords r;
  r.markers = {marker(1, 1'000'000'000, true, "sdpa-prof/naive/\"B1\"\nfwd0\xff"),
               marker(1, 1'000'090'500, false, ""), marker(2, 1'000'095'000, true, "never closed")};
  r.markers.back().domain = "torch";
  r.api_calls = {api(ApiKind::runtime, "cudaLaunchKernel", 1'000'001'000, 1'000'004'250, 10),
                 api(ApiKind::driver, "cuLaunchKernelEx", 1'000'005'000, 1'000'006'000, 11),
                 api(ApiKind::runtime, "cudaMemcpyAsync", 1'000'007'000, 1'000'008'000, 12),
                 api(ApiKind::runtime, "", 1'000'009'000, 1'000'009'100, 13)};
  KernelRecord k;
  k.name = "_Z9flash_fwdv";
  k.start = 1'000'010'000;
  k.end = 1'000'060'125;
  k.correlation = 10;
  k.place = stream(7);
  k.grid = Dim3{1024, 1, 1};
  k.block = Dim3{128, 1, 1};
  k.registers_per_thread = 255;
  k.dynamic_shared = 49152;
  k.launch_type = "regular";
  KernelRecord node = k;
  node.name = "softmax<\"quoted\">";
  node.start = 1'000'061'000;
  node.end = 1'000'062'000;
  node.correlation = 11;
  node.place = GpuPlace{0, 1, 13, 3, 77};
  r.kernels = {k, node};
  MemcpyRecord copy;
  copy.kind = "DtoD";
  copy.bytes = 1 << 20;
  copy.start = 1'000'063'000;
  copy.end = 1'000'064'001;
  copy.correlation = 12;
  copy.place = stream(7);
  r.memcpys = {copy};
  MemsetRecord set;
  set.bytes = 4096;
  set.start = 1'000'070'000;
  set.end = 1'000'070'500;
  set.correlation = 99;  // its call was not recorded: no flow
  set.place = stream(7);
  r.memsets = {set};
  return r;
}

std::string timeline_text(const ActivityRecords& records, uint64_t max_bytes,
                          TimelineSummary* summary = nullptr) {
  std::ostringstream out;
  TimelineOptions options;
  options.max_bytes = max_bytes;
  options.kernel_label = [](const std::string& name) {
    return name == "_Z9flash_fwdv" ? "flash_fwd" : name;
  };
  const TimelineSummary s =
      write_timeline(out, {{"sdpa-prof run", kPid, "NVIDIA H200", 0, {&records}}}, options);
  if (summary != nullptr) *summary = s;
  return out.str();
}

std::string golden(const std::string& name) {
  std::ifstream in(std::string(SDPA_SOURCE_DIR "/tests/data/") + name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// On a difference, the actual document is left in the test's folder as actual-<golden> to diff.
void expect_same_golden(const std::string& actual, const std::string& name) {
  const std::string expected = golden(name);
  if (actual != expected) std::ofstream("actual-" + name, std::ios::binary) << actual;
  const std::vector<std::string> a = lines(actual), e = lines(expected);
  for (std::size_t i = 0; i < std::max(a.size(), e.size()); ++i)
    EXPECT_EQ(i < a.size() ? a[i] : "<missing>", i < e.size() ? e[i] : "<missing>")
        << "line " << i + 1;
}

TEST(Timeline, MatchesTheGoldenFileLineByLine) {
  const ActivityRecords records = forward_records();
  TimelineSummary s;
  const std::string text = timeline_text(records, uint64_t{1} << 20, &s);
  expect_same_golden(text, "timeline-golden.json");
  EXPECT_FALSE(s.truncated);
  EXPECT_EQ(s.kernels, 2u);
  EXPECT_EQ(s.memcpys, 1u);
  EXPECT_EQ(s.memsets, 1u);
  EXPECT_EQ(s.api_calls, 4u);
  EXPECT_EQ(s.ranges, 2u);
  EXPECT_EQ(s.flows, 3u);  // the memset's call is missing
  EXPECT_EQ(s.bytes, text.size());
}

// A forward under emit_nvtx: masked_fill calls copy_, which launches the memcpy; masked_fill
// launches the kernel itself.
ActivityRecords op_records() {
  ActivityRecords r;
  r.markers = {marker(1, 1'000'000'000, true, "sdpa-prof/torch:naive/B1_H1_S2_D2_bf16/fwd0"),
               marker(2, 1'000'001'000, true, "aten::masked_fill, seq = 3, op_id = 3, sizes = [[2, 2], [2, 2], []]"),
               marker(3, 1'000'002'000, true, "aten::copy_, op_id = 4"),
               marker(3, 1'000'003'000, false, ""),
               marker(2, 1'000'006'000, false, ""),
               marker(1, 1'000'009'000, false, "")};
  r.api_calls = {api(ApiKind::runtime, "cudaMemcpyAsync", 1'000'002'100, 1'000'002'500, 20),
                 api(ApiKind::runtime, "cudaLaunchKernel", 1'000'004'000, 1'000'004'500, 21)};
  MemcpyRecord copy;
  copy.kind = "DtoD";
  copy.bytes = 16;
  copy.start = 1'000'003'000;
  copy.end = 1'000'003'500;
  copy.correlation = 20;
  copy.place = stream(7);
  r.memcpys = {copy};
  KernelRecord k;
  k.name = "masked_fill_kernel";
  k.start = 1'000'005'000;
  k.end = 1'000'005'500;
  k.correlation = 21;
  k.place = stream(7);
  k.launch_type = "regular";
  r.kernels = {k};
  return r;
}

TEST(Timeline, OpSlicesAndFlowsFromEachOpToWhatItLaunched) {
  const ActivityRecords records = op_records();
  TimelineSummary s;
  const std::string text = timeline_text(records, uint64_t{1} << 20, &s);
  expect_same_golden(text, "timeline-ops-golden.json");
  EXPECT_EQ(s.ranges, 3u);
  EXPECT_EQ(s.flows, 4u);  // each launch call's, and each op's
  EXPECT_EQ(s.op_flows, 2u);
  EXPECT_NE(text.find("\"cat\":\"op\",\"name\":\"aten::copy_, op_id = 4\""), std::string::npos);
  EXPECT_NE(text.find("\"op\":\"aten::masked_fill\",\"shapes\":\"[[2, 2], [2, 2], []]\""), std::string::npos);
  EXPECT_NE(text.find("\"cat\":\"nvtx\",\"name\":\"sdpa-prof/torch:naive"), std::string::npos);  // the forward is no op
}

TEST(Timeline, EscapesQuotesNewlinesAndBytesThatAreNotUtf8) {
  const nlohmann::json j =
      nlohmann::json::parse(timeline_text(forward_records(), uint64_t{1} << 20));
  std::vector<std::string> names;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") != "M") names.push_back(e.at("name").get<std::string>());
  EXPECT_NE(std::find(names.begin(), names.end(), "sdpa-prof/naive/\"B1\"\nfwd0\xef\xbf\xbd"),
            names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "softmax<\"quoted\">"), names.end());
}

// The forward and then 200 more launches of its first kernel.
ActivityRecords many_records() {
  ActivityRecords many = forward_records();
  for (uint32_t i = 0; i < 200; ++i) {
    KernelRecord k = many.kernels.front();
    k.start += 100'000 + i * 1000;
    k.end = k.start + 500;
    many.kernels.push_back(k);
  }
  return many;
}

TEST(Timeline, TheSizeCapClosesTheDocumentAndSaysSo) {
  const ActivityRecords many = many_records();
  TimelineSummary s;
  const std::string text = timeline_text(many, kTimelineMinBytes * 2, &s);
  EXPECT_TRUE(s.truncated);
  EXPECT_LE(text.size(), kTimelineMinBytes * 2);
  EXPECT_LT(s.kernels, many.kernels.size());
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("otherData").at("truncated"), true);
  EXPECT_EQ(j.at("traceEvents").size(), s.events);
  expect_same_golden(text, "timeline-capped.json");
}

TEST(Timeline, ACapBelowTheShellIsRaisedToIt) {
  TimelineSummary s;
  const std::string text = timeline_text(many_records(), 1, &s);
  EXPECT_TRUE(s.truncated);
  EXPECT_LE(text.size(), kTimelineMinBytes);
  EXPECT_TRUE(nlohmann::json::accept(text));
}

TEST(Timeline, RecordsTheCallerKeptBackMakeItTruncated) {
  const ActivityRecords records = forward_records();
  std::ostringstream out;
  TimelineOptions options;
  options.records_left_out = 12;
  const TimelineSummary s =
      write_timeline(out, {{"sdpa-prof run", kPid, "NVIDIA H200", 0, {&records}}}, options);
  EXPECT_TRUE(s.truncated);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j.at("otherData").at("truncated"), true);
  EXPECT_EQ(j.at("otherData").at("records_left_out"), 12);
  EXPECT_EQ(s.kernels, 2u);  // everything it was given is there
}

TEST(Timeline, NoRecordsIsAnEmptyValidDocument) {
  const ActivityRecords none;
  TimelineSummary s;
  const nlohmann::json j = nlohmann::json::parse(timeline_text(none, uint64_t{1} << 20, &s));
  EXPECT_TRUE(j.at("traceEvents").empty());
  EXPECT_EQ(j.at("otherData").at("truncated"), false);
  EXPECT_EQ(s.events, 0u);
}

TEST(Timeline, ClockOffsetsLineUpProcessesAndTheZeroIsTheEarliestRecord) {
  const ActivityRecords a = forward_records(), b = forward_records();
  std::ostringstream out;
  write_timeline(out, {{"first", 1, "GPU", 0, {&a}}, {"second", 2, "GPU", -500, {&b}}});
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j.at("otherData").at("zero_ns"), 1'000'000'000 - 500);
  double earliest = 1e300;
  for (const auto& e : j.at("traceEvents"))
    if (e.contains("ts")) earliest = std::min(earliest, e.at("ts").get<double>());
  EXPECT_DOUBLE_EQ(earliest, 0.0);
}

// The forward's records, `ns` later: as the next case of a run.
ActivityRecords later(uint64_t ns) {
  ActivityRecords r = forward_records();
  for (KernelRecord& k : r.kernels) k.start += ns, k.end += ns;
  for (MemcpyRecord& m : r.memcpys) m.start += ns, m.end += ns;
  for (MemsetRecord& m : r.memsets) m.start += ns, m.end += ns;
  for (ApiRecord& a : r.api_calls) a.start += ns, a.end += ns;
  for (MarkerRecord& m : r.markers) m.timestamp += ns;
  return r;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return nlohmann::json::parse(in);
}

TEST(TimelineRecorder, KeepsCasesWhileTheCapCouldHoldThemAndSaysWhatItLeftOut) {
  // Beside the other tests' scratch files, not in the working directory, and removed after.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("sdpa-recorder-timeline-" + std::to_string(getpid()) + ".json"))
                               .string();
  struct Remove {
    std::string path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{path};
  TimelineRecorder recorder(uint64_t{1} << 20, "NVIDIA H200");  // 1 MiB: room for 16384 records of 64 bytes
  const uint64_t per_case = 11;                  // records in forward_records()
  ASSERT_EQ(forward_records().kernels.size() + forward_records().memcpys.size() +
                forward_records().memsets.size() + forward_records().api_calls.size() +
                forward_records().markers.size(),
            per_case);
  const uint64_t fitting = (uint64_t{1} << 20) / 64 / per_case;
  for (uint64_t i = 0; i < fitting + 3; ++i) recorder.add(later(i * 1'000'000));
  std::ostringstream progress;
  recorder.write(path, progress);
  const nlohmann::json j = read_json(path);
  EXPECT_EQ(j.at("otherData").at("truncated"), true);
  EXPECT_EQ(j.at("otherData").at("records_left_out"), 3 * per_case);
  EXPECT_NE(progress.str().find("reached its cap of 1 MiB"), std::string::npos) << progress.str();
  bool demangled = false;
  for (const auto& e : j.at("traceEvents")) demangled |= e.value("name", "") == "flash_fwd";
  EXPECT_TRUE(demangled);
}

TEST(TimelineRecorder, AnUnwritablePathLeavesNothing) {
  TimelineRecorder recorder(uint64_t{1} << 20, "GPU");
  recorder.add(forward_records());
  std::ostringstream progress;
  EXPECT_THROW(recorder.write("no-such-dir/timeline.json", progress), InputError);
  EXPECT_TRUE(progress.str().empty());
}

}  // namespace
}  // namespace sdpa

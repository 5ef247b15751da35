// run --devices: what each worker is asked to run.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/device_workers.h"

namespace sdpa {
namespace {

using Args = std::vector<std::string>;

TEST(DeviceWorkers, AWorkerRunsTheSweepOnItsGpuAndShardIntoItsPart) {
  const Args given{"--backend", "all", "--seq", "1024,4096", "--devices", "0,1", "--json", "out.json",
                   "--html=out.html", "--quiet", "--csv", "x.csv", "--md", "x.md", "--case-timeout", "60"};
  EXPECT_EQ(worker_arguments(given, 1, 2, 2, "/tmp/p/part-2.json"),
            (Args{"--backend", "all", "--seq", "1024,4096", "--quiet", "--case-timeout", "60", "--device", "1",
                  "--shard", "2/2", "--json", "/tmp/p/part-2.json"}));
}

TEST(DeviceWorkers, TheRunSubcommandAndTheEqualsFormAreKeptOrDropped) {
  const Args given{"run", "--devices=all", "--timeline", "t.json", "--timeline-max-mb=64", "--samples", "s.json", "--seq=64"};
  EXPECT_EQ(worker_arguments(given, 0, 1, 3, "p.json"),
            (Args{"run", "--seq=64", "--device", "0", "--shard", "1/3", "--json", "p.json"}));
}

}  // namespace
}  // namespace sdpa

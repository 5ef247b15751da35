// run --devices: the sweep over several GPUs of this host at once. One worker process per GPU
// (this program, `run --device D --shard K/N --json PART`: its own CUDA context, CUPTI subscriber
// and NVML handle), the cases dealt by predicted cost as --shard deals them, each worker's
// progress lines prefixed with its GPU, and the parts merged into one result. A worker that fails,
// or a signal, stops them all; what finished is kept (each part is its worker's journal).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace sdpa {

// The worker's command line: the arguments given, without --devices and the outputs the parent
// writes, with the worker's GPU, its shard and its part file.
std::vector<std::string> worker_arguments(const std::vector<std::string>& given, int device, int index,
                                          int count, const std::string& part_path);

int run_on_devices(const CliOptions& o, std::ostream& out, std::ostream& progress);

}  // namespace sdpa

// The NVTX push/pop ranges of one record set, nested per host thread, and which range each
// launch of GPU work came from: the innermost range open on the launching call's thread. Pure
// functions over the plain records of model/activity.h (the analysis and the timeline read them),
// so that tests feed them synthetic ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/activity.h"
#include "model/ops.h"

namespace sdpa {

struct NvtxRange {
  std::size_t marker = 0;  // its start marker's index in the records' markers
  std::string name;
  uint32_t process_id = 0, thread_id = 0;
  uint64_t start = 0, end = 0;
  // A range whose end was never recorded ends with its parent, or with the last record when it
  // has none.
  bool closed = false;
  int parent = -1;  // the innermost range on the same thread that holds it; -1 for none
  int depth = 0;
};

struct RangeTree {
  std::vector<NvtxRange> ranges;  // by start time: a parent before its children
  // The correlation id of each launching call (an API call whose id names a kernel, copy or set)
  // -> the innermost range open on its thread around the call; absent when no range was.
  std::unordered_map<uint32_t, std::size_t> launched_in;
  std::vector<const ApiRecord*> launch_calls;  // those calls, in the records' order
};

RangeTree range_tree(const ActivityRecords& records);

// Per forward (the ranges `forwards` index, each a profiled forward): the op ranges nested in it
// as a call tree (model/ops.h), mean over the forwards. None when no forward holds an op range.
std::optional<OpsProfile> op_table(const ActivityRecords& records, const RangeTree& tree,
                                   const std::vector<std::size_t>& forwards);

}  // namespace sdpa

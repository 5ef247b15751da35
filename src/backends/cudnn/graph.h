// A small builder over cuDNN's backend descriptor API (cudnnBackendCreateDescriptor /
// SetAttribute / Finalize): tensors, pointwise, reduction and matmul operations, the operation
// graph, heuristics and execution plans. Every descriptor is owned by RAII, every status checked.
#pragma once

#include <cudnn_graph.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sdpa::cudnn_graph {

// Owns a cuDNN handle (on the current device).
class Handle {
 public:
  Handle();
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cudnnHandle_t get() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

// Owns one backend descriptor.
class Descriptor {
 public:
  Descriptor() = default;
  explicit Descriptor(cudnnBackendDescriptorType_t type);
  ~Descriptor();
  Descriptor(Descriptor&& other) noexcept
      : desc_(std::exchange(other.desc_, nullptr)), type_(other.type_) {}
  Descriptor& operator=(Descriptor&& other) noexcept;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }

  // Each throws ApiError naming the descriptor and the attribute when cuDNN refuses it.
  Descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                  const void* values);
  Descriptor& set_int64(cudnnBackendAttributeName_t name, int64_t value);
  Descriptor& set_int64s(cudnnBackendAttributeName_t name, std::span<const int64_t> values);
  Descriptor& set_bool(cudnnBackendAttributeName_t name, bool value);
  Descriptor& set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value);
  Descriptor& set_handle(cudnnBackendAttributeName_t name, cudnnHandle_t handle);
  Descriptor& set_descriptor(cudnnBackendAttributeName_t name, const Descriptor& value);
  Descriptor& set_descriptors(cudnnBackendAttributeName_t name,
                              std::span<const Descriptor* const> values);
  void finalize();
  // For descriptors cuDNN may legitimately refuse (an engine config it cannot build):
  // the status, with cuDNN's message in `why` when it is not success.
  cudnnStatus_t try_finalize(std::string& why);

  int64_t get_int64(cudnnBackendAttributeName_t name) const;

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
  cudnnBackendDescriptorType_t type_ = CUDNN_BACKEND_POINTWISE_DESCRIPTOR;
};

// A matmul's GEMM sizes taken per batch from int32 [B, 1, 1, 1] tensors rather than from its
// operands' dims (sequences shorter than the dims: the padding cuDNN's paged attention needs);
// null: the dim's own.
struct MatmulOverrides {
  const Descriptor* m = nullptr;
  const Descriptor* n = nullptr;
  const Descriptor* k = nullptr;
};

// Builds one operation graph. Tensors and operations are kept alive here for as long as the
// graph, and so the plans built from it, exist. Operation helpers return their output tensor,
// so that building the graph reads like the computation.
class OperationGraph {
 public:
  // A tensor in device memory the variant pack binds to `uid`; no strides: packed row-major.
  const Descriptor& tensor(int64_t uid, cudnnDataType_t data_type, const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& strides = {});
  // A tensor that lives only inside the fused kernel: a fresh uid; no strides: packed row-major.
  const Descriptor& virtual_tensor(cudnnDataType_t data_type, const std::vector<int64_t>& dims,
                                   const std::vector<int64_t>& strides = {});
  // A float scalar passed by value from the host.
  const Descriptor& scalar(int64_t uid);

  const Descriptor& matmul(const Descriptor& a, const Descriptor& b, const Descriptor& c,
                           const MatmulOverrides& overrides = {});
  const Descriptor& unary(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor& y);
  const Descriptor& binary(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor& b,
                           const Descriptor& y, cudnnDataType_t precision = CUDNN_DATA_FLOAT);
  // y = t ? x : b
  const Descriptor& select(const Descriptor& x, const Descriptor& b, const Descriptor& t,
                           const Descriptor& y);
  // y = the index of each element of x along `axis`
  const Descriptor& gen_index(const Descriptor& x, int64_t axis, const Descriptor& y);
  // y = reduce(x) over the dimensions where y has extent 1
  const Descriptor& reduction(cudnnReduceTensorOp_t op, const Descriptor& x, const Descriptor& y);
  // y = x seen through y's dims, strides and type (a transposed view, a cast)
  const Descriptor& reshape(const Descriptor& x, const Descriptor& y);
  // y (virtual K or V of [B, H, S, D] dims, Kᵀ with its strides swapped) = the rows of each
  // sequence gathered from `container`'s pages [pages, H, page_size, D] in the order `page_table`
  // (int32 [B, 1, pages per sequence, 1]) lists them, up to `sequence_lengths` (int32 [B,1,1,1]).
  const Descriptor& paged_cache_load(const Descriptor& container, const Descriptor& page_table,
                                     const Descriptor& sequence_lengths, const Descriptor& y);

  // Finalizes the graph of every operation added so far, in the order added.
  void finalize(cudnnHandle_t handle);
  const Descriptor& get() const { return graph_; }

 private:
  Descriptor& keep(Descriptor d);
  const Descriptor& make_tensor(int64_t uid, cudnnDataType_t data_type,
                                const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& strides, bool is_virtual,
                                bool by_value);
  const Descriptor& pointwise(const Descriptor& pw, const Descriptor& x, const Descriptor* b,
                              const Descriptor* t, const Descriptor& y);

  std::deque<Descriptor> owned_;  // deque: references stay valid as it grows
  std::vector<const Descriptor*> operations_;
  Descriptor graph_;
  int64_t next_virtual_uid_ = 1000;
};

struct Knob {
  int type = 0;  // cudnnBackendKnobType_t
  int64_t value = 0;
};

// What an engine config is: which engine, with which knob values.
struct EngineConfigInfo {
  int64_t engine = -1;  // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::vector<Knob> knobs;
  bool runtime_compiled = false;  // CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION
  std::string text() const;       // "engine 8, knobs {kernel_cfg=3, ...}, runtime-compiled"
};

// The engine configs heuristics `mode` proposes for a finalized graph, best first; empty when
// it proposes none (the reason in `why`).
std::vector<Descriptor> heuristic_configs(const Descriptor& graph, cudnnBackendHeurMode_t mode,
                                          std::string& why);
EngineConfigInfo describe(const Descriptor& engine_config);

// An execution plan for `engine_config`, or nullopt with cuDNN's reason in `why`.
std::optional<Descriptor> make_plan(cudnnHandle_t handle, const Descriptor& engine_config,
                                    std::string& why);
int64_t plan_workspace_bytes(const Descriptor& plan);

// A finalized variant pack binding `pointers[i]` to the tensor of `uids[i]`, with `workspace`.
// cuDNN's pointer array is not const even for the tensors it only reads.
Descriptor variant_pack(const std::vector<int64_t>& uids, std::vector<void*>& pointers, void* workspace);

// "kernel_cfg" for CUDNN_KNOB_TYPE_KERNEL_CFG; nullptr for a knob newer than this table.
const char* knob_name(int knob_type);
const char* heuristic_mode_name(cudnnBackendHeurMode_t mode);

}  // namespace sdpa::cudnn_graph

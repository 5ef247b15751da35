#include "backends/cudnn/graph.h"

#include <algorithm>
#include <iterator>
#include <source_location>

#include <fmt/format.h>

#include "backends/cudnn/cudnn_check.h"
#include "backends/cudnn/cudnn_library.h"

namespace sdpa::cudnn_graph {
namespace {

constexpr int64_t kTensorAlignment = 16;  // bytes; cudaMalloc gives 256

const char* descriptor_name(cudnnBackendDescriptorType_t type) {
  switch (type) {
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
      return "POINTWISE";
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
      return "ENGINE";
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
      return "ENGINECFG";
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
      return "ENGINEHEUR";
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
      return "EXECUTION_PLAN";
    case CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR:
      return "KNOB_CHOICE";
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
      return "OPERATION_POINTWISE";
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
      return "OPERATIONGRAPH";
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
      return "VARIANT_PACK";
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
      return "TENSOR";
    case CUDNN_BACKEND_MATMUL_DESCRIPTOR:
      return "MATMUL";
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
      return "OPERATION_MATMUL";
    case CUDNN_BACKEND_REDUCTION_DESCRIPTOR:
      return "REDUCTION";
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
      return "OPERATION_REDUCTION";
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
      return "OPERATION_RESHAPE";
    case CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR:
      return "OPERATION_PAGED_CACHE_LOAD";
    default:
      return "descriptor";
  }
}

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// Fills `count` fresh descriptors of `type` from a descriptor-array attribute of `from`.
std::vector<Descriptor> get_descriptors(const Descriptor& from, cudnnBackendAttributeName_t name,
                                        cudnnBackendDescriptorType_t type, int64_t count) {
  std::vector<Descriptor> out;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    out.emplace_back(type);
    raw.push_back(out.back().get());
  }
  int64_t got = 0;
  if (const cudnnStatus_t st = cudnn().cudnnBackendGetAttribute(
          from.get(), name, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data());
      st != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error(fmt::format("cudnnBackendGetAttribute({}, attribute {})", descriptor_name(type),
                                  static_cast<int>(name)),
                      static_cast<int>(st));
  out.resize(static_cast<std::size_t>(std::min(got, count)));
  return out;
}

}  // namespace

Handle::Handle() {
  SDPA_CHECK_CUDNN(cudnn().cudnnCreate(&handle_));
}

Handle::~Handle() {
  if (handle_ != nullptr) cudnn().cudnnDestroy(handle_);
}

Descriptor::Descriptor(cudnnBackendDescriptorType_t type) : type_(type) {
  if (const cudnnStatus_t st = cudnn().cudnnBackendCreateDescriptor(type, &desc_);
      st != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error(fmt::format("cudnnBackendCreateDescriptor({})", descriptor_name(type)), static_cast<int>(st));
}

Descriptor::~Descriptor() {
  if (desc_ != nullptr) cudnn().cudnnBackendDestroyDescriptor(desc_);
}

Descriptor& Descriptor::operator=(Descriptor&& other) noexcept {
  if (this != &other) {
    if (desc_ != nullptr) cudnn().cudnnBackendDestroyDescriptor(desc_);
    desc_ = std::exchange(other.desc_, nullptr);
    type_ = other.type_;
  }
  return *this;
}

Descriptor& Descriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                            int64_t count, const void* values) {
  if (const cudnnStatus_t st = cudnn().cudnnBackendSetAttribute(desc_, name, type, count, values);
      st != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error(fmt::format("cudnnBackendSetAttribute({}, attribute {})", descriptor_name(type_),
                                  static_cast<int>(name)),
                      static_cast<int>(st));
  return *this;
}

Descriptor& Descriptor::set_int64(cudnnBackendAttributeName_t name, int64_t value) {
  return set(name, CUDNN_TYPE_INT64, 1, &value);
}

Descriptor& Descriptor::set_int64s(cudnnBackendAttributeName_t name,
                                   std::span<const int64_t> values) {
  return set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data());
}

Descriptor& Descriptor::set_bool(cudnnBackendAttributeName_t name, bool value) {
  return set(name, CUDNN_TYPE_BOOLEAN, 1, &value);
}

Descriptor& Descriptor::set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value) {
  return set(name, CUDNN_TYPE_DATA_TYPE, 1, &value);
}

Descriptor& Descriptor::set_handle(cudnnBackendAttributeName_t name, cudnnHandle_t handle) {
  return set(name, CUDNN_TYPE_HANDLE, 1, &handle);
}

Descriptor& Descriptor::set_descriptor(cudnnBackendAttributeName_t name, const Descriptor& value) {
  const cudnnBackendDescriptor_t raw = value.get();
  return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}

Descriptor& Descriptor::set_descriptors(cudnnBackendAttributeName_t name,
                                        std::span<const Descriptor* const> values) {
  std::vector<cudnnBackendDescriptor_t> raw;
  raw.reserve(values.size());
  for (const Descriptor* d : values) raw.push_back(d->get());
  return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()), raw.data());
}

void Descriptor::finalize() {
  if (const cudnnStatus_t st = cudnn().cudnnBackendFinalize(desc_); st != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error(fmt::format("cudnnBackendFinalize({})", descriptor_name(type_)), static_cast<int>(st));
}

cudnnStatus_t Descriptor::try_finalize(std::string& why) {
  const cudnnStatus_t st = cudnn().cudnnBackendFinalize(desc_);
  why = st == CUDNN_STATUS_SUCCESS ? std::string() : cudnn_status_text(static_cast<int>(st));
  return st;
}

int64_t Descriptor::get_int64(cudnnBackendAttributeName_t name) const {
  int64_t value = 0;
  int64_t count = 0;
  if (const cudnnStatus_t st =
          cudnn().cudnnBackendGetAttribute(desc_, name, CUDNN_TYPE_INT64, 1, &count, &value);
      st != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error(fmt::format("cudnnBackendGetAttribute({}, attribute {})", descriptor_name(type_),
                                  static_cast<int>(name)),
                      static_cast<int>(st));
  return value;
}

Descriptor& OperationGraph::keep(Descriptor d) {
  return owned_.emplace_back(std::move(d));
}

const Descriptor& OperationGraph::make_tensor(int64_t uid, cudnnDataType_t data_type,
                                              const std::vector<int64_t>& dims,
                                              const std::vector<int64_t>& strides, bool is_virtual,
                                              bool by_value) {
  Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set_data_type(CUDNN_ATTR_TENSOR_DATA_TYPE, data_type)
      .set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims)
      .set_int64s(CUDNN_ATTR_TENSOR_STRIDES, strides.empty() ? packed_strides(dims) : strides)
      .set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
      .set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, kTensorAlignment)
      .set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, is_virtual);
  if (by_value) t.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
  t.finalize();
  return keep(std::move(t));
}

const Descriptor& OperationGraph::tensor(int64_t uid, cudnnDataType_t data_type,
                                         const std::vector<int64_t>& dims,
                                         const std::vector<int64_t>& strides) {
  return make_tensor(uid, data_type, dims, strides, false, false);
}

const Descriptor& OperationGraph::virtual_tensor(cudnnDataType_t data_type,
                                                 const std::vector<int64_t>& dims,
                                                 const std::vector<int64_t>& strides) {
  return make_tensor(next_virtual_uid_++, data_type, dims, strides, true, false);
}

const Descriptor& OperationGraph::scalar(int64_t uid) {
  return make_tensor(uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
}

const Descriptor& OperationGraph::matmul(const Descriptor& a, const Descriptor& b,
                                         const Descriptor& c, const MatmulOverrides& overrides) {
  Descriptor mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  mm.set_data_type(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT).finalize();
  Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
  if (overrides.m != nullptr)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, *overrides.m);
  if (overrides.n != nullptr)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, *overrides.n);
  if (overrides.k != nullptr)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, *overrides.k);
  op.finalize();
  keep(std::move(mm));
  operations_.push_back(&keep(std::move(op)));
  return c;
}

const Descriptor& OperationGraph::pointwise(const Descriptor& pw, const Descriptor& x,
                                            const Descriptor* b, const Descriptor* t,
                                            const Descriptor& y) {
  Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  if (t != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize();
  operations_.push_back(&keep(std::move(op)));
  return y;
}

namespace {

Descriptor pointwise_mode(cudnnPointwiseMode_t mode, cudnnDataType_t precision) {
  Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
      .set_data_type(CUDNN_ATTR_POINTWISE_MATH_PREC, precision);
  return pw;
}

}  // namespace

const Descriptor& OperationGraph::unary(cudnnPointwiseMode_t mode, const Descriptor& x,
                                        const Descriptor& y) {
  Descriptor pw = pointwise_mode(mode, CUDNN_DATA_FLOAT);
  pw.finalize();
  return pointwise(keep(std::move(pw)), x, nullptr, nullptr, y);
}

const Descriptor& OperationGraph::binary(cudnnPointwiseMode_t mode, const Descriptor& x,
                                         const Descriptor& b, const Descriptor& y,
                                         cudnnDataType_t precision) {
  Descriptor pw = pointwise_mode(mode, precision);
  pw.finalize();
  return pointwise(keep(std::move(pw)), x, &b, nullptr, y);
}

const Descriptor& OperationGraph::select(const Descriptor& x, const Descriptor& b,
                                         const Descriptor& t, const Descriptor& y) {
  Descriptor pw = pointwise_mode(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT);
  pw.finalize();
  return pointwise(keep(std::move(pw)), x, &b, &t, y);
}

const Descriptor& OperationGraph::gen_index(const Descriptor& x, int64_t axis,
                                            const Descriptor& y) {
  Descriptor pw = pointwise_mode(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32);
  pw.set_int64(CUDNN_ATTR_POINTWISE_AXIS, axis).finalize();
  return pointwise(keep(std::move(pw)), x, nullptr, nullptr, y);
}

const Descriptor& OperationGraph::reduction(cudnnReduceTensorOp_t op_kind, const Descriptor& x,
                                            const Descriptor& y) {
  Descriptor red(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  red.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &op_kind)
      .set_data_type(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT)
      .finalize();
  Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
      .set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC, red)
      .finalize();
  keep(std::move(red));
  operations_.push_back(&keep(std::move(op)));
  return y;
}

const Descriptor& OperationGraph::reshape(const Descriptor& x, const Descriptor& y) {
  Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y)
      .finalize();
  operations_.push_back(&keep(std::move(op)));
  return y;
}

const Descriptor& OperationGraph::paged_cache_load(const Descriptor& container,
                                                   const Descriptor& page_table,
                                                   const Descriptor& sequence_lengths,
                                                   const Descriptor& y) {
  Descriptor op(CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, container)
      .set_descriptor(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, page_table)
      .set_descriptor(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, sequence_lengths)
      .set_descriptor(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, y)
      .finalize();
  operations_.push_back(&keep(std::move(op)));
  return y;
}

void OperationGraph::finalize(cudnnHandle_t handle) {
  graph_ = Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph_.set_handle(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle)
      .set_descriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, operations_)
      .finalize();
}

std::vector<Descriptor> heuristic_configs(const Descriptor& graph, cudnnBackendHeurMode_t mode,
                                          std::string& why) {
  Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (heur.try_finalize(why) != CUDNN_STATUS_SUCCESS) {
    why = fmt::format("heuristics mode {} refused the graph: {}", heuristic_mode_name(mode), why);
    return {};
  }
  int64_t count = 0;
  if (const cudnnStatus_t st =
          cudnn().cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr);
      st != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error("cudnnBackendGetAttribute(ENGINEHEUR, RESULTS count)", static_cast<int>(st));
  if (count == 0) {
    why = fmt::format("heuristics mode {} proposed no engine config", heuristic_mode_name(mode));
    return {};
  }
  return get_descriptors(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                         count);
}

EngineConfigInfo describe(const Descriptor& engine_config) {
  EngineConfigInfo info;
  std::vector<Descriptor> engine = get_descriptors(engine_config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                                   CUDNN_BACKEND_ENGINE_DESCRIPTOR, 1);
  if (!engine.empty()) {
    info.engine = engine[0].get_int64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
    cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT] = {};
    int64_t note_count = 0;
    if (cudnn().cudnnBackendGetAttribute(engine[0].get(), CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                         CUDNN_TYPE_BEHAVIOR_NOTE, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT,
                                         &note_count, notes) == CUDNN_STATUS_SUCCESS)
      for (int64_t i = 0; i < note_count && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; ++i)
        info.runtime_compiled |= notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  }
  for (const Descriptor& choice :
       get_descriptors(engine_config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                       CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS)) {
    cudnnBackendKnobType_t type{};
    int64_t count = 0;
    if (const cudnnStatus_t st = cudnn().cudnnBackendGetAttribute(
            choice.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &count, &type);
        st != CUDNN_STATUS_SUCCESS)
      throw_cudnn_error("cudnnBackendGetAttribute(KNOB_CHOICE, KNOB_TYPE)", static_cast<int>(st));
    info.knobs.push_back(
        Knob{static_cast<int>(type), choice.get_int64(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)});
  }
  return info;
}

std::string EngineConfigInfo::text() const {
  std::string knob_text;
  for (const Knob& k : knobs) {
    const char* name = knob_name(k.type);
    knob_text += fmt::format("{}{}={}", knob_text.empty() ? "" : ", ",
                             name != nullptr ? name : fmt::format("knob{}", k.type), k.value);
  }
  return fmt::format("engine {}, knobs {{{}}}{}", engine, knob_text,
                     runtime_compiled ? ", runtime-compiled" : "");
}

std::optional<Descriptor> make_plan(cudnnHandle_t handle, const Descriptor& engine_config,
                                    std::string& why) {
  Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  plan.set_handle(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, handle)
      .set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, engine_config);
  if (plan.try_finalize(why) != CUDNN_STATUS_SUCCESS) return std::nullopt;
  return plan;
}

int64_t plan_workspace_bytes(const Descriptor& plan) {
  return plan.get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
}

Descriptor variant_pack(const std::vector<int64_t>& uids, std::vector<void*>& pointers, void* workspace) {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set_int64s(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids)
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           static_cast<int64_t>(pointers.size()), pointers.data())
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)
      .finalize();
  return pack;
}

const char* knob_name(int knob_type) {
  // Indexed by cudnnBackendKnobType_t as of cuDNN 9.19; later knobs print as their number.
  // clang-format off
  static constexpr const char* kNames[] = {
      "split_k", "swizzle", "tile_size", "use_tex", "edge", "kblock",
      "ldga", "ldgb", "chunk_k", "split_h", "wino_tile", "multiply",
      "split_k_buf", "tilek", "stages", "reduction_mode", "cta_split_k_mode", "split_k_slc",
      "idx_mode", "sliced", "split_rs", "singlebuffer", "ldgc", "specfilt",
      "kernel_cfg", "workspace", "tile_cga", "tile_cga_m", "tile_cga_n", "block_size",
      "occupancy", "array_size_per_thread", "num_c_per_block", "split_cols", "tile_rows", "tile_cols",
      "load_size", "cta_count", "stream_k", "split_p_slc", "tile_m", "tile_n",
      "warp_spec_cfg", "swap_ab",
  };
  // clang-format on
  return knob_type >= 0 && knob_type < std::ssize(kNames) ? kNames[knob_type] : nullptr;
}

const char* heuristic_mode_name(cudnnBackendHeurMode_t mode) {
  switch (mode) {
    case CUDNN_HEUR_MODE_INSTANT:
      return "instant";
    case CUDNN_HEUR_MODE_B:
      return "B";
    case CUDNN_HEUR_MODE_FALLBACK:
      return "fallback";
    case CUDNN_HEUR_MODE_A:
      return "A";
    default:
      return "?";
  }
}

}  // namespace sdpa::cudnn_graph

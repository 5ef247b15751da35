// The cuDNN graphs' structure, op by op, against the recording stand-in for libcudnn.so.9
// (fake_cudnn/): which operations, in which order, on which tensors (uid, type, dims, strides),
// and that the variant packs bind every real tensor. Whether cuDNN's engines take the graphs and
// compute the right thing is the GPU tests' part.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/cudnn.h"
#include "backends/cudnn/cudnn_library.h"
#include "backends/cudnn/paged_kv_graph.h"
#include "backends/cudnn/sdpa_backward_graph.h"
#include "backends/cudnn/sdpa_graph.h"
#include "fake_cudnn/fake_cudnn.h"
#include "gpu/problem_shape.h"
#include "hopper_device.h"
#include "paged_kv.h"

namespace sdpa {
namespace {

namespace cg = cudnn_graph;
namespace fc = fake_cudnn;

const fc::Attribute& attribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name) {
  return fc::record(d).attributes.at(name);
}

template <typename T>
T element(const fc::Attribute& a, std::size_t i) {
  T out{};
  std::memcpy(&out, a.bytes.data() + i * sizeof(T), sizeof(T));
  return out;
}

template <typename T>
std::vector<T> values(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name) {
  const fc::Attribute& a = attribute(d, name);
  std::vector<T> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(a.count); ++i)
    out.push_back(element<T>(a, i));
  return out;
}

template <typename T>
T value(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name) {
  return element<T>(attribute(d, name), 0);
}

struct Tensor {
  int64_t uid = 0;
  cudnnDataType_t type{};
  std::vector<int64_t> dims, strides;
  bool is_virtual = false;
  bool operator<(const Tensor& other) const { return uid < other.uid; }
};

Tensor tensor(cudnnBackendDescriptor_t d) {
  return {value<int64_t>(d, CUDNN_ATTR_TENSOR_UNIQUE_ID),
          value<cudnnDataType_t>(d, CUDNN_ATTR_TENSOR_DATA_TYPE),
          values<int64_t>(d, CUDNN_ATTR_TENSOR_DIMENSIONS),
          values<int64_t>(d, CUDNN_ATTR_TENSOR_STRIDES),
          value<bool>(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL)};
}

struct Op {
  // "matmul", "reshape", "sum", "max", "paged_load", or the pointwise mode: "MUL", "EXP", ...
  std::string kind;
  std::vector<Tensor> inputs;  // a paged load's: container, page table, sequence lengths
  Tensor output;
  int64_t m_override = 0, n_override = 0, k_override = 0;  // a matmul's override tensors' uids
};

std::string pointwise_name(cudnnPointwiseMode_t mode) {
  static const std::map<cudnnPointwiseMode_t, std::string> names{
      {CUDNN_POINTWISE_ADD, "ADD"},         {CUDNN_POINTWISE_SUB, "SUB"},
      {CUDNN_POINTWISE_MUL, "MUL"},         {CUDNN_POINTWISE_DIV, "DIV"},
      {CUDNN_POINTWISE_EXP, "EXP"},         {CUDNN_POINTWISE_LOG, "LOG"},
      {CUDNN_POINTWISE_CMP_GE, "CMP_GE"},   {CUDNN_POINTWISE_BINARY_SELECT, "SELECT"},
      {CUDNN_POINTWISE_GEN_INDEX, "INDEX"}, {CUDNN_POINTWISE_IDENTITY, "IDENTITY"},
      {CUDNN_POINTWISE_CMP_LT, "CMP_LT"},   {CUDNN_POINTWISE_LOGICAL_AND, "AND"}};
  return names.contains(mode) ? names.at(mode)
                              : "pointwise " + std::to_string(static_cast<int>(mode));
}

Op operation(cudnnBackendDescriptor_t d) {
  const auto in = [&](cudnnBackendAttributeName_t name, std::vector<Tensor>& to) {
    if (fc::record(d).attributes.contains(name))
      to.push_back(tensor(value<cudnnBackendDescriptor_t>(d, name)));
  };
  const auto out = [&](cudnnBackendAttributeName_t name) {
    return tensor(value<cudnnBackendDescriptor_t>(d, name));
  };
  Op op;
  switch (fc::record(d).type) {
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: {
      op.kind = "matmul";
      in(CUDNN_ATTR_OPERATION_MATMUL_ADESC, op.inputs);
      in(CUDNN_ATTR_OPERATION_MATMUL_BDESC, op.inputs);
      op.output = out(CUDNN_ATTR_OPERATION_MATMUL_CDESC);
      const auto override_uid = [&](cudnnBackendAttributeName_t name) -> int64_t {
        return fc::record(d).attributes.contains(name) ? out(name).uid : 0;
      };
      op.m_override = override_uid(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC);
      op.n_override = override_uid(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC);
      op.k_override = override_uid(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC);
      break;
    }
    case CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR:
      op.kind = "paged_load";
      in(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, op.inputs);
      in(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, op.inputs);
      in(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, op.inputs);
      op.output = out(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC);
      break;
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
      op.kind = "reshape";
      in(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, op.inputs);
      op.output = out(CUDNN_ATTR_OPERATION_RESHAPE_YDESC);
      break;
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: {
      const auto reduce = value<cudnnBackendDescriptor_t>(d, CUDNN_ATTR_OPERATION_REDUCTION_DESC);
      const auto mode = value<cudnnReduceTensorOp_t>(reduce, CUDNN_ATTR_REDUCTION_OPERATOR);
      op.kind = mode == CUDNN_REDUCE_TENSOR_ADD   ? "sum"
                : mode == CUDNN_REDUCE_TENSOR_MAX ? "max"
                                                  : "reduce";
      in(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, op.inputs);
      op.output = out(CUDNN_ATTR_OPERATION_REDUCTION_YDESC);
      break;
    }
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: {
      const auto pw =
          value<cudnnBackendDescriptor_t>(d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR);
      op.kind = pointwise_name(value<cudnnPointwiseMode_t>(pw, CUDNN_ATTR_POINTWISE_MODE));
      in(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, op.inputs);
      in(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, op.inputs);
      in(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, op.inputs);
      op.output = out(CUDNN_ATTR_OPERATION_POINTWISE_YDESC);
      break;
    }
    default:
      op.kind = "unknown";
  }
  return op;
}

// The finalized graph's operations, in the order the graph lists them.
std::vector<Op> operations(const cg::OperationGraph& graph) {
  EXPECT_TRUE(fc::record(graph.get().get()).finalized);
  std::vector<Op> ops;
  for (const auto d :
       values<cudnnBackendDescriptor_t>(graph.get().get(), CUDNN_ATTR_OPERATIONGRAPH_OPS))
    ops.push_back(operation(d));
  return ops;
}

std::vector<std::string> kinds(const std::vector<Op>& ops) {
  std::vector<std::string> out;
  for (const Op& op : ops) out.push_back(op.kind);
  return out;
}

const Op& producer_of(const std::vector<Op>& ops, int64_t uid) {
  const auto it =
      std::find_if(ops.begin(), ops.end(), [&](const Op& op) { return op.output.uid == uid; });
  EXPECT_NE(it, ops.end()) << "nothing writes uid " << uid;
  return *it;
}

// Every virtual tensor is written once, before it is read, and read; returns the real tensors
// read and written.
void expect_well_formed(const std::vector<Op>& ops, std::set<int64_t>& reads,
                        std::set<int64_t>& writes) {
  std::set<int64_t> written, read;
  for (const Op& op : ops) {
    for (const Tensor& t : op.inputs) {
      if (t.is_virtual) {
        EXPECT_TRUE(written.contains(t.uid))
            << op.kind << " reads uid " << t.uid << " before it is written";
      }
      read.insert(t.uid);
      if (!t.is_virtual && !written.contains(t.uid)) reads.insert(t.uid);
    }
    EXPECT_TRUE(written.insert(op.output.uid).second)
        << "uid " << op.output.uid << " written twice";
    if (!op.output.is_virtual) writes.insert(op.output.uid);
  }
  for (const Op& op : ops)
    if (op.output.is_virtual) {
      EXPECT_TRUE(read.contains(op.output.uid)) << op.kind << "'s output is never read";
    }
}

// A matmul's operands agree: [.., M, K] x [.., K, N] -> [.., M, N], B's heads dividing A's.
void expect_matmuls_agree(const std::vector<Op>& ops) {
  for (const Op& op : ops) {
    if (op.kind != "matmul") continue;
    const auto &a = op.inputs.at(0).dims, &b = op.inputs.at(1).dims, &c = op.output.dims;
    EXPECT_EQ(a[3], b[2]);
    EXPECT_EQ(c[2], a[2]);
    EXPECT_EQ(c[3], b[3]);
    EXPECT_EQ(c[1], a[1]);
    EXPECT_EQ(a[1] % b[1], 0);
  }
}

Problem problem(int64_t heads, int64_t kv_heads, int64_t sq, int64_t skv, bool causal) {
  Problem p;
  p.batch = 2;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.seq_q = sq;
  p.seq_kv = skv;
  p.head_dim = 64;
  p.dtype = DType::bf16;
  p.causal = causal;
  p.pass = AttentionPass::backward;
  return p;
}

class CudnnGraphs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    const CudnnApi* api = load_cudnn(why);
    ASSERT_NE(api, nullptr) << why;
    // The real library would be read as the stand-in's records: stop first.
    ASSERT_NE(api->path.find("fake_cudnn"), std::string::npos)
        << "loaded " << api->path << ", not the stand-in";
    handle_.emplace();
  }
  std::optional<cg::Handle> handle_;
};

const std::vector<std::string> kBackwardOps{
    "MUL",     "sum",    "MUL",             // rowsum(dO ∘ O) × 1
    "matmul",  "MUL",    "SUB",     "EXP",  // P = exp(Q·Kᵀ × scale − Stats)
    "reshape", "matmul",                    // dV = Pᵀ·dO
    "matmul",  "SUB",    "MUL",     "MUL",  // dS = (dO·Vᵀ − rowsum) ∘ P × scale
    "reshape", "matmul",                    // dK = dSᵀ·Q
    "reshape", "matmul", "IDENTITY"};       // dQ = dS·K through the accumulator

TEST_F(CudnnGraphs, BackwardIsTheFusedFlashBackwardPattern) {
  const Problem p = problem(4, 4, 17, 1000, false);
  const auto graph = build_sdpa_backward_graph(p, handle_->get());
  const std::vector<Op> ops = operations(*graph);
  EXPECT_EQ(kinds(ops), kBackwardOps);
  std::set<int64_t> reads, writes;
  expect_well_formed(ops, reads, writes);
  EXPECT_EQ(reads, (std::set<int64_t>{kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale, kUidDOut,
                                      kUidOne}));
  EXPECT_EQ(writes, (std::set<int64_t>{kUidDQ, kUidDK, kUidDV, kUidRowDot, kUidDQAccum}));
  expect_matmuls_agree(ops);

  // Kᵀ and Vᵀ over [B, H, Skv, D] memory; P and dS transposed in place, in bf16, for dV and dK.
  const Tensor k_t = ops[3].inputs[1];
  EXPECT_EQ(k_t.uid, kUidK);
  EXPECT_EQ(k_t.dims, (std::vector<int64_t>{2, 4, 64, 1000}));
  EXPECT_EQ(k_t.strides, (std::vector<int64_t>{4 * 1000 * 64, 1000 * 64, 1, 64}));
  EXPECT_EQ(ops[9].inputs[1].uid, kUidV);
  EXPECT_EQ(ops[9].inputs[1].strides, k_t.strides);
  for (const int i : {7, 13}) {
    EXPECT_EQ(ops[i].output.type, CUDNN_DATA_BFLOAT16);
    EXPECT_EQ(ops[i].output.dims, (std::vector<int64_t>{2, 4, 1000, 17}));
    EXPECT_EQ(ops[i].output.strides, (std::vector<int64_t>{4 * 17 * 1000, 17 * 1000, 1, 1000}));
  }
  // K reshaped back from Kᵀ for dQ; dQ accumulated in fp32, then cast.
  EXPECT_EQ(ops[15].inputs[0].uid, kUidK);
  EXPECT_EQ(ops[15].output.strides, (std::vector<int64_t>{4 * 1000 * 64, 1000 * 64, 64, 1}));
  const Tensor accum = producer_of(ops, kUidDQAccum).output;
  EXPECT_EQ(accum.type, CUDNN_DATA_FLOAT);
  EXPECT_EQ(accum.dims, (std::vector<int64_t>{2, 4, 17, 64}));
  EXPECT_EQ(producer_of(ops, kUidDQ).inputs.at(0).uid, kUidDQAccum);
  EXPECT_EQ(producer_of(ops, kUidRowDot).output.dims, (std::vector<int64_t>{2, 4, 17, 1}));
  // The statistics are subtracted from the scaled scores; the row sum from dP.
  EXPECT_EQ(ops[5].inputs[1].uid, kUidStats);
  EXPECT_EQ(ops[10].inputs[1].uid, kUidRowDot);
}

TEST_F(CudnnGraphs, BackwardMasksAfterTheStatisticsWhenCausal) {
  const auto graph = build_sdpa_backward_graph(problem(4, 4, 127, 64, true), handle_->get());
  const std::vector<Op> ops = operations(*graph);
  std::vector<std::string> want = kBackwardOps;
  want.insert(want.begin() + 6, {"INDEX", "INDEX", "CMP_GE", "SELECT"});
  EXPECT_EQ(kinds(ops), want);
  EXPECT_EQ(ops[9].inputs[1].uid, kUidNegInf);
  EXPECT_EQ(ops[9].inputs[0].uid, ops[5].output.uid);  // the shifted scores
  std::set<int64_t> reads, writes;
  expect_well_formed(ops, reads, writes);
  EXPECT_TRUE(reads.contains(kUidNegInf));
}

TEST_F(CudnnGraphs, BackwardSumsGroupedHeadsIntoTheirKeyValueHead) {
  const auto graph = build_sdpa_backward_graph(problem(8, 2, 1000, 17, false), handle_->get());
  const std::vector<Op> ops = operations(*graph);
  std::set<int64_t> reads, writes;
  expect_well_formed(ops, reads, writes);
  expect_matmuls_agree(ops);
  for (const int64_t uid : {kUidDK, kUidDV}) {
    const Op& sum = producer_of(ops, uid);
    EXPECT_EQ(sum.kind, "sum");
    EXPECT_EQ(sum.output.dims, (std::vector<int64_t>{2, 2, 17, 64}));
    EXPECT_EQ(sum.inputs.at(0).dims, (std::vector<int64_t>{2, 8, 17, 64}));
    EXPECT_EQ(sum.inputs.at(0).type, CUDNN_DATA_BFLOAT16);
  }
  const std::vector<std::string> names = kinds(ops);
  EXPECT_EQ(std::count(names.begin(), names.end(), "sum"), 3);  // rowsum(dO ∘ O), dV's and dK's
}

// Every real tensor of a graph, and nothing else, is in its variant pack.
std::set<int64_t> real_uids(const std::vector<Op>& ops) {
  std::set<int64_t> uids;
  for (const Op& op : ops) {
    for (const Tensor& t : op.inputs)
      if (!t.is_virtual) uids.insert(t.uid);
    if (!op.output.is_virtual) uids.insert(op.output.uid);
  }
  return uids;
}

std::set<int64_t> packed_uids(const cg::Descriptor& pack) {
  const std::vector<int64_t> uids = values<int64_t>(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
  EXPECT_EQ(values<void*>(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS).size(), uids.size());
  return {uids.begin(), uids.end()};
}

TEST_F(CudnnGraphs, VariantPacksBindEveryRealTensor) {
  char memory[16] = {};
  const AttentionTensors t{memory, memory + 1, memory + 2, memory + 3};
  const GradientTensors g{memory + 4, memory + 5, memory + 6, memory + 7};
  for (const bool causal : {false, true}) {
    const Problem p = problem(8, 2, 127, 64, causal);
    const auto backward = build_sdpa_backward_graph(p, handle_->get());
    EXPECT_EQ(
        packed_uids(sdpa_backward_variant_pack(t, g, causal, {memory, memory, memory, memory}, {})),
        real_uids(operations(*backward)));
    const auto forward = build_sdpa_graph(p, handle_->get());
    EXPECT_EQ(packed_uids(sdpa_variant_pack(t, causal, {memory, memory, {}}, {})),
              real_uids(operations(*forward)));
  }
}

// The backward reads the statistics every forward writes, inference or not.
TEST_F(CudnnGraphs, ForwardWritesTheStatistics) {
  const auto graph = build_sdpa_graph(problem(4, 4, 17, 17, true), handle_->get());
  const std::vector<Op> ops = operations(*graph);
  std::set<int64_t> reads, writes;
  expect_well_formed(ops, reads, writes);
  EXPECT_EQ(writes, (std::set<int64_t>{kUidO, kUidStats}));
  EXPECT_EQ(producer_of(ops, kUidStats).output.type, CUDNN_DATA_FLOAT);
}

TEST(CudnnBackward, RegistryHasItAndCountsItsBuffers) {
  const BackendEntry& cudnn = cudnn_backend_entry();
  EXPECT_TRUE(cudnn.has_backward());
  const Problem backward = problem(16, 16, 4096, 4096, true);
  Problem forward = backward;
  forward.pass = AttentionPass::forward;
  // rowsum(dO ∘ O) and the fp32 dQ accumulator, one row per query of each head.
  const std::size_t rows = 2 * 16 * 4096;
  EXPECT_EQ(cudnn.workspace_bytes(backward) - cudnn.workspace_bytes(forward),
            rows * sizeof(float) + rows * 64 * sizeof(float));
}

TEST(CudnnBackward, DeclinesWhatCudnnsBackwardRefuses) {
  EXPECT_TRUE(sdpa_backward_unsupported(problem(2, 2, 1, 1, false), 91900).has_value());
  EXPECT_TRUE(sdpa_backward_unsupported(problem(2, 2, 17, 17, true), 91001).has_value());
  EXPECT_FALSE(sdpa_backward_unsupported(problem(2, 2, 1, 17, true), 91900).has_value());
  EXPECT_TRUE(dq_accum_needs_zeroing(90500));
  EXPECT_FALSE(dq_accum_needs_zeroing(91400));
}

// A decode shape of the paged preset's kind, with Skv not a multiple of the page size: 1000 keys
// in 63 pages of 16, the last holding 8.
Problem paged_problem(bool causal) {
  Problem p = problem(32, 8, 1, 1000, causal);
  p.batch = 3;
  p.head_dim = 128;
  p.page_size = 16;
  p.pass = AttentionPass::forward;
  return p;
}

const std::vector<std::string> kPagedForwardOps{
    "paged_load", "matmul",     "MUL",  // Kᵀ from the K pool; Q·Kᵀ × scale
    "INDEX",      "INDEX",      "CMP_LT", "CMP_LT", "AND", "SELECT",  // the padding mask
    "max",        "SUB",        "EXP",    "sum",    "LOG", "ADD",     // softmax and its statistics
    "DIV",        "paged_load", "matmul"};                            // P; V from the V pool; P·V

TEST_F(CudnnGraphs, PagedForwardLoadsKAndVThroughTheBlockTable) {
  const Problem p = paged_problem(false);
  const auto graph = build_sdpa_graph(p, handle_->get());
  const std::vector<Op> ops = operations(*graph);
  EXPECT_EQ(kinds(ops), kPagedForwardOps);
  std::set<int64_t> reads, writes;
  expect_well_formed(ops, reads, writes);
  EXPECT_EQ(reads, (std::set<int64_t>{kUidQ, kUidKPool, kUidVPool, kUidBlockTable, kUidSeqLenQ,
                                      kUidSeqLenKv, kUidScale, kUidNegInf}));
  EXPECT_EQ(writes, (std::set<int64_t>{kUidO, kUidStats}));
  expect_matmuls_agree(ops);

  // The pools are our pages as they lie: [B*P pages, Hkv, page_size, D], kernels/paged_kv.h's
  // strides.
  const PagedKvLayout l = paged_kv_layout(attention_shape(p), p.page_size);
  ASSERT_EQ(l.pages_per_sequence, 63);  // ceil(1000 / 16): the table covers the partial last page
  const Op& load_k = ops[0];
  const Op& load_v = ops[16];
  for (const auto& [load, pool] : {std::pair{&load_k, kUidKPool}, std::pair{&load_v, kUidVPool}}) {
    ASSERT_EQ(load->inputs.size(), 3u);
    const Tensor& container = load->inputs[0];
    EXPECT_EQ(container.uid, pool);
    EXPECT_FALSE(container.is_virtual);
    EXPECT_EQ(container.type, CUDNN_DATA_BFLOAT16);
    EXPECT_EQ(container.dims, (std::vector<int64_t>{3 * 63, 8, 16, 128}));
    EXPECT_EQ(container.strides,
              (std::vector<int64_t>{l.page_stride, l.head_stride, l.row_stride, 1}));
    EXPECT_EQ(container.strides, (std::vector<int64_t>{8 * 16 * 128, 16 * 128, 128, 1}));
    // One int32 table [B, P] for both, seen as [B, 1, P, 1]; pages counted per sequence.
    const Tensor& table = load->inputs[1];
    EXPECT_EQ(table.uid, kUidBlockTable);
    EXPECT_EQ(table.type, CUDNN_DATA_INT32);
    EXPECT_EQ(table.dims, (std::vector<int64_t>{3, 1, 63, 1}));
    EXPECT_EQ(table.strides, (std::vector<int64_t>{63, 63, 1, 1}));
    const Tensor& lengths = load->inputs[2];
    EXPECT_EQ(lengths.uid, kUidSeqLenKv);
    EXPECT_EQ(lengths.type, CUDNN_DATA_INT32);
    EXPECT_EQ(lengths.dims, (std::vector<int64_t>{3, 1, 1, 1}));
    EXPECT_TRUE(load->output.is_virtual);
    EXPECT_EQ(load->output.type, CUDNN_DATA_BFLOAT16);
  }
  // Kᵀ [B, Hkv, D, Skv] over [B, Hkv, Skv, D] (stride[2] == 1 is how cuDNN tells it from V), V
  // packed.
  EXPECT_EQ(load_k.output.dims, (std::vector<int64_t>{3, 8, 128, 1000}));
  EXPECT_EQ(load_k.output.strides, (std::vector<int64_t>{8 * 128 * 1000, 128 * 1000, 1, 128}));
  EXPECT_EQ(load_v.output.dims, (std::vector<int64_t>{3, 8, 1000, 128}));
  EXPECT_EQ(load_v.output.strides, (std::vector<int64_t>{8 * 1000 * 128, 1000 * 128, 128, 1}));

  // The matmuls read the loads and take their sizes per sequence: Q·Kᵀ M and N, P·V M and K.
  const Op& scores = ops[1];
  EXPECT_EQ(scores.inputs.at(1).uid, load_k.output.uid);
  EXPECT_EQ(scores.inputs.at(0).uid, kUidQ);
  EXPECT_EQ(scores.m_override, kUidSeqLenQ);
  EXPECT_EQ(scores.n_override, kUidSeqLenKv);
  EXPECT_EQ(scores.k_override, 0);
  const Op& output = ops[17];
  EXPECT_EQ(output.inputs.at(1).uid, load_v.output.uid);
  EXPECT_EQ(output.output.uid, kUidO);
  EXPECT_EQ(output.m_override, kUidSeqLenQ);
  EXPECT_EQ(output.n_override, 0);
  EXPECT_EQ(output.k_override, kUidSeqLenKv);

  // Padding: row < seq_len_q and column < seq_len_kv, else −inf, on the scaled scores.
  EXPECT_EQ(ops[5].inputs.at(1).uid, kUidSeqLenQ);
  EXPECT_EQ(ops[6].inputs.at(1).uid, kUidSeqLenKv);
  EXPECT_EQ(ops[8].inputs.at(0).uid, ops[2].output.uid);
  EXPECT_EQ(ops[8].inputs.at(1).uid, kUidNegInf);
  EXPECT_EQ(ops[8].inputs.at(2).uid, ops[7].output.uid);
  EXPECT_EQ(ops[9].inputs.at(0).uid, ops[8].output.uid);  // the softmax reads the masked scores
}

TEST_F(CudnnGraphs, PagedCausalMasksThePaddingFirst) {
  const auto graph = build_sdpa_graph(paged_problem(true), handle_->get());
  const std::vector<Op> ops = operations(*graph);
  std::vector<std::string> want = kPagedForwardOps;
  want.insert(want.begin() + 9, {"INDEX", "INDEX", "CMP_GE", "SELECT"});
  EXPECT_EQ(kinds(ops), want);
  EXPECT_EQ(ops[12].inputs.at(0).uid, ops[8].output.uid);  // causal over the padded scores
  EXPECT_EQ(ops[12].inputs.at(1).uid, kUidNegInf);
  std::set<int64_t> reads, writes;
  expect_well_formed(ops, reads, writes);
  EXPECT_FALSE(reads.contains(kUidK));
  EXPECT_FALSE(reads.contains(kUidV));
}

TEST_F(CudnnGraphs, PagedVariantPackBindsThePoolsTableAndLengths) {
  char memory[16] = {};
  const int32_t* table = reinterpret_cast<const int32_t*>(memory + 8);
  const PagedKv pages{{}, memory + 6, memory + 7, table};
  const int32_t lengths[2] = {};
  const AttentionTensors t{memory, nullptr, nullptr, memory + 3, &pages};
  for (const bool causal : {false, true}) {
    const auto graph = build_sdpa_graph(paged_problem(causal), handle_->get());
    const cg::Descriptor pack =
        sdpa_variant_pack(t, causal, {memory + 4, memory + 5, {lengths, lengths + 1}}, {});
    EXPECT_EQ(packed_uids(pack), real_uids(operations(*graph)));
    const std::vector<int64_t> uids =
        values<int64_t>(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    const std::vector<void*> pointers =
        values<void*>(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    std::map<int64_t, const void*> bound;
    for (std::size_t i = 0; i < uids.size(); ++i) bound[uids[i]] = pointers.at(i);
    EXPECT_EQ(bound.at(kUidKPool), pages.k_pool);
    EXPECT_EQ(bound.at(kUidVPool), pages.v_pool);
    EXPECT_EQ(bound.at(kUidBlockTable), table);
    EXPECT_EQ(bound.at(kUidSeqLenQ), lengths);
    EXPECT_EQ(bound.at(kUidSeqLenKv), lengths + 1);
    EXPECT_EQ(bound.at(kUidStats), memory + 4);
    EXPECT_EQ(values<void*>(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE).at(0), memory + 5);
  }
}

TEST(CudnnPagedKv, VersionGateNamesTheVersions) {
  EXPECT_EQ(cudnn_version_text(91400), "9.14.0");
  EXPECT_EQ(cudnn_version_text(90402), "9.4.2");
  Problem p = paged_problem(false);
  EXPECT_EQ(paged_kv_cudnn_unsupported(p, 90402),
            "paged K/V needs cuDNN 9.5.0 or newer, loaded 9.4.2");
  EXPECT_EQ(paged_kv_cudnn_unsupported(p, 90500), std::nullopt);
  EXPECT_EQ(paged_kv_cudnn_unsupported(p, 91900), std::nullopt);
  p.head_dim = 256;
  EXPECT_EQ(paged_kv_cudnn_unsupported(p, 90900),
            "paged K/V at head dim 256 (above 128) needs cuDNN 9.10.0 or newer, loaded 9.9.0");
  EXPECT_EQ(paged_kv_cudnn_unsupported(p, 91000), std::nullopt);
  p.pass = AttentionPass::forward_backward;
  EXPECT_TRUE(paged_kv_cudnn_unsupported(p, 91900).has_value());
  Problem contiguous = problem(4, 4, 17, 17, false);
  contiguous.pass = AttentionPass::forward;
  EXPECT_EQ(paged_kv_cudnn_unsupported(contiguous, 90000), std::nullopt);
}

TEST_F(CudnnGraphs, RegistryRunsPagesAndCountsTheLengths) {
  const BackendEntry& cudnn = cudnn_backend_entry();
  EXPECT_TRUE(cudnn.reads_paged_kv);
  const DeviceInfo h200 = test::hopper_device();
  const Problem paged = paged_problem(false);
  EXPECT_EQ(cannot_run(cudnn, paged, h200), std::nullopt);  // the stand-in says 9.19.0
  Problem contiguous = paged;
  contiguous.page_size = 0;
  EXPECT_EQ(cudnn.workspace_bytes(paged) - cudnn.workspace_bytes(contiguous),
            2 * 3 * sizeof(int32_t));
  Problem backward = paged;
  backward.pass = AttentionPass::backward;
  EXPECT_TRUE(cannot_run(cudnn, backward, h200).has_value());
}

}  // namespace
}  // namespace sdpa

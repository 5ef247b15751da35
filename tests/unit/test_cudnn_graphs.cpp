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
#include "backends/cudnn/sdpa_backward_graph.h"
#include "backends/cudnn/sdpa_graph.h"
#include "fake_cudnn/fake_cudnn.h"

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
  std::string kind;  // "matmul", "reshape", "sum", "max", or the pointwise mode: "MUL", "EXP", ...
  std::vector<Tensor> inputs;
  Tensor output;
};

std::string pointwise_name(cudnnPointwiseMode_t mode) {
  static const std::map<cudnnPointwiseMode_t, std::string> names{
      {CUDNN_POINTWISE_ADD, "ADD"},         {CUDNN_POINTWISE_SUB, "SUB"},
      {CUDNN_POINTWISE_MUL, "MUL"},         {CUDNN_POINTWISE_DIV, "DIV"},
      {CUDNN_POINTWISE_EXP, "EXP"},         {CUDNN_POINTWISE_LOG, "LOG"},
      {CUDNN_POINTWISE_CMP_GE, "CMP_GE"},   {CUDNN_POINTWISE_BINARY_SELECT, "SELECT"},
      {CUDNN_POINTWISE_GEN_INDEX, "INDEX"}, {CUDNN_POINTWISE_IDENTITY, "IDENTITY"}};
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
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
      op.kind = "matmul";
      in(CUDNN_ATTR_OPERATION_MATMUL_ADESC, op.inputs);
      in(CUDNN_ATTR_OPERATION_MATMUL_BDESC, op.inputs);
      op.output = out(CUDNN_ATTR_OPERATION_MATMUL_CDESC);
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
    EXPECT_EQ(packed_uids(sdpa_variant_pack(t, causal, memory, {}, memory)),
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

}  // namespace
}  // namespace sdpa

// MatMulBnb4 (com.microsoft): MatMul by a bitsandbytes-style 4-bit weight (onnxruntime's
// MatMulBnb4Quantizer writes it). W [N, K], flattened, is cut into blocks of block_size;
// each element is a 4-bit code into a 16-value table (FP4 or NF4), times its block's absmax.
// The lowering keeps the codes: a Gather on the constant table, Mul by absmax, MatMul.
//   Given:   %y = MatMulBnb4<K=64, N=32, block_size=64, quant_type=1>(%a, uint8[1024] %b, float[32] %absmax)
//   Result:  %v = Gather(float[16] nf4, Cast<to=int32>(uint4[32, 64] codes))   (uint8 below opset 21)
//            %w = Reshape(Mul(%v, Reshape(%absmax, [32, 1])), [32, 64])        (Slice first when padded)
//            %y = MatMul(%a, Transpose(%w))
// The products are onnxruntime's (the table's float times absmax), so the weight is exact.
// dequantize=true: the float weight W^T [K, N] computed by the pass.
// Refused: transB=0 (onnxruntime's kernel multiplies by W^T whatever transB says), quant_type
// other than 0 (FP4) or 1 (NF4), block sizes onnxruntime's kernel lacks, a weight that is not
// a constant, a non-float A.
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/tensor.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {
namespace {

using T = onnx::TensorProto;

// The code tables of onnxruntime's blockwise_quant_block_bnb4.h (bitsandbytes' values).
constexpr std::array<float, 16> kFp4 = {0.00000000f,  5.208333333e-03f,  0.66666667f,  1.00000000f,
                                        0.33333333f,  0.50000000f,       0.16666667f,  0.25000000f,
                                        -0.00000000f, -5.208333333e-03f, -0.66666667f, -1.00000000f,
                                        -0.33333333f, -0.50000000f,      -0.16666667f, -0.25000000f};
constexpr std::array<float, 16> kNf4 = {-1.0f,
                                        -0.6961928009986877f,
                                        -0.5250730514526367f,
                                        -0.39491748809814453f,
                                        -0.28444138169288635f,
                                        -0.18477343022823334f,
                                        -0.09105003625154495f,
                                        0.0f,
                                        0.07958029955625534f,
                                        0.16093020141124725f,
                                        0.24611230194568634f,
                                        0.33791524171829224f,
                                        0.44070982933044434f,
                                        0.5626170039176941f,
                                        0.7229568362236023f,
                                        1.0f};

struct Bnb4Plan {
  int64_t n, k, block, blocks;
  std::vector<uint8_t> codes;  // one a weight element, [blocks * block] (0 past N * K)
  const std::array<float, 16>* table;
  std::vector<double> absmax;  // dequantize=true
};

class MatMulBnb4Rule : public NodeRule<Bnb4Plan> {
 public:
  explicit MatMulBnb4Rule(bool dequantize)
      : NodeRule("lower-matmul-bnb4", "MatMulBnb4", kMsDomain), dequantize_(dequantize) {}

 protected:
  Verdict<Bnb4Plan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1) || !node->input(2)) return Refuse("lacks A, B or absmax");
    if (IntAttr(*node, "transB", 1) != 1)
      return Refuse("transB=0 is not lowered (onnxruntime's kernel multiplies by W^T regardless)");
    const int64_t quant_type = IntAttr(*node, "quant_type", -1);
    if (quant_type != 0 && quant_type != 1)
      return Refuse(absl::StrCat("quant_type=", quant_type, " is not FP4 or NF4"));
    Bnb4Plan plan{IntAttr(*node, "N", 0),
                  IntAttr(*node, "K", 0),
                  IntAttr(*node, "block_size", 0),
                  0,
                  {},
                  quant_type == 0 ? &kFp4 : &kNf4,
                  {}};
    if (plan.n <= 0 || plan.k <= 0) return Refuse("N or K missing or invalid");
    if (plan.block < 16 || plan.block > 256 || (plan.block & (plan.block - 1)) != 0)
      return Refuse(absl::StrCat("block_size=", plan.block, " (onnxruntime's kernel has 16, 32, 64, 128, 256)"));
    const int32_t type = ElemTypeOfAny(*node, {0, 2}, {0}, facts.Get<TypeFacts>());
    if (type != T::FLOAT) return Refuse(absl::StrCat("A is ", TypeName(type), " (onnxruntime's kernel: float)"));
    const int64_t numel = plan.n * plan.k;
    plan.blocks = (numel + plan.block - 1) / plan.block;
    std::optional<ConstantData> b = GetConstant(node->input(1));
    if (!b) return Refuse("B is not a constant");
    if (b->data_type != T::UINT8 || static_cast<int64_t>(b->raw.size()) != (numel + 1) / 2)
      return Refuse("B is not uint8 [(N * K + 1) / 2]");
    plan.codes.assign(plan.blocks * plan.block, 0);
    for (int64_t i = 0; i < numel; ++i) {  // the high nibble first
      const auto byte = static_cast<uint8_t>(b->raw[i / 2]);
      plan.codes[i] = i % 2 == 0 ? byte >> 4 : byte & 0xF;
    }
    if (dequantize_) {
      std::optional<ConstantData> m = GetConstant(node->input(2));
      std::optional<std::vector<double>> values = m ? m->AsDoubles() : std::nullopt;
      if (!values || static_cast<int64_t>(values->size()) != plan.blocks)
        return Refuse("dequantize=true needs constant absmax of ceil(N * K / block_size) elements");
      plan.absmax = std::move(*values);
    }
    return plan;
  }

  Status Replace(Node* node, Bnb4Plan plan, Rewriter& rw) const override {
    if (dequantize_) return ReplaceWithFloatWeight(node, plan, rw);
    // The codes as uint4 (two a byte, the low nibble first) at opset 21, else one a byte.
    const bool uint4 = node->graph()->OpsetVersion("") >= 21;
    onnx::TensorProto meta;
    meta.set_data_type(uint4 ? T::UINT4 : T::UINT8);
    meta.add_dims(plan.blocks);
    meta.add_dims(plan.block);
    std::string bytes;
    if (uint4) {
      bytes.assign((plan.codes.size() + 1) / 2, '\0');
      for (size_t i = 0; i < plan.codes.size(); ++i)
        bytes[i / 2] = static_cast<char>(static_cast<uint8_t>(bytes[i / 2]) | (plan.codes[i] << (4 * (i % 2))));
    } else {
      bytes.assign(plan.codes.begin(), plan.codes.end());
    }
    Tensor codes_tensor(std::move(meta));
    codes_tensor.SetRawBytes(std::move(bytes));
    OS_ASSIGN_OR_RETURN(Value * codes, rw.Constant(std::move(codes_tensor), "codes"));
    OS_ASSIGN_OR_RETURN(Tensor table_tensor,
                        Tensor::FromDoubles(T::FLOAT, {16}, {plan.table->begin(), plan.table->end()}));
    OS_ASSIGN_OR_RETURN(Value * table, rw.Constant(std::move(table_tensor), "code_table"));
    Value* v = rw.Op("Gather", {table, rw.Op("Cast", {codes}, {Rewriter::AttrInt("to", T::INT32)})});
    Value* w = rw.Op("Mul", {v, rw.Op("Reshape", {node->input(2), rw.Int64s({plan.blocks, 1})})});
    if (plan.blocks * plan.block != plan.n * plan.k) {
      w = rw.Op("Reshape", {w, rw.Int64s({plan.blocks * plan.block})});
      w = rw.Op("Slice", {w, rw.Int64s({0}), rw.Int64s({plan.n * plan.k}), rw.Int64s({0})});
    }
    w = rw.Op("Reshape", {w, rw.Int64s({plan.n, plan.k})});
    Value* y = rw.Op("MatMul", {node->input(0), rw.Op("Transpose", {w}, {Rewriter::AttrInts("perm", {1, 0})})});
    return rw.ReplaceNode(node, {y});
  }

 private:
  // dequantize=true: W^T [K, N], each element the table's float times its block's absmax.
  static Status ReplaceWithFloatWeight(Node* node, const Bnb4Plan& plan, Rewriter& rw) {
    std::vector<double> w(plan.k * plan.n);
    for (int64_t n = 0; n < plan.n; ++n) {
      for (int64_t k = 0; k < plan.k; ++k) {
        const int64_t i = n * plan.k + k;
        w[k * plan.n + n] = (*plan.table)[plan.codes[i]] * static_cast<float>(plan.absmax[i / plan.block]);
      }
    }
    OS_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromDoubles(T::FLOAT, {plan.k, plan.n}, w));
    OS_ASSIGN_OR_RETURN(Value * weight, rw.Constant(std::move(tensor), "weight"));
    return rw.ReplaceNode(node, {rw.Op("MatMul", {node->input(0), weight})});
  }

  bool dequantize_;
};

}  // namespace

std::vector<ContribRule> MakeMatMulBnb4Rules(bool dequantize) {
  std::vector<ContribRule> rules;
  rules.push_back({"MatMulBnb4", std::make_unique<MatMulBnb4Rule>(dequantize)});
  return rules;
}

}  // namespace onnxsurgeon::contrib

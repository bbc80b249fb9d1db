// GatherBlockQuantized (com.microsoft): Gather over block-quantized data (onnxruntime's
// int4 quantizer writes it for embedding tables). The quantization is kept: a blocked
// DequantizeLinear of the table (opset >= 21), then Gather.
//   Given:   %y = GatherBlockQuantized<gather_axis=0, quantize_axis=1, block_size=32>(
//                   int4[V, D] %q, %ids, float[V, D/32] %s[, int4[V, D/32] %zp])
//   Result:  %y = Gather<axis=0>(DequantizeLinear<axis=1, block_size=32>(%q, %s[, %zp]), %ids)
// uint8 data (MatMulNBits' convention, gather_axis 0 and quantize_axis last): bits=4 is two
// values a byte, the low nibble first, repacked as uint4 [..., 2 * last] (same bytes), its
// zero points per row likewise, default 8; bits=8 is uint8 as is, default zero point 128.
// dequantize=true: a float table (the pass dequantizes it, at any opset), then Gather.
// onnxruntime's kernel writes zeros for an out-of-range index where Gather fails: the two
// differ only on indices outside the table.
// Refused: opset < 21 without dequantize=true, bits=2, float8/float4 data, uint8 data with
// another gather/quantize axis (onnxruntime refuses it too), data or scales of unknown rank,
// a uint8 bits=4 table or its zero points that are not constants.
#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/tensor.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {
namespace {

using T = onnx::TensorProto;

struct GatherBlockPlan {
  int64_t gather_axis, quantize_axis, block;
  int32_t type;                      // the scales' (and the output's) element type
  std::optional<Tensor> data;        // the table as DequantizeLinear reads it, when not input 0
  std::optional<Tensor> zero_point;  // likewise for the zero points (none: input 3, or absent)
  std::optional<Tensor> table;       // dequantize=true: the float table
};

// A uint4 tensor of `dims` holding `bytes` (two values a byte, the low nibble first).
Tensor Uint4(const std::vector<int64_t>& dims, std::string bytes) {
  onnx::TensorProto meta;
  meta.set_data_type(T::UINT4);
  for (int64_t d : dims) meta.add_dims(d);
  Tensor t(std::move(meta));
  t.SetRawBytes(std::move(bytes));
  return t;
}

// Rows of `row_bytes` packed 4-bit values (`per_row` of them, each row padded to a byte)
// repacked across rows, as uint4 [rows, per_row] stores them.
std::string RepackNibbleRows(std::string_view raw, int64_t rows, int64_t per_row) {
  const int64_t row_bytes = (per_row + 1) / 2;
  std::string out((rows * per_row + 1) / 2, '\0');
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < per_row; ++i) {
      const int nibble = (static_cast<uint8_t>(raw[r * row_bytes + i / 2]) >> (4 * (i % 2))) & 0xF;
      const int64_t at = r * per_row + i;
      out[at / 2] = static_cast<char>(static_cast<uint8_t>(out[at / 2]) | (nibble << (4 * (at % 2))));
    }
  }
  return out;
}

int64_t Product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= dims[i];
  return n;
}

class GatherBlockQuantizedRule : public NodeRule<GatherBlockPlan> {
 public:
  explicit GatherBlockQuantizedRule(bool dequantize)
      : NodeRule("lower-gather-block-quantized", "GatherBlockQuantized", kMsDomain), dequantize_(dequantize) {}

 protected:
  Verdict<GatherBlockPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1) || !node->input(2)) return Refuse("lacks data, indices or scales");
    if (!dequantize_ && node->graph()->OpsetVersion("") < 21)
      return Refuse("opset < 21: blocked DequantizeLinear needs opset 21 (dequantize=true: float table)");
    const TypeFacts& types = facts.Get<TypeFacts>();
    const int32_t data_type = types.ElemType(node->input(0));
    const int64_t bits = IntAttr(*node, "bits", 4);
    if (data_type != T::INT4 && data_type != T::UINT4 && data_type != T::UINT8)
      return Refuse(absl::StrCat("data of ", TypeName(data_type), " is not lowered (int4, uint4, uint8)"));
    if (data_type == T::UINT8 ? bits != 4 && bits != 8 : bits != 4)
      return Refuse(absl::StrCat("bits=", bits, " is not lowered"));
    GatherBlockPlan plan{IntAttr(*node, "gather_axis", 0),
                         IntAttr(*node, "quantize_axis", 1),
                         IntAttr(*node, "block_size", 128),
                         ElemTypeOfAny(*node, {2}, {0}, types),
                         {},
                         {},
                         {}};
    if (!lowering::IsFloatType(plan.type)) return Refuse(absl::StrCat("scales are ", TypeName(plan.type)));
    if (plan.block < 16 || (plan.block & (plan.block - 1)) != 0)
      return Refuse("block_size is not a power of 2 of at least 16 (onnxruntime refuses it)");
    const int64_t rank = types.Rank(node->input(0));
    if (rank < 1 || types.Rank(node->input(2)) != rank) return Refuse("data or scales of unknown or different rank");
    if (plan.gather_axis < 0) plan.gather_axis += rank;
    if (plan.quantize_axis < 0) plan.quantize_axis += rank;
    if (plan.gather_axis < 0 || plan.gather_axis >= rank || plan.quantize_axis < 0 || plan.quantize_axis >= rank)
      return Refuse("gather_axis or quantize_axis out of range");
    if (data_type == T::UINT8 && (plan.gather_axis != 0 || plan.quantize_axis != rank - 1))
      return Refuse("uint8 data needs gather_axis 0 and quantize_axis last (onnxruntime refuses it otherwise)");
    if (std::string why = data_type == T::UINT8 ? PlanUint8(node, bits, types, plan) : ""; !why.empty())
      return Refuse(why);
    if (std::string why = dequantize_ ? PlanTable(node, data_type, bits, plan) : ""; !why.empty()) return Refuse(why);
    return plan;
  }

  Status Replace(Node* node, GatherBlockPlan plan, Rewriter& rw) const override {
    Value* table;
    if (plan.table) {
      OS_ASSIGN_OR_RETURN(table, rw.Constant(std::move(*plan.table), "table"));
    } else {
      Value* data = node->input(0);
      if (plan.data) {
        OS_ASSIGN_OR_RETURN(data, rw.Constant(std::move(*plan.data), "data"));
      }
      std::vector<Value*> inputs = {data, node->input(2)};
      if (plan.zero_point) {
        OS_ASSIGN_OR_RETURN(Value * zp, rw.Constant(std::move(*plan.zero_point), "zero_point"));
        inputs.push_back(zp);
      } else if (Value* zp = node->input(3)) {
        inputs.push_back(zp);
      }
      table = rw.Op("DequantizeLinear", inputs,
                    {Rewriter::AttrInt("axis", plan.quantize_axis), Rewriter::AttrInt("block_size", plan.block)});
    }
    Value* y = rw.Op("Gather", {table, node->input(1)}, {Rewriter::AttrInt("axis", plan.gather_axis)});
    return rw.ReplaceNode(node, {y});
  }

 private:
  // The Plan* helpers return why they refuse, empty when planned.
  // uint8 data: bits=4 repacked as uint4 [..., 2 * last] (the same bytes), its zero points
  // per row as uint4 [..., blocks] (default 8); bits=8 keeps the table, default zero point 128.
  static std::string PlanUint8(Node* node, int64_t bits, const TypeFacts& types, GatherBlockPlan& plan) {
    std::optional<std::vector<int64_t>> scale_dims = types.Dims(node->input(2));
    if (!scale_dims || std::any_of(scale_dims->begin(), scale_dims->end(), [](int64_t d) { return d < 0; }))
      return "scales of unknown shape";
    const int64_t blocks = scale_dims->back();
    const int64_t rows = Product(*scale_dims, 0, scale_dims->size() - 1);
    if (bits == 8) {
      if (!node->input(3)) {
        onnx::TensorProto meta;
        meta.set_data_type(T::UINT8);
        for (int64_t d : *scale_dims) meta.add_dims(d);
        plan.zero_point.emplace(std::move(meta));
        plan.zero_point->SetRawBytes(std::string(rows * blocks, static_cast<char>(128)));
      }
      return {};
    }
    std::optional<ConstantData> data = GetConstant(node->input(0));
    if (!data) return "uint8 bits=4 data is not a constant (repacked as uint4)";
    std::vector<int64_t> dims = data->dims;
    dims.back() *= 2;
    if ((dims.back() + plan.block - 1) / plan.block != blocks) return "scales do not match the data's blocks";
    plan.data = Uint4(dims, std::string(data->raw));
    std::string zp;
    if (Value* z = node->input(3)) {
      std::optional<ConstantData> c = GetConstant(z);
      if (!c || c->data_type != T::UINT8) return "uint8 bits=4 zero points are not a uint8 constant";
      if (static_cast<int64_t>(c->raw.size()) != rows * ((blocks + 1) / 2))
        return "zero points are not uint8 [..., ceil(blocks / 2)]";
      zp = RepackNibbleRows(c->raw, rows, blocks);
    } else {
      zp.assign((rows * blocks + 1) / 2, static_cast<char>(0x88));
    }
    plan.zero_point = Uint4(*scale_dims, std::move(zp));
    return {};
  }

  // dequantize=true: table[i] = (q[i] - zero point) * scale of i's block, as onnxruntime
  // computes it (in float), from the constant data, scales and zero points.
  static std::string PlanTable(Node* node, int32_t data_type, int64_t bits, GatherBlockPlan& plan) {
    std::optional<ConstantData> sc = GetConstant(node->input(2));
    std::optional<std::vector<double>> scales = sc ? sc->AsDoubles() : std::nullopt;
    if (!scales) return "dequantize=true needs constant scales";
    std::optional<ConstantData> raw_data;
    std::string_view data_bytes, zp_bytes;
    std::vector<int64_t> dims;
    if (plan.data) {  // uint8 bits=4, repacked
      data_bytes = plan.data->raw_bytes();
      dims.assign(plan.data->meta().dims().begin(), plan.data->meta().dims().end());
    } else {
      raw_data = GetConstant(node->input(0));
      if (!raw_data) return "dequantize=true needs a constant table";
      data_bytes = raw_data->raw;
      dims = raw_data->dims;
    }
    std::optional<ConstantData> raw_zp;
    const bool nibbles = data_type != T::UINT8 || bits == 4;
    if (plan.zero_point) {
      zp_bytes = plan.zero_point->raw_bytes();
    } else if (Value* z = node->input(3)) {
      raw_zp = GetConstant(z);
      if (!raw_zp) return "dequantize=true needs constant zero points";
      zp_bytes = raw_zp->raw;
    }
    auto element = [&](std::string_view bytes, int64_t i) -> int {
      if (!nibbles) return static_cast<uint8_t>(bytes[i]);
      const int v = (static_cast<uint8_t>(bytes[i / 2]) >> (4 * (i % 2))) & 0xF;
      return data_type == T::INT4 && v >= 8 ? v - 16 : v;
    };
    const int64_t q = plan.quantize_axis;
    const int64_t outer = Product(dims, 0, q), axis = dims[q], inner = Product(dims, q + 1, dims.size());
    const int64_t blocks = (axis + plan.block - 1) / plan.block;
    if (static_cast<int64_t>(scales->size()) != outer * blocks * inner) return "scales do not match the data's blocks";
    const int64_t needed = nibbles ? (outer * axis * inner + 1) / 2 : outer * axis * inner;
    if (static_cast<int64_t>(data_bytes.size()) < needed) return "data of an unexpected size";
    std::vector<double> table(outer * axis * inner);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t a = 0; a < axis; ++a) {
        for (int64_t in = 0; in < inner; ++in) {
          const int64_t i = (o * axis + a) * inner + in, s = (o * blocks + a / plan.block) * inner + in;
          const int zp = zp_bytes.empty() ? 0 : element(zp_bytes, s);
          table[i] =
              static_cast<double>(static_cast<float>(element(data_bytes, i) - zp) * static_cast<float>((*scales)[s]));
        }
      }
    }
    StatusOr<Tensor> t = Tensor::FromDoubles(plan.type, dims, table);
    if (!t.ok()) return std::string(t.status().message());
    plan.table = std::move(*t);
    plan.data.reset();
    plan.zero_point.reset();
    return {};
  }

  bool dequantize_;
};

}  // namespace

std::vector<ContribRule> MakeGatherBlockQuantizedRules(bool dequantize) {
  std::vector<ContribRule> rules;
  rules.push_back({"GatherBlockQuantized", std::make_unique<GatherBlockQuantizedRule>(dequantize)});
  return rules;
}

}  // namespace onnxsurgeon::contrib

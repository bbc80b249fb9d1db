#include "passes/contrib/attention_core.h"

#include <algorithm>
#include <limits>

#include "core/ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon::contrib {

Value* SplitHeads(Rewriter& rw, Value* x, int64_t num_heads) {
  Value* heads = rw.Op("Reshape", {x, rw.Int64s({0, 0, num_heads, -1})});
  return rw.Op("Transpose", {heads}, {Rewriter::AttrInts("perm", {0, 2, 1, 3})});
}

Value* DimOf(Rewriter& rw, Value* x, int64_t axis) {
  Value* dim = rw.Op("Gather", {rw.Op("Shape", {x}), rw.Int64s({axis})});
  return rw.Op("Squeeze", {dim, rw.Int64s({0})});
}

double LowestOf(int32_t type) {
  switch (type) {
    case onnx::TensorProto::FLOAT16: return -65504.0;
    case onnx::TensorProto::BFLOAT16: return -3.3895313892515355e38;
    default: return std::numeric_limits<float>::lowest();  // onnxruntime's float mask, also for double
  }
}

StatusOr<Value*> ScalarOf(Rewriter& rw, int32_t type, double v) {
  OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromDoubles(type, {}, {v}));
  return rw.Constant(std::move(t), "scalar");
}

namespace {

// The additive mask, broadcastable to [B, N, S, T]; null when there is none.
StatusOr<Value*> EmitMask(Rewriter& rw, const AttentionSpec& spec) {
  if (spec.mask_kind == MaskKind::kNone && !spec.causal) return nullptr;
  constexpr int32_t kInt64 = onnx::TensorProto::INT64;
  OS_ASSIGN_OR_RETURN(Value * zero_i, ScalarOf(rw, kInt64, 0));
  OS_ASSIGN_OR_RETURN(Value * one_i, ScalarOf(rw, kInt64, 1));
  OS_ASSIGN_OR_RETURN(Value * zero, ScalarOf(rw, spec.type, 0.0));
  Value* t = DimOf(rw, spec.k, 2);
  Value* keys = rw.Op("Range", {zero_i, t, one_i});  // [T]: key positions
  Value* mask = nullptr;
  if (spec.mask_kind != MaskKind::kNone) {
    Value* m = rw.Op("Cast", {spec.mask}, {Rewriter::AttrInt("to", kInt64)});
    Value* keep = nullptr;  // bool [B, 1, 1, T] or [B, 1, S, T]
    auto per_batch = [&](Value* v) { return rw.Op("Unsqueeze", {v, rw.Int64s({1})}); };  // [B] -> [B, 1]
    switch (spec.mask_kind) {
      case MaskKind::kRaw2D: keep = rw.Op("Greater", {m, zero_i}); break;
      case MaskKind::kRaw3D: keep = rw.Op("Greater", {m, zero_i}); break;
      case MaskKind::kLengths: keep = rw.Op("Less", {keys, per_batch(m)}); break;
      case MaskKind::kEndsStarts: {
        Value* halves = rw.Op("Reshape", {m, rw.Int64s({2, -1})});
        Value* ends = rw.Op("Gather", {halves, zero_i}, {Rewriter::AttrInt("axis", 0)});
        Value* starts = rw.Op("Gather", {halves, one_i}, {Rewriter::AttrInt("axis", 0)});
        keep = rw.Op(
            "And", {rw.Op("Less", {keys, per_batch(ends)}), rw.Op("Not", {rw.Op("Less", {keys, per_batch(starts)})})});
        break;
      }
      case MaskKind::kOneD: {  // ends = m[0:B], starts = Concat(m, zeros)[B:2B]
        Value* batch = rw.Op("Gather", {rw.Op("Shape", {spec.q}), rw.Int64s({0})});  // [1]
        Value* ends = rw.Op("Slice", {m, rw.Int64s({0}), batch});
        Value* padded = rw.Op("Concat", {m, rw.Op("Sub", {ends, ends})}, {Rewriter::AttrInt("axis", 0)});
        Value* starts = rw.Op("Slice", {padded, batch, rw.Op("Add", {batch, batch})});
        keep = rw.Op(
            "And", {rw.Op("Less", {keys, per_batch(ends)}), rw.Op("Not", {rw.Op("Less", {keys, per_batch(starts)})})});
        break;
      }
      case MaskKind::kNone: break;
    }
    keep = rw.Op("Unsqueeze", {keep, rw.Int64s(spec.mask_kind == MaskKind::kRaw3D ? std::vector<int64_t>{1}
                                                                                  : std::vector<int64_t>{1, 2})});
    // no lower than the type allows (-inf would make a fully masked row NaN)
    const double filter_value = std::max<double>(spec.mask_filter_value, LowestOf(spec.type));
    OS_ASSIGN_OR_RETURN(Value * filter, ScalarOf(rw, spec.type, filter_value));
    mask = rw.Op("Where", {keep, zero, filter});
  }
  if (spec.causal) {  // key j after query i: j > (T - S) + i
    Value* s = DimOf(rw, spec.q, 2);
    Value* queries = rw.Op("Add", {rw.Op("Range", {zero_i, s, one_i}), rw.Op("Sub", {t, s})});
    Value* later = rw.Op("Greater", {keys, rw.Op("Unsqueeze", {queries, rw.Int64s({1})})});  // [S, T]
    OS_ASSIGN_OR_RETURN(Value * lowest, ScalarOf(rw, spec.type, LowestOf(spec.type)));
    mask = rw.Op("Where", {later, lowest, mask ? mask : zero});
  }
  return mask;
}

}  // namespace

StatusOr<Value*> EmitAttention(Rewriter& rw, const AttentionSpec& spec) {
  // float16 / bfloat16: the scores are masked and normalized in float, as onnxruntime's
  // kernels do (a float16 mask value of its lowest would absorb the scores unevenly).
  constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
  const bool wide = spec.type == onnx::TensorProto::FLOAT16 || spec.type == onnx::TensorProto::BFLOAT16;
  AttentionSpec in_float = spec;
  if (wide) in_float.type = kFloat;
  auto up = [&](Value* v) { return wide ? rw.Op("Cast", {v}, {Rewriter::AttrInt("to", kFloat)}) : v; };
  Value* kt = rw.Op("Transpose", {spec.k}, {Rewriter::AttrInts("perm", {0, 1, 3, 2})});
  Value* scores = up(rw.Op("MatMul", {spec.q, kt}));
  OS_ASSIGN_OR_RETURN(Value * scale, ScalarOf(rw, in_float.type, spec.scale));
  scores = rw.Op("Mul", {scores, scale});
  if (spec.softcap > 0.0f) {
    OS_ASSIGN_OR_RETURN(Value * cap, ScalarOf(rw, in_float.type, spec.softcap));
    scores = rw.Op("Mul", {rw.Op("Tanh", {rw.Op("Div", {scores, cap})}), cap});
  }
  OS_ASSIGN_OR_RETURN(Value * mask, EmitMask(rw, in_float));
  if (mask) scores = rw.Op("Add", {scores, mask});
  if (spec.attention_bias) scores = rw.Op("Add", {scores, up(spec.attention_bias)});
  Value* probs = rw.Op("Softmax", {scores}, {Rewriter::AttrInt("axis", -1)});
  if (wide) probs = rw.Op("Cast", {probs}, {Rewriter::AttrInt("to", spec.type)});
  Value* heads = rw.Op("MatMul", {probs, spec.v});  // [B, N, S, Hv]
  Value* merged = rw.Op("Transpose", {heads}, {Rewriter::AttrInts("perm", {0, 2, 1, 3})});
  return rw.Op("Reshape", {merged, rw.Int64s({0, 0, -1})});
}

}  // namespace onnxsurgeon::contrib

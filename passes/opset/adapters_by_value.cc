// Downgrade adapters for attributes judged by value: an attribute (or input) the older
// version lacks is dropped when, given the node's constant inputs and other attributes, it
// changes nothing; otherwise the step is refused with the value that matters. Registered
// in adapters.cc.
#include "passes/opset/adapters_by_value.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/opset/adapters_quant.h"

namespace onnxsurgeon::opset {
namespace {

// Given:  %Y = Op(%X, ...)                            (computes %X unchanged)
// Result: %Y = Identity(%X)
//
// Replaces the step's node by Identity(input 0): the op computes its input unchanged.
Status ReplaceByIdentity(StepContext& ctx) {
  Node* n = ctx.node;
  Node* id = ctx.Emit("Identity", {n->input(0)});
  ctx.types->Alias(n->output(0), id->output(0));
  OS_RETURN_IF_ERROR(ctx.rewriter->ReplaceNode(n, {id->output(0)}));
  ctx.node = nullptr;  // replaced
  return absl::OkStatus();
}

}  // namespace

// Given:  %Y = ReduceSum-13<noop_with_empty_axes=1>(%X, [1])
// Result: %Y = ReduceSum-11<axes=[1]>(%X)
// Given:  %Y = ReduceSum-13<noop_with_empty_axes=1>(%X, int64[0] {})
// Result: %Y = Identity(%X)
//
// Reduce*-13/18's noop_with_empty_axes=1 only acts when the axes are empty:
//   axes a constant, non-empty list   -> the attribute changes nothing and goes
//   axes absent or a constant []      -> no axis is reduced: Y = X. For Sum/Mean/Max/Min/
//                                        Prod that is Identity (each element reduced alone);
//   axes computed at run time         -> refused (they may be empty at run time).
// tf2onnx writes noop_with_empty_axes=1 on every ReduceSum with constant axes.
Status ReduceNoopWithEmptyAxesDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->GetInt("noop_with_empty_axes", 0) == 0) return absl::OkStatus();
  Value* axes = n->num_inputs() > 1 ? n->input(1) : nullptr;
  std::optional<std::vector<int64_t>> values = axes ? ConstantInts(axes) : std::vector<int64_t>{};
  if (!values) {
    return ctx.Refuse(
        "noop_with_empty_axes=1 with axes computed at run time (they may be empty, which means no "
        "reduction here and every axis at the target)");
  }
  if (!values->empty()) {
    ctx.rewriter->RemoveAttribute(n, "noop_with_empty_axes");
    return absl::OkStatus();
  }
  static const std::set<std::string> identity_when_empty = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                                            "ReduceProd"};
  if (!identity_when_empty.count(n->op_type())) {
    // ReduceL2 & co. over no axis apply their element-wise part (|x|, x^2, log x, ...):
    // the op's decomposition into ReduceSum (which keeps noop_with_empty_axes) says so.
    return ctx.Refuse(
        absl::StrCat("noop_with_empty_axes=1 and no axes: ", n->op_type(), " then is element-wise, not the identity"));
  }
  ctx.handled = true;
  return ReplaceByIdentity(ctx);
}

// Given:  %Y = MaxPool-10<kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1>(%X)   %X: [1, 2, 8, 8]
// Result: %Y = MaxPool-8<kernel_shape=[2, 2], strides=[2, 2]>(%X)
//
// MaxPool/AveragePool-10's ceil_mode=1 only matters when a window would hang over the end:
// with static spatial dims and explicit pads where (in + pads - dilated kernel) divides by
// the stride on every axis, ceil and floor give the same output size.
Status PoolCeilModeDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->GetInt("ceil_mode", 0) == 0) return absl::OkStatus();
  if (StringAttr(*n, "auto_pad", "NOTSET") != "NOTSET") {
    ctx.rewriter->RemoveAttribute(n, "ceil_mode");  // auto_pad computes the output size itself; ceil_mode is ignored
    return absl::OkStatus();
  }
  auto dims = ctx.types->Dims(n->input(0));
  const Attribute* kernel = n->FindAttribute("kernel_shape");
  if (!dims || !kernel) return ctx.Refuse("ceil_mode=1 and the input's shape is unknown");
  size_t k = kernel->ints().size();  // ints() is a copy: taken once below
  if (dims->size() != k + 2) return ctx.Refuse("ceil_mode=1 and the input's rank does not match kernel_shape");
  auto ints_or = [&](const char* name, std::vector<int64_t> fallback) {
    const Attribute* a = n->FindAttribute(name);
    return a ? a->ints() : fallback;
  };
  const std::vector<int64_t> kernel_shape = kernel->ints();
  std::vector<int64_t> strides = ints_or("strides", std::vector<int64_t>(k, 1));
  std::vector<int64_t> dilations = ints_or("dilations", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = ints_or("pads", std::vector<int64_t>(2 * k, 0));
  if (strides.size() != k || dilations.size() != k || pads.size() != 2 * k)
    return ctx.Refuse("malformed pooling attributes");
  for (size_t i = 0; i < k; ++i) {
    int64_t in = (*dims)[i + 2];
    if (in < 0) return ctx.Refuse("ceil_mode=1 and a spatial dim is not static");
    int64_t span = in + pads[i] + pads[i + k] - ((kernel_shape[i] - 1) * dilations[i] + 1);
    if (span >= 0 && span % strides[i] != 0) {
      return ctx.Refuse(absl::StrCat("ceil_mode=1 adds a partial window on spatial axis ", i, " (", in,
                                     " + pads - kernel is not a multiple of the stride ", strides[i], ")"));
    }
  }
  ctx.rewriter->RemoveAttribute(n, "ceil_mode");
  return absl::OkStatus();
}

// Given:  %Y = MaxPool-8<storage_order=1>(%X)         (Indices unused)
// Result: %Y = MaxPool-1(%X)
//
// MaxPool-8's storage_order only orders the Indices output.
Status MaxPoolStorageOrderDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->GetInt("storage_order", 0) == 0) return absl::OkStatus();
  if (n->num_outputs() > 1 && n->output(1) && n->output(1)->HasUsers())
    return ctx.Refuse("storage_order=1 and the Indices output is used");
  ctx.rewriter->RemoveAttribute(n, "storage_order");
  return absl::OkStatus();
}

bool IsFloat8(int64_t t) { return t >= onnx::TensorProto::FLOAT8E4M3FN && t <= onnx::TensorProto::FLOAT8E5M2FNUZ; }

// Given:  %Y = QuantizeLinear-19<saturate=1>(%X, %s, %z)   %z: uint8
// Result: %Y = QuantizeLinear-13(%X, %s, %z)
//
// QuantizeLinear-19's saturate only matters for float8 outputs (the zero point's type;
// uint8 without one).
Status QuantizeSaturateDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (!n->FindAttribute("saturate")) return absl::OkStatus();
  int32_t out = n->num_inputs() > 2 && n->input(2) ? ctx.types->ElemType(n->input(2)) : onnx::TensorProto::UINT8;
  if (out == 0) return ctx.Refuse("saturate is set and the output type (the zero point's) is unknown");
  if (!IsFloat8(out)) ctx.rewriter->RemoveAttribute(n, "saturate");
  return absl::OkStatus();
}

// Given:  %Y = DequantizeLinear-21<block_size=32>(%W, %s, %z)   %W: int4 | uint4 | int16 | uint16
// Result: refused: "blocked quantization (block_size=32) needs opset 21", "int4 ... needs opset 21"
//
// Opset 21 added blocked quantization and the 4- and 16-bit types to QuantizeLinear and
// DequantizeLinear (the quantized type is DequantizeLinear's x, QuantizeLinear's zero point).
Status QuantizeLinear21Down(StepContext& ctx) {
  OS_RETURN_IF_ERROR(WidenFourBitWeight(ctx));
  Node* n = ctx.node;
  if (int64_t b = n->GetInt("block_size", 0); b != 0)
    return ctx.Refuse(absl::StrCat("blocked quantization (block_size=", b, ") needs opset 21"));
  const bool dq = n->op_type() == "DequantizeLinear";
  Value* q = dq ? n->input(0) : (n->num_inputs() > 2 ? n->input(2) : nullptr);
  if (!q) return absl::OkStatus();
  using T = onnx::TensorProto;
  const int32_t t = ctx.types->ElemType(q);
  if (t == T::INT4 || t == T::UINT4 || t == T::INT16 || t == T::UINT16) {
    return ctx.Refuse(absl::StrCat(absl::AsciiStrToLower(T::DataType_Name(static_cast<T::DataType>(t))),
                                   " quantization (", dq ? "input 0 '" : "zero point '", q->name(),
                                   "') needs opset 21"));
  }
  return absl::OkStatus();
}

// Given:  %Y = DequantizeLinear-13<axis=1>(%W, %s[8], %z[8])
// Result: refused: "per-axis quantization (scale of shape [8]) needs opset 13"
//
// QuantizeLinear-10 and DequantizeLinear-10 take a scalar scale and zero point only; a
// one-element scale is per-tensor. The axis attribute then goes (the generic step).
Status QuantizeLinear13Down(StepContext& ctx) {
  Node* n = ctx.node;
  Value* scale = n->input(1);
  if (!scale) return absl::OkStatus();
  auto dims = ctx.types->Dims(scale);
  if (!dims) return ctx.Refuse("the scale's rank is unknown: per-axis quantization needs opset 13");
  int64_t elements = 1;
  for (int64_t d : *dims) elements = d < 0 ? -1 : elements * d;
  if (dims->empty() || elements == 1) return absl::OkStatus();
  return ctx.Refuse(absl::StrCat("per-axis quantization (scale of shape [", absl::StrJoin(*dims, ","),
                                 "], axis=", n->GetInt("axis", 1), ") needs opset 13"));
}

// Given:  %V, %I = TopK-11<largest=0>(%X, %k)
// Result: %N = Neg(%X)
//         %W, %I = TopK-10(%N, %k)
//         %V = Neg(%W)
//
// TopK-11's sorted=0 leaves the order unspecified (a sorted result is one of the allowed
// ones); largest=0 is TopK of the negated input, negated back (floating point only: an
// integer minimum has no negation).
Status TopKDown(StepContext& ctx) {
  Node* n = ctx.node;
  ctx.rewriter->RemoveAttribute(n, "sorted");
  if (n->GetInt("largest", 1) != 0) return absl::OkStatus();
  int32_t dt = ctx.types->ElemType(n->input(0));
  bool is_float = dt == onnx::TensorProto::FLOAT || dt == onnx::TensorProto::DOUBLE || dt == onnx::TensorProto::FLOAT16;
  if (!is_float) return ctx.Refuse("largest=0 is only rewritten (as TopK of -x) for floating-point inputs");
  ctx.rewriter->RemoveAttribute(n, "largest");
  ctx.rewriter->SetInput(n, 0, ctx.Emit("Neg", {n->input(0)})->output(0));
  Value* y = n->output(0);
  OS_ASSIGN_OR_RETURN(Node * back, ctx.rewriter->InsertAfter(y, "Neg", {y}, {}, ctx.domain));
  ctx.types->Alias(y, back->output(0));
  ctx.emitted->push_back({back, ctx.to_opset()});
  return absl::OkStatus();
}

// Given:  %Y = ArgMax-12<axis=1, select_last_index=1>(%X)   %X: [n, d]
// Result: %R = Slice(%X, [-1], [INT64_MIN], [1], [-1])
//         %Y = Sub(d - 1, ArgMax-11<axis=1>(%R))
//
// ArgMax/ArgMin-12's select_last_index=1: the first index in the reversed axis, counted
// from the end: i = (d - 1) - Arg(Slice(x, reversed along axis)).
Status ArgSelectLastIndexDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->GetInt("select_last_index", 0) == 0) return absl::OkStatus();
  ctx.rewriter->RemoveAttribute(n, "select_last_index");
  int64_t axis = n->GetInt("axis", 0);
  Value* x = n->input(0);
  Value* reversed =
      ctx.Emit("Slice", {x, ctx.Int64s({-1}), ctx.Int64s({INT64_MIN}), ctx.Int64s({axis}), ctx.Int64s({-1})})
          ->output(0);
  ctx.rewriter->SetInput(n, 0, reversed);
  auto dims = ctx.types->Dims(x);
  int64_t rank = dims ? static_cast<int64_t>(dims->size()) : -1;
  int64_t a = axis < 0 && rank >= 0 ? axis + rank : axis;
  Value* last;  // d - 1, as an int64 scalar
  if (dims && a >= 0 && a < rank && (*dims)[a] >= 0) {
    last = ctx.Int64s({(*dims)[a] - 1}, /*scalar=*/true);
  } else {
    Value* d = ctx.Emit("Gather", {ctx.Emit("Shape", {x})->output(0), ctx.Int64s({axis}, /*scalar=*/true)})->output(0);
    last = ctx.Emit("Sub", {d, ctx.Int64s({1}, /*scalar=*/true)})->output(0);
  }
  Value* y = n->output(0);
  OS_ASSIGN_OR_RETURN(Node * back, ctx.rewriter->InsertAfter(y, "Sub", {last, y}, {}, ctx.domain));
  ctx.types->Alias(y, back->output(0));
  ctx.emitted->push_back({back, ctx.to_opset()});
  return absl::OkStatus();
}

}  // namespace onnxsurgeon::opset

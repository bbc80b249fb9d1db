// The opset converter's adapter table: one entry per (op, from-version, to-version) step
// whose meaning moved in a way the two schemas do not show. Each adapter runs before the
// generic schema-derived step (converter.cc), which then moves attributes and inputs;
// an adapter that does the whole step sets ctx.handled. Steps not listed here are
// derived from the schemas alone.
//
// Example (Softmax-13 -> Softmax-11, axis not the last one):
//   Before:  Y = Softmax<axis=1>(X)                    X: float[2,3,4]
//   After:   T = Transpose<perm=[0,2,1]>(X)  S = Softmax<axis=2>(T)  Y = Transpose<perm=[0,2,1]>(S)
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "passes/lowering/scatternd.h"
#include "passes/opset/adapters_by_value.h"
#include "passes/opset/adapters_layout.h"
#include "passes/opset/adapters_quant.h"
#include "passes/opset/adapters_up.h"
#include "passes/opset/step.h"

namespace onnxsurgeon::opset {
namespace {

// Given:  %Y = Softmax-13<axis=1>(%X)                     %X: [a, b, c]
// Result: %T = Transpose<perm=[0,2,1]>(%X)
//         %S = Softmax-11<axis=2>(%T)
//         %Y = Transpose<perm=[0,2,1]>(%S)            (axis already last: only the attribute changes)
//
// Softmax, LogSoftmax, Hardmax: before 13 the input is coerced to 2-D at `axis` (default
// 1) and normalized over the flattened tail; from 13 on over the one axis (default -1).
// The two agree when the axis is the last one.
Status SoftmaxDown(StepContext& ctx) {
  Node* n = ctx.node;
  int64_t rank = ctx.types->Rank(n->input(0));
  int64_t axis = n->GetInt("axis", -1);
  if (rank < 0) {
    if (axis == -1) {
      ctx.rewriter->SetAttribute(n, AttrInt("axis", -1));
      ctx.handled = true;
      return absl::OkStatus();
    }
    return ctx.Refuse("the input's rank is unknown, and the axis is not -1");
  }
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.Refuse("axis out of range");
  ctx.handled = true;
  if (axis == rank - 1) {
    ctx.rewriter->SetAttribute(n, AttrInt("axis", rank - 1));
    return absl::OkStatus();
  }
  // Move the axis last, normalize, move it back (a swap is its own inverse).
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[axis], perm[rank - 1]);
  Value* x = n->input(0);
  Value* t = ctx.Emit("Transpose", {x}, {AttrInts("perm", perm)})->output(0);
  ctx.rewriter->SetInput(n, 0, t);
  ctx.rewriter->SetAttribute(n, AttrInt("axis", rank - 1));
  // The node's result goes through the back-transpose.
  Value* y = n->output(0);
  OS_ASSIGN_OR_RETURN(Node * back,
                      ctx.rewriter->InsertAfter(y, "Transpose", {y}, {AttrInts("perm", perm)}, ctx.domain));
  ctx.types->Alias(y, back->output(0));
  ctx.emitted->push_back({back, ctx.to_opset()});
  return absl::OkStatus();
}

// Given:  %Y = Softmax-11<axis=1>(%X)
// Result: %F = Flatten<axis=1>(%X)
//         %S = Softmax-13<axis=-1>(%F)
//         %Y = Reshape(%S, Shape(%X))                  (axis already last: only the attribute changes)
//
// Upwards: the old 2-D coercion, written with Flatten and Reshape unless it is the last axis.
Status SoftmaxUp(StepContext& ctx) {
  Node* n = ctx.node;
  int64_t rank = ctx.types->Rank(n->input(0));
  int64_t axis = n->GetInt("axis", 1);
  ctx.handled = true;
  // The last axis (-1 needs no rank): the 2-D coercion keeps rows, nothing to write out.
  if (axis == -1 || (rank >= 0 && (axis < 0 ? axis + rank : axis) == rank - 1)) {
    ctx.rewriter->SetAttribute(n, AttrInt("axis", -1));
    return absl::OkStatus();
  }
  if (rank >= 0 && axis < 0) axis += rank;
  Value* x = n->input(0);
  Value* flat = ctx.Emit("Flatten", {x}, {AttrInt("axis", axis)})->output(0);
  Value* shape = ctx.Emit("Shape", {x})->output(0);
  ctx.rewriter->SetInput(n, 0, flat);
  ctx.rewriter->SetAttribute(n, AttrInt("axis", -1));
  Value* y = n->output(0);
  OS_ASSIGN_OR_RETURN(Node * reshape, ctx.rewriter->InsertAfter(y, "Reshape", {y, shape}, {}, ctx.domain));
  ctx.types->Alias(y, reshape->output(0));
  ctx.emitted->push_back({reshape, ctx.to_opset()});
  return absl::OkStatus();
}

// Given:  %A, %B = Split-18<axis=1, num_outputs=2>(%X)   %X: [2, 5]
// Result: %A, %B = Split-13<axis=1>(%X, [3, 2])
//
// Split-18's num_outputs: parts of ceil(d / n), the last one what is left. Split-13
// without `split` needs d divisible by n, so the sizes are written out (computed at run
// time when d is only known then).
Status SplitNumOutputsDown(StepContext& ctx) {
  Node* n = ctx.node;
  const Attribute* num = n->FindAttribute("num_outputs");
  if (!num) return absl::OkStatus();
  int64_t parts = num->i();
  ctx.rewriter->RemoveAttribute(n, "num_outputs");
  if (n->input(1)) return absl::OkStatus();
  if (parts != static_cast<int64_t>(n->num_outputs())) return ctx.Refuse("num_outputs does not match the outputs");
  int64_t axis = n->GetInt("axis", 0);
  auto dims = ctx.types->Dims(n->input(0));
  int64_t rank = dims ? static_cast<int64_t>(dims->size()) : -1;
  int64_t d = -1;
  if (rank >= 0) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a >= 0 && a < rank) d = (*dims)[a];
  }
  while (n->num_inputs() < 2) ctx.rewriter->AddInput(n, nullptr);
  if (d >= 0) {
    int64_t chunk = (d + parts - 1) / parts;
    if (d % parts == 0) return absl::OkStatus();  // equal parts: Split-13's default
    std::vector<int64_t> sizes(parts - 1, chunk);
    sizes.push_back(d - chunk * (parts - 1));
    ctx.rewriter->SetInput(n, 1, ctx.Int64s(sizes));
    return absl::OkStatus();
  }
  // d at run time: chunk = (d + n - 1) / n; sizes = [chunk] * (n - 1) ++ [d - chunk * (n - 1)].
  Value* shape = ctx.Emit("Shape", {n->input(0)})->output(0);
  Value* dim = ctx.Emit("Gather", {shape, ctx.Int64s({axis})})->output(0);  // [1]
  Value* chunk =
      ctx.Emit("Div", {ctx.Emit("Add", {dim, ctx.Int64s({parts - 1})})->output(0), ctx.Int64s({parts})})->output(0);
  std::vector<Value*> pieces(parts - 1, chunk);
  Value* used = ctx.Emit("Mul", {chunk, ctx.Int64s({parts - 1})})->output(0);
  pieces.push_back(ctx.Emit("Sub", {dim, used})->output(0));
  Value* sizes = ctx.Emit("Concat", pieces, {AttrInt("axis", 0)})->output(0);
  ctx.rewriter->SetInput(n, 1, sizes);
  return absl::OkStatus();
}

// Given:  %A, %B = Split-13<axis=1>(%X)
// Result: %A, %B = Split-18<axis=1, num_outputs=2>(%X)
//
// Split-13 without `split` cuts equal parts, one per output; Split-18 needs that count as
// num_outputs (a missing `split` without num_outputs is an error there). Equal parts are
// Split-18's ceil(d / n) parts exactly when n divides d, which Split-13 requires.
Status SplitNumOutputsUp(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->num_inputs() > 1 && n->input(1)) return absl::OkStatus();
  if (n->FindAttribute("num_outputs")) return absl::OkStatus();
  ctx.rewriter->SetAttribute(n, AttrInt("num_outputs", static_cast<int64_t>(n->num_outputs())));
  return absl::OkStatus();
}

// Given:  %Y = Resize-13(%X, , , %sizes)
// Result: %Y = Resize-11(%X, float[0] {}, float[0] {}, %sizes)
//
// Resize-13 made roi and scales optional; Resize-11 needs them (empty when unused).
Status ResizeRoiScalesDown(StepContext& ctx) {
  Node* n = ctx.node;
  while (n->num_inputs() < 3) ctx.rewriter->AddInput(n, nullptr);
  if (!n->input(1)) ctx.rewriter->SetInput(n, 1, ctx.Tensor1D({}, onnx::TensorProto::FLOAT));
  if (!n->input(2)) ctx.rewriter->SetInput(n, 2, ctx.Tensor1D({}, onnx::TensorProto::FLOAT));
  return absl::OkStatus();
}

// Given:  %Y = Resize-11<coordinate_transformation_mode="asymmetric", nearest_mode="floor">(%X, %roi, %scales)
// Result: %Y = Resize-10(%X, %scales)
//
// Resize-11 -> Resize-10 (X, scales): Resize-10 is the asymmetric mapping of Upsample.
Status ResizeTo10(StepContext& ctx) {
  Node* n = ctx.node;
  std::string ctm = StringAttr(*n, "coordinate_transformation_mode", "half_pixel");
  std::string mode = StringAttr(*n, "mode", "nearest");
  std::string nearest = StringAttr(*n, "nearest_mode", "round_prefer_floor");
  if (ctm != "asymmetric")
    return ctx.Refuse(
        absl::StrCat("coordinate_transformation_mode '", ctm, "' does not exist in Resize-10 (asymmetric only)"));
  if (mode == "cubic") return ctx.Refuse("mode 'cubic' does not exist in Resize-10");
  if (mode == "nearest" && nearest != "floor")
    return ctx.Refuse(absl::StrCat("nearest_mode '", nearest, "' does not exist in Resize-10 (floor only)"));
  if (n->GetInt("exclude_outside", 0) != 0) return ctx.Refuse("exclude_outside=1 does not exist in Resize-10");
  if (n->input(3)) return ctx.Refuse("Resize-10 takes scales, not sizes");
  for (const char* a :
       {"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value"})
    ctx.rewriter->RemoveAttribute(n, a);
  Value* scales = n->input(2);
  while (n->num_inputs() > 2) ctx.rewriter->RemoveInput(n, n->num_inputs() - 1);
  ctx.rewriter->SetInput(n, 1, scales);
  if (!scales) return ctx.Refuse("Resize-10 needs scales");
  ctx.handled = true;
  return absl::OkStatus();
}

Status ResizeFrom10(StepContext& ctx) {
  Node* n = ctx.node;
  Value* scales = n->input(1);
  ctx.rewriter->SetInput(n, 1, ctx.Tensor1D({}, onnx::TensorProto::FLOAT));
  ctx.rewriter->AddInput(n, scales);
  ctx.rewriter->SetAttribute(n, Rewriter::AttrString("coordinate_transformation_mode", "asymmetric"));
  if (StringAttr(*n, "mode", "nearest") == "nearest")
    ctx.rewriter->SetAttribute(n, Rewriter::AttrString("nearest_mode", "floor"));
  ctx.handled = true;
  return absl::OkStatus();
}

// A string attribute whose value set grew: values the older version lacks are refused.
Adapter RefuseValues(std::string attribute, std::vector<std::string> values, std::string fallback) {
  return [attribute, values, fallback](StepContext& ctx) -> Status {
    std::string v = StringAttr(*ctx.node, attribute, fallback);
    for (const auto& bad : values)
      if (v == bad)
        return ctx.Refuse(absl::StrCat(attribute, "='", v, "' does not exist in ", ctx.node->op_type(), "-",
                                       ctx.to->since_version()));
    return absl::OkStatus();
  };
}

// A string attribute whose values were renamed (the default too: an absent attribute
// gets the target's name for the source default).
Adapter RenameValues(std::string attribute, std::map<std::string, std::string> renames, std::string source_default) {
  return [attribute, renames, source_default](StepContext& ctx) -> Status {
    const Attribute* a = ctx.node->FindAttribute(attribute);
    std::string value = a ? a->s() : source_default;
    auto it = renames.find(value);
    if (!a) {
      ctx.rewriter->SetAttribute(ctx.node, Rewriter::AttrString(attribute, it != renames.end() ? it->second : value));
      return absl::OkStatus();
    }
    if (it != renames.end()) ctx.rewriter->SetAttribute(ctx.node, Rewriter::AttrString(attribute, it->second));
    return absl::OkStatus();
  };
}

// Given:  %Y = Shape-15<start=1>(%X)
// Result: %S = Shape-13(%X)
//         %Y = Slice(%S, [1], [INT64_MAX])
//
// Shape-15's start/end: a Slice of the full shape.
Status ShapeStartEndDown(StepContext& ctx) {
  Node* n = ctx.node;
  const Attribute* s = n->FindAttribute("start");
  const Attribute* e = n->FindAttribute("end");
  if (!s && !e) return absl::OkStatus();
  int64_t start = s ? s->i() : 0;
  int64_t end = e ? e->i() : INT64_MAX;
  ctx.rewriter->RemoveAttribute(n, "start");
  ctx.rewriter->RemoveAttribute(n, "end");
  if (start == 0 && end == INT64_MAX) return absl::OkStatus();
  Value* y = n->output(0);
  Value* starts = ctx.Int64s({start});
  Value* ends = ctx.Int64s({end});
  OS_ASSIGN_OR_RETURN(Node * slice, ctx.rewriter->InsertAfter(y, "Slice", {y, starts, ends}, {}, ctx.domain));
  ctx.types->Alias(y, slice->output(0));
  ctx.emitted->push_back({slice, ctx.to_opset()});
  return absl::OkStatus();
}

// Given:  %Y = Dropout-12(%X, %ratio, false)
// Result: %Y = Dropout-10(%X)                         (ratio as the attribute)
//
// Dropout-12's training_mode input: only inference (false or absent) goes back.
Status DropoutDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (Value* t = n->input(2)) {
    auto v = ConstantInts(t);
    if (!v || v->size() != 1 || (*v)[0] != 0) return ctx.Refuse("training_mode is not a constant false");
    ctx.rewriter->RemoveInput(n, 2);
  }
  ctx.rewriter->RemoveAttribute(n, "seed");  // only drawn in training mode
  return absl::OkStatus();
}

// Given:  %Y = Slice-10(%X, %starts, %ends, %axes, [1, ..., 1])
// Result: %Y = Slice-1<starts, ends, axes>(%X)
//
// Slice-10's steps: Slice-1 has none, so all must be 1.
Status SliceStepsDown(StepContext& ctx) {
  Node* n = ctx.node;
  Value* steps = n->input(4);
  if (!steps) return absl::OkStatus();
  auto v = ConstantInts(steps);
  if (!v || std::any_of(v->begin(), v->end(), [](int64_t x) { return x != 1; }))
    return ctx.Refuse("steps other than 1 do not exist in Slice-1");
  ctx.rewriter->RemoveInput(n, 4);
  return absl::OkStatus();
}

// Given:  %Y = Gemm-11(%A, %B)
// Result: %Y = Gemm-9(%A, %B, 0)                      (0 in A's type)
//
// Gemm-11 made C optional; Gemm-9 needs it: a zero broadcasts.
Status GemmCDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->input(2)) return absl::OkStatus();
  int32_t dt = ctx.types->ElemType(n->input(0));
  if (dt == 0) return ctx.Refuse("C is omitted and A's type is unknown");
  Value* zero = ctx.Scalar(0, dt);
  if (!zero) return ctx.Refuse("cannot encode a zero C of A's type");
  while (n->num_inputs() < 3) ctx.rewriter->AddInput(n, nullptr);
  ctx.rewriter->SetInput(n, 2, zero);
  return absl::OkStatus();
}

// Given:  %Y = Pad-18(%X, [1, 2], , [-1])              %X: [a, b, c]
// Result: %Y = Pad-13(%X, [0, 0, 1, 0, 0, 2])
//
// Pad-18's axes input: pads given for some axes only. Pad-13 wants every axis.
Status PadAxesDown(StepContext& ctx) {
  Node* n = ctx.node;
  Value* axes_value = n->input(3);
  if (!axes_value) return absl::OkStatus();
  auto axes = ConstantInts(axes_value);
  auto pads = ConstantInts(n->input(1));
  int64_t rank = ctx.types->Rank(n->input(0));
  if (!axes || !pads) return ctx.Refuse("axes and pads must be constants to expand pads to every axis");
  if (rank < 0) return ctx.Refuse("the input's rank is unknown");
  size_t k = axes->size();
  if (pads->size() != 2 * k) return ctx.Refuse("pads does not match axes");
  std::vector<int64_t> full(2 * rank, 0);
  for (size_t i = 0; i < k; ++i) {
    int64_t a = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    if (a < 0 || a >= rank) return ctx.Refuse("axis out of range");
    full[a] = (*pads)[i];
    full[a + rank] = (*pads)[i + k];
  }
  ctx.rewriter->SetInput(n, 1, ctx.Int64s(full));
  ctx.rewriter->RemoveInput(n, 3);
  return absl::OkStatus();
}

// Given:  %Y = Max-8(%A, %B)                          %A, %B: one static shape
// Result: %Y = Max-6(%A, %B)
//
// Max/Min/Sum/Mean before 8 did not broadcast: the inputs must have one static shape.
Status NoBroadcastBefore8(StepContext& ctx) {
  Node* n = ctx.node;
  std::optional<std::vector<int64_t>> shape;
  for (Value* v : n->inputs()) {
    auto d = ctx.types->Dims(v);
    if (!d || std::any_of(d->begin(), d->end(), [](int64_t x) { return x < 0; }))
      return ctx.Refuse("before opset 8 the inputs must have one shape, and a shape is not static");
    if (shape && *shape != *d) return ctx.Refuse("before opset 8 the inputs must have one shape (no broadcasting)");
    shape = d;
  }
  return absl::OkStatus();
}

// Given:  %Y = Constant-12<value_ints=[1, 2]>()
// Result: %Y = Constant-11<value=int64[2] {1, 2}>()
//
// Constant-12's value_float(s)/value_int(s)/value_string(s): a `value` tensor.
Status ConstantScalarsDown(StepContext& ctx) {
  Node* n = ctx.node;
  onnx::TensorProto t;
  if (const Attribute* a = n->FindAttribute("value_float")) {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(a->f());
  } else if (const Attribute* a = n->FindAttribute("value_floats")) {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(a->proto().floats_size());
    for (float f : a->proto().floats()) t.add_float_data(f);
  } else if (const Attribute* a = n->FindAttribute("value_int")) {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(a->i());
  } else if (const Attribute* a = n->FindAttribute("value_ints")) {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(a->proto().ints_size());
    for (int64_t v : a->proto().ints()) t.add_int64_data(v);
  } else if (const Attribute* a = n->FindAttribute("value_string")) {
    t.set_data_type(onnx::TensorProto::STRING);
    t.add_string_data(a->s());
  } else if (const Attribute* a = n->FindAttribute("value_strings")) {
    t.set_data_type(onnx::TensorProto::STRING);
    t.add_dims(a->proto().strings_size());
    for (const auto& s : a->proto().strings()) t.add_string_data(s);
  } else {
    return absl::OkStatus();
  }
  for (const char* name : {"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"})
    ctx.rewriter->RemoveAttribute(n, name);
  ctx.rewriter->SetAttribute(n, TensorAttr("value", t));
  return absl::OkStatus();
}

// Given:  %Y = Cast-19<to=FLOAT16, saturate=1>(%X)
// Result: %Y = Cast-13<to=FLOAT16>(%X)                (float8 targets: refused by the schema step)
//
// Cast-19's saturate only matters for float8 targets; elsewhere it is dropped.
Status CastSaturateDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (!n->FindAttribute("saturate")) return absl::OkStatus();
  int64_t to = n->GetInt("to", 0);
  bool float8 = to >= onnx::TensorProto::FLOAT8E4M3FN && to <= onnx::TensorProto::FLOAT8E5M2FNUZ;
  if (!float8) ctx.rewriter->RemoveAttribute(n, "saturate");
  return absl::OkStatus();
}

// Given:  %Y = Reshape-14<allowzero=1>(%X, [3, 2])
// Result: %Y = Reshape-13(%X, [3, 2])                 (a constant shape without 0)
//
// Reshape-14's allowzero=1 differs from Reshape-13 only where the shape holds a 0.
Status ReshapeAllowZeroDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->GetInt("allowzero", 0) == 0) return absl::OkStatus();
  auto shape = ConstantInts(n->input(1));
  if (!shape) return ctx.Refuse("allowzero=1 with a shape computed at run time (it may hold a 0)");
  if (std::any_of(shape->begin(), shape->end(), [](int64_t d) { return d == 0; }))
    return ctx.Refuse("allowzero=1 and the shape holds a 0 (an empty dimension, not a copied one)");
  ctx.rewriter->RemoveAttribute(n, "allowzero");
  return absl::OkStatus();
}

// Given:  %Y = Resize-18<axes=[2, 3]>(%X, , [2.0, 3.0])  %X: [n, c, h, w]
// Result: %Y = Resize-13(%X, , [1.0, 1.0, 2.0, 3.0])
//
// Resize-18's axes: scales or sizes for some axes only; Resize-13 wants every axis.
Status ResizeAxesDown(StepContext& ctx) {
  Node* n = ctx.node;
  const Attribute* axes_attr = n->FindAttribute("axes");
  if (!axes_attr) return absl::OkStatus();
  int64_t rank = ctx.types->Rank(n->input(0));
  auto dims = ctx.types->Dims(n->input(0));
  if (rank < 0) return ctx.Refuse("axes needs the input's rank, which is unknown");
  std::vector<int64_t> axes = axes_attr->ints();
  for (auto& a : axes) a = a < 0 ? a + rank : a;
  if (Value* scales = n->input(2)) {
    auto v = ConstantDoubles(scales);
    if (!v || v->size() != axes.size()) return ctx.Refuse("scales must be a constant to expand to every axis");
    std::vector<double> full(rank, 1.0);
    for (size_t i = 0; i < axes.size(); ++i) full[axes[i]] = (*v)[i];
    ctx.rewriter->SetInput(n, 2, ctx.Tensor1D(full, onnx::TensorProto::FLOAT));
  }
  if (Value* sizes = n->input(3)) {
    auto v = ConstantInts(sizes);
    if (!v || v->size() != axes.size()) return ctx.Refuse("sizes must be a constant to expand to every axis");
    if (!dims || std::any_of(dims->begin(), dims->end(), [](int64_t d) { return d < 0; }))
      return ctx.Refuse("sizes for some axes need the input's static shape");
    std::vector<int64_t> full = *dims;
    for (size_t i = 0; i < axes.size(); ++i) full[axes[i]] = (*v)[i];
    ctx.rewriter->SetInput(n, 3, ctx.Int64s(full));
  }
  ctx.rewriter->RemoveAttribute(n, "axes");
  return absl::OkStatus();
}

// Given:  %Y = ScatterND-16<reduction="add">(%X, %I, %U)
// Result: %T = CombineDuplicateUpdates(%X, %I, %U, add)   (passes/lowering/scatternd.h)
//         %Y = ScatterND-13(%X, %I, Add(GatherND(%X, %I), %T))
//
// ScatterND-16's reduction="add"/"mul" (torch's index_put(accumulate=True)) before 16,
// the same lowering as lower-scatternd-reduction: every update is first combined with the
// updates that hit the same element (Where over an N x N x M pair tensor, so an inf or NaN
// update reaches only its own element), then written once over data[indices] combined with
// it. Indices that are a constant without repeats skip the pair tensor: %T = %U. Elements no
// index hits keep data's own bits; a lone update is combined with data exactly as by
// ScatterND-16; repeated indices' updates are combined before data rather than one by one
// into it (ONNX leaves their order unspecified).
Status ScatterNDReductionDown(StepContext& ctx) {
  Node* n = ctx.node;
  std::string reduction_name = StringAttr(*n, "reduction", "none");
  if (reduction_name == "none") return absl::OkStatus();
  if (reduction_name != "add" && reduction_name != "mul")
    return ctx.Refuse(absl::StrCat("reduction='", reduction_name, "' has no form before ScatterND-16"));
  const lowering::Reduction reduction = reduction_name == "add" ? lowering::Reduction::kAdd : lowering::Reduction::kMul;
  Value* data = n->input(0);
  Value* indices = n->input(1);
  Value* updates = n->input(2);
  int32_t type = ctx.types->ElemType(updates);
  if (type == 0) type = ctx.types->ElemType(data);
  if (type == 0) return ctx.Refuse("the element type of data and updates is unknown");
  // The nodes the shared lowering makes follow opset to_opset()'s signatures; the sweep
  // converts them on like the step's own helper nodes.
  struct Queue : RewriteListener {
    StepContext* ctx;
    explicit Queue(StepContext* c) : ctx(c) {}
    void NodeCreated(Node* node) override { ctx->emitted->push_back({node, ctx->to_opset()}); }
  } queue(&ctx);
  Rewriter rw(&queue);
  rw.SetInsertionPoint(n);
  rw.SetRule(ctx.rewriter->rule());
  OS_ASSIGN_OR_RETURN(Value * y,
                      lowering::ScatterWithoutReduction(rw, *n, data, indices, updates, reduction, ctx.to_opset(), type,
                                                        lowering::kDefaultMaxPairElements, "convert-opset"));
  ctx.types->Alias(n->output(0), y);
  OS_RETURN_IF_ERROR(ctx.rewriter->ReplaceNode(n, {y}));
  ctx.node = nullptr;  // replaced
  return absl::OkStatus();
}

// Given:  %Y = Mod-28<fmod=0>(%A, %B)                  float
// Result: %R = Mod-13<fmod=1>(%A, %B)
//         %Y = Where(And(Not(Equal(%R, 0)), Xor(Less(%R, 0), Less(%B, 0))), Add(%R, %B), %R)
//
// Mod-28 allows fmod=0 (floor modulo, the sign of the divisor) on floating-point
// inputs; before 28 only fmod=1 (C fmod, the sign of the dividend) is defined for them:
//   R = Mod<fmod=1>(A, B)    Y = Where(R != 0 and (R < 0) xor (B < 0), R + B, R)
// which keeps fmod's exactness (and its infinities and NaNs).
Status ModFloatFloorDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->GetInt("fmod", 0) != 0) return absl::OkStatus();
  int32_t dt = ctx.types->ElemType(n->input(0));
  bool is_float = dt == onnx::TensorProto::FLOAT || dt == onnx::TensorProto::DOUBLE ||
                  dt == onnx::TensorProto::FLOAT16 || dt == onnx::TensorProto::BFLOAT16;
  if (dt == 0) return ctx.Refuse("fmod=0 needs the input type (floor modulo on floats exists only from 28)");
  if (!is_float) return absl::OkStatus();
  Value* a = n->input(0);
  Value* b = n->input(1);
  Value* zero = ctx.Scalar(0, dt);
  if (!zero) return ctx.Refuse("cannot encode a zero of the input type");
  Value* r = ctx.Emit("Mod", {a, b}, {AttrInt("fmod", 1)})->output(0);
  Value* nonzero = ctx.Emit("Not", {ctx.Emit("Equal", {r, zero})->output(0)})->output(0);
  Value* signs_differ =
      ctx.Emit("Xor", {ctx.Emit("Less", {r, zero})->output(0), ctx.Emit("Less", {b, zero})->output(0)})->output(0);
  Value* adjust = ctx.Emit("And", {nonzero, signs_differ})->output(0);
  Node* y = ctx.Emit("Where", {adjust, ctx.Emit("Add", {r, b})->output(0), r});
  ctx.types->Alias(n->output(0), y->output(0));
  OS_RETURN_IF_ERROR(ctx.rewriter->ReplaceNode(n, {y->output(0)}));
  ctx.node = nullptr;
  return absl::OkStatus();
}

// Given:  %Y = RoiAlign-16<coordinate_transformation_mode="output_half_pixel">(%X, %rois, %batch)
// Result: %Y = RoiAlign-10(%X, %rois, %batch)
//
// RoiAlign-16 added coordinate_transformation_mode with default half_pixel; RoiAlign-10
// always behaved as output_half_pixel.
Status RoiAlignModeDown(StepContext& ctx) {
  std::string mode = StringAttr(*ctx.node, "coordinate_transformation_mode", "half_pixel");
  if (mode != "output_half_pixel")
    return ctx.Refuse(absl::StrCat("coordinate_transformation_mode='", mode,
                                   "' does not exist in RoiAlign-10 (output_half_pixel only)"));
  ctx.rewriter->RemoveAttribute(ctx.node, "coordinate_transformation_mode");
  return absl::OkStatus();
}

Status RoiAlignModeUp(StepContext& ctx) {
  ctx.rewriter->SetAttribute(ctx.node, Rewriter::AttrString("coordinate_transformation_mode", "output_half_pixel"));
  return absl::OkStatus();
}

// Given:  %Y, %mask = Dropout-12(%X)                  %mask unused
// Result: %Y, %mask = Dropout-10(%X)
//
// Dropout's mask in inference mode is all ones from 12 on; before 12 runtimes differ.
Status DropoutMaskDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->output(1) && n->output(1)->HasUsers())
    return ctx.Refuse("the mask output is used; its inference value before Dropout-12 is not defined the same way");
  return DropoutDown(ctx);
}

// Given:  %Y = Resize-18<mode="linear", antialias=1>(%X, , [1.0, 1.0, 2.0, 2.0])
// Result: %Y = Resize-13<mode="linear">(%X, , [1.0, 1.0, 2.0, 2.0])   (no axis shrinks)
//
// Resize-18's antialias only acts when linear/cubic resizing shrinks an axis, and
// keep_aspect_ratio_policy only when sizes are given; axes as ResizeAxesDown.
Status ResizeDown18(StepContext& ctx) {
  Node* n = ctx.node;
  if (StringAttr(*n, "keep_aspect_ratio_policy", "stretch") != "stretch" && n->num_inputs() > 3 && n->input(3))
    return ctx.Refuse("keep_aspect_ratio_policy other than 'stretch' with sizes: Resize-13 stretches");
  if (n->GetInt("antialias", 0) != 0) {
    bool shrinks = true;  // unknown: assume it may
    if (StringAttr(*n, "mode", "nearest") == "nearest") {
      shrinks = false;
    } else if (Value* scales = n->num_inputs() > 2 ? n->input(2) : nullptr) {
      if (auto v = ConstantDoubles(scales))
        shrinks = std::any_of(v->begin(), v->end(), [](double s) { return s < 1.0; });
    }
    if (shrinks)
      return ctx.Refuse("antialias=1 on a linear/cubic resize that may shrink an axis: Resize-13 does not antialias");
    ctx.rewriter->RemoveAttribute(n, "antialias");
  }
  ctx.rewriter->RemoveAttribute(n, "keep_aspect_ratio_policy");
  return ResizeAxesDown(ctx);
}

Status RefuseScan(StepContext& ctx) {
  return ctx.Refuse("Scan-8 (batched, with sequence_lens) and Scan-9 differ in inputs and semantics");
}

using Key = std::tuple<std::string, std::string, int, int>;

const std::map<Key, Adapter>& Table() {
  static const auto* table = [] {
    auto* t = new std::map<Key, Adapter>;
    for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
      (*t)[{"", op, 13, 11}] = SoftmaxDown;
      (*t)[{"", op, 11, 13}] = SoftmaxUp;
    }
    (*t)[{"", "Split", 18, 13}] = SplitNumOutputsDown;
    (*t)[{"", "Split", 13, 18}] = SplitNumOutputsUp;
    (*t)[{"", "Resize", 13, 11}] = ResizeRoiScalesDown;
    (*t)[{"", "Resize", 11, 10}] = ResizeTo10;
    (*t)[{"", "Resize", 10, 11}] = ResizeFrom10;
    (*t)[{"", "Resize", 19, 18}] = RefuseValues("coordinate_transformation_mode", {"half_pixel_symmetric"}, "");
    // Resize-13 dropped tf_half_pixel_for_nn (x_original = (x_resized + 0.5) / scale); no
    // mode of 13 maps coordinates that way for every rounding (onnx's reference refuses it).
    (*t)[{"", "Resize", 11, 13}] = RefuseValues("coordinate_transformation_mode", {"tf_half_pixel_for_nn"}, "");
    (*t)[{"", "Pad", 19, 18}] = RefuseValues("mode", {"wrap"}, "constant");
    (*t)[{"", "Pad", 18, 13}] = PadAxesDown;
    for (const char* op : {"ScatterND", "ScatterElements"})
      (*t)[{"", op, 18, 16}] = RefuseValues("reduction", {"max", "min"}, "none");
    (*t)[{"", "GridSample", 20, 16}] = RenameValues("mode", {{"linear", "bilinear"}, {"cubic", "bicubic"}}, "linear");
    (*t)[{"", "GridSample", 16, 20}] = RenameValues("mode", {{"bilinear", "linear"}, {"bicubic", "cubic"}}, "bilinear");
    (*t)[{"", "Shape", 15, 13}] = ShapeStartEndDown;
    (*t)[{"", "Dropout", 12, 10}] = DropoutMaskDown;
    (*t)[{"", "RoiAlign", 16, 10}] = RoiAlignModeDown;
    (*t)[{"", "RoiAlign", 10, 16}] = RoiAlignModeUp;
    (*t)[{"", "Slice", 10, 1}] = SliceStepsDown;
    (*t)[{"", "Gemm", 11, 9}] = GemmCDown;
    for (const char* op : {"Max", "Min", "Sum", "Mean"}) (*t)[{"", op, 8, 6}] = NoBroadcastBefore8;
    (*t)[{"", "Constant", 12, 11}] = ConstantScalarsDown;
    (*t)[{"", "Cast", 19, 13}] = CastSaturateDown;
    (*t)[{"", "Reshape", 14, 13}] = ReshapeAllowZeroDown;
    (*t)[{"", "Resize", 18, 13}] = ResizeDown18;
    (*t)[{"", "ReduceSum", 13, 11}] = ReduceNoopWithEmptyAxesDown;
    for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                           "ReduceMin", "ReduceProd", "ReduceSumSquare"})
      (*t)[{"", op, 18, 13}] = ReduceNoopWithEmptyAxesDown;
    (*t)[{"", "AveragePool", 10, 7}] = PoolCeilModeDown;
    (*t)[{"", "MaxPool", 10, 8}] = PoolCeilModeDown;
    (*t)[{"", "MaxPool", 8, 1}] = MaxPoolStorageOrderDown;
    (*t)[{"", "QuantizeLinear", 19, 13}] = QuantizeSaturateDown;
    for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
      (*t)[{"", op, 21, 19}] = QuantizeLinear21Down;
      (*t)[{"", op, 13, 10}] = QuantizeLinear13Down;
    }
    (*t)[{"", "TopK", 11, 10}] = TopKDown;
    for (const char* op : {"ArgMax", "ArgMin"}) (*t)[{"", op, 12, 11}] = ArgSelectLastIndexDown;
    (*t)[{"", "ScatterND", 16, 13}] = ScatterNDReductionDown;
    (*t)[{"", "Mod", 28, 13}] = ModFloatFloorDown;
    for (const char* op : {"RNN", "GRU", "LSTM"}) (*t)[{"", op, 14, 7}] = RecurrentBatchFirstDown;
    (*t)[{"", "GatherND", 12, 11}] = GatherNDBatchDimsDown;
    (*t)[{"", "DepthToSpace", 11, 1}] = DepthToSpaceCrdDown;
    (*t)[{"", "Scan", 9, 8}] = RefuseScan;
    (*t)[{"", "Scan", 8, 9}] = ScanBatchOfOneUp;
    (*t)[{"", "GroupNormalization", 18, 21}] = GroupNormalizationPerChannelUp;
    (*t)[{"", "BatchNormalization", 9, 14}] = BatchNormalizationTrainingUp;
    (*t)[{"", "MeanVarianceNormalization", 9, 13}] = MeanVarianceNormalizationAxesUp;
    (*t)[{"", "Dropout", 7, 10}] = DropoutMaskUp;
    return t;
  }();
  return *table;
}

}  // namespace

const Adapter* FindAdapter(const std::string& domain, const std::string& op, int from, int to) {
  auto it = Table().find({domain, op, from, to});
  return it == Table().end() ? nullptr : &it->second;
}

}  // namespace onnxsurgeon::opset

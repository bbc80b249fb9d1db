// Upgrade adapters: steps up whose meaning moved in a way the two schemas do not show
// (what an input holds, what the number of outputs says, a batch axis that went away).
// Each is exact or refuses; registered in adapters.cc's table.
//
// Example (GroupNormalization-18 -> 21, four channels in two groups):
//   Before:  Y = GroupNormalization-18<num_groups=2>(X, [a, b], [c, d])
//   After:   Y = GroupNormalization-21<num_groups=2>(X, [a, a, b, b], [c, c, d, d])
#include <cstdint>
#include <vector>

#include "passes/opset/adapters_up.h"

namespace onnxsurgeon::opset {
namespace {}  // namespace

// Given:  %Y = GroupNormalization-18<num_groups=2>(%X, %scale, %bias)   %X: float[n, 4, h, w], %scale: [2]
// Result: %Y = GroupNormalization-21<num_groups=2>(%X, %scale_c, %bias_c)
//         %scale_c = [s0, s0, s1, s1]                  (constant scale and static channels)
//         %scale_c = Reshape(Expand(Reshape(%scale, [2, 1]), [2, C / 2]), [-1])   (otherwise)
//
// GroupNormalization-18 scales and shifts each group by one value; -21 takes one per
// channel, so each channel gets its group's (numpy.repeat(scale, C / num_groups)). -18
// computes the statistics in X's type, -21 in stash_type (default float): X's type is
// written there unless it is float. The rest of the two function bodies is the same.
Status GroupNormalizationPerChannelUp(StepContext& ctx) {
  Node* n = ctx.node;
  const int64_t groups = n->GetInt("num_groups", 0);
  if (groups <= 0) return ctx.Refuse("num_groups is missing or not positive");
  Value* x = n->input(0);
  const int32_t type = ctx.types->ElemType(x);
  if (type == 0) return ctx.Refuse("the input's element type is unknown (GroupNormalization-21's stash_type names it)");
  auto dims = ctx.types->Dims(x);
  const int64_t channels = dims && dims->size() >= 2 ? (*dims)[1] : -1;
  if (channels >= 0 && channels % groups != 0)
    return ctx.Refuse(absl::StrCat(channels, " channels do not split into ", groups, " groups"));
  Value* repeat_shape = nullptr;  // [groups, C / groups], made once for scale and bias
  for (size_t i : {size_t{1}, size_t{2}}) {
    Value* v = n->input(i);
    if (!v) return ctx.Refuse("scale and bias are required");
    auto values = channels >= 0 ? ConstantDoubles(v) : std::nullopt;
    int32_t v_type = ctx.types->ElemType(v) ? ctx.types->ElemType(v) : type;
    if (values && static_cast<int64_t>(values->size()) == groups) {
      std::vector<double> per_channel;
      per_channel.reserve(channels);
      for (int64_t g = 0; g < groups; ++g) per_channel.insert(per_channel.end(), channels / groups, (*values)[g]);
      if (Value* c = ctx.Tensor1D(per_channel, v_type)) {
        ctx.rewriter->SetInput(n, i, c);
        continue;
      }
    }
    if (!repeat_shape) {
      if (channels >= 0) {
        repeat_shape = ctx.Int64s({groups, channels / groups});
      } else {
        Value* c = ctx.Emit("Shape", {x}, {AttrInt("start", 1), AttrInt("end", 2)})->output(0);
        Value* per_group = ctx.Emit("Div", {c, ctx.Int64s({groups})})->output(0);
        repeat_shape = ctx.Emit("Concat", {ctx.Int64s({groups}), per_group}, {AttrInt("axis", 0)})->output(0);
      }
    }
    Value* column = ctx.Emit("Reshape", {v, ctx.Int64s({groups, 1})})->output(0);
    Value* grid = ctx.Emit("Expand", {column, repeat_shape})->output(0);
    ctx.rewriter->SetInput(n, i, ctx.Emit("Reshape", {grid, ctx.Int64s({-1})})->output(0));
  }
  if (type != onnx::TensorProto::FLOAT) ctx.rewriter->SetAttribute(n, AttrInt("stash_type", type));
  return absl::OkStatus();
}

// Given:  %Y, %M, %V, %SM, %SV = BatchNormalization-9(%X, %s, %b, %mean, %var)   (%SM, %SV unused)
// Result: %Y, %M, %V = BatchNormalization-14<training_mode=1>(%X, %s, %b, %mean, %var)
//
// BatchNormalization-9 (and -7) is in training mode when it has outputs besides Y (its
// output case #1: Y from the batch's statistics, the running mean and variance updated
// by momentum); -14 says so with training_mode=1 and has no saved_mean/saved_var, which
// must then be unused (the schema step drops them, or refuses).
Status BatchNormalizationTrainingUp(StepContext& ctx) {
  Node* n = ctx.node;
  bool training = false;
  for (size_t i = 1; i < n->num_outputs(); ++i) training |= n->output(i) != nullptr;
  if (training) ctx.rewriter->SetAttribute(n, AttrInt("training_mode", 1));
  return absl::OkStatus();
}

// Given:  %S, %O = Scan-8<num_scan_inputs=1, directions=[1], body=B>(, %S0, %X)   %S0: [1, s], %X: [1, t, d]
// Result: %S, %O = Unsqueeze<axes=[0]>(Scan-9<num_scan_inputs=1, scan_input_directions=[1], body=B>(
//                      Squeeze<axes=[0]>(%S0), Squeeze<axes=[0]>(%X)))       (each output unsqueezed)
//
// Scan-8 runs its body over a batch (axis 0) of sequences (axis 1); Scan-9 has no batch
// axis. For a batch of one it is Scan-9 on the inputs without that axis: the body sees the
// same values each iteration (neither version shows it the batch), and the outputs get
// the axis back. A larger or unknown batch would need a Loop over it, and sequence_lens
// (sequences of different lengths) has no Scan-9 form: both are refused.
Status ScanBatchOfOneUp(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->num_inputs() > 0 && n->input(0))
    return ctx.Refuse("sequence_lens is given (sequences of their own lengths): Scan-9 has no such input");
  for (size_t i = 1; i < n->num_inputs(); ++i) {
    auto dims = ctx.types->Dims(n->input(i));
    if (!dims || dims->empty() || (*dims)[0] != 1)
      return ctx.Refuse(absl::StrCat(
          "input '", n->input(i) ? n->input(i)->name() : "", "' has ",
          dims && !dims->empty() && (*dims)[0] > 1 ? "a batch larger than one" : "a batch size not known to be one",
          ": Scan-9 has no batch axis (a Loop over the batch would be needed)"));
  }
  ctx.handled = true;
  if (n->num_inputs() > 0) ctx.rewriter->RemoveInput(n, 0);
  for (size_t i = 0; i < n->num_inputs(); ++i)
    ctx.rewriter->SetInput(n, i, ctx.Emit("Squeeze", {n->input(i)}, {AttrInts("axes", {0})})->output(0));
  if (const Attribute* directions = n->FindAttribute("directions")) {
    std::vector<int64_t> d = directions->ints();
    ctx.rewriter->RemoveAttribute(n, "directions");
    ctx.rewriter->SetAttribute(n, AttrInts("scan_input_directions", d));
  }
  for (size_t k = n->num_outputs(); k-- > 0;) {  // each goes right after the node: last first
    Value* y = n->output(k);
    if (!y) continue;
    OS_ASSIGN_OR_RETURN(Node * back,
                        ctx.rewriter->InsertAfter(y, "Unsqueeze", {y}, {AttrInts("axes", {0})}, ctx.domain));
    ctx.types->Alias(y, back->output(0));
    ctx.emitted->push_back({back, ctx.to_opset()});
    // What the node gives now has no batch axis (a declared type keeps the others).
    if (y->has_type() && y->type()->has_tensor_type() && y->type()->tensor_type().has_shape() &&
        y->type()->tensor_type().shape().dim_size() > 0) {
      auto* dim = y->mutable_info()->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
      dim->erase(dim->begin());
    }
  }
  return absl::OkStatus();
}

// Given:  %Y, %mask = Dropout-7<ratio=0.25>(%X)         (%mask unused)
// Result: %Y = Dropout-10<ratio=0.25>(%X)
//
// Dropout-7's mask has the data's type, Dropout-10's is bool, and what Dropout-7's mask
// holds outside training is not defined as Dropout-10's all-true: an unused mask goes, a
// used one is refused.
Status DropoutMaskUp(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->num_outputs() < 2 || !n->output(1)) return absl::OkStatus();
  if (n->output(1)->HasUsers())
    return ctx.Refuse("the mask output is used: Dropout-7's mask has the data's type, Dropout-10's is bool");
  OS_ASSIGN_OR_RETURN(Node * fresh, ctx.rewriter->DropOutputs(n, 1));
  ctx.node = ctx.replacement = fresh;
  return absl::OkStatus();
}

// Given:  %Y = MeanVarianceNormalization-9(%X)
// Result: %Y = MeanVarianceNormalization-13<axes=[0, 2, 3]>(%X)
//
// The same default, written out: -13's function body reads the axes by reference
// (Constant<value_ints = @axes> from opset 18 on), which onnx's checker refuses when the
// node has none, and every converted model must pass the checker.
Status MeanVarianceNormalizationAxesUp(StepContext& ctx) {
  if (!ctx.node->FindAttribute("axes")) ctx.rewriter->SetAttribute(ctx.node, AttrInts("axes", {0, 2, 3}));
  return absl::OkStatus();
}

}  // namespace onnxsurgeon::opset

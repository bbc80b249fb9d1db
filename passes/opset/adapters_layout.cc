// Downgrade adapters that keep a newer attribute's meaning by moving data around the
// older op: RNN layout=1 (batch first), GatherND batch_dims, DepthToSpace mode=CRD.
// Each is exact: only Transpose/Reshape/Concat and index arithmetic are added, no math
// on the values. Registered in adapters.cc's table.
//
// Example (LSTM-14 -> LSTM-7, layout=1):
//   Before:  Y, Y_h = LSTM<layout=1>(X, W, R)                 X: [batch, seq, input]
//   After:   X0 = Transpose<perm=[1,0,2]>(X)  Y0, H0 = LSTM(X0, W, R)
//            Y = Transpose<perm=[2,0,1,3]>(Y0)  Y_h = Transpose<perm=[1,0,2]>(H0)
#include <cstdint>
#include <vector>

#include "passes/opset/adapters_layout.h"

namespace onnxsurgeon::opset {
namespace {

// Given output `i` of the step's node. Execute routes its users through a new `op` node
// placed right after the node (Y = op(Y_node)), queued for conversion.
Status RouteOutputThrough(StepContext& ctx, size_t i, const std::string& op, std::vector<Value*> extra_inputs,
                          std::vector<onnx::AttributeProto> attributes) {
  Node* n = ctx.node;
  Value* y = n->output(i);
  std::vector<Value*> inputs = {y};
  inputs.insert(inputs.end(), extra_inputs.begin(), extra_inputs.end());
  OS_ASSIGN_OR_RETURN(Node * after,
                      ctx.rewriter->InsertAfter(y, op, std::move(inputs), std::move(attributes), ctx.domain));
  ctx.types->Alias(y, after->output(0));
  ctx.emitted->push_back({after, ctx.to_opset()});
  return absl::OkStatus();
}

}  // namespace

// Given:  %Y, %Y_h = LSTM-14<layout=1>(%X, %W, %R, , , %H0, %C0)
// Result: %Y_t, %Y_h_t = LSTM-7(Transpose<perm=[1,0,2]>(%X), %W, %R, , , Transpose<perm=[1,0,2]>(%H0), ...)
//         %Y = Transpose<perm=[2,0,1,3]>(%Y_t)
//         %Y_h = Transpose<perm=[1,0,2]>(%Y_h_t)
//
// RNN/GRU/LSTM-14's layout=1 puts the batch first:
//   X [batch, seq, input]   initial_h/initial_c [batch, num_dir, hidden]
//   Y [batch, seq, num_dir, hidden]   Y_h/Y_c [batch, num_dir, hidden]
// layout=0 (the only one before 14) is [seq, batch, input], [num_dir, batch, hidden],
// [seq, num_dir, batch, hidden]. So: transpose X and the initial states in, run
// layout=0, transpose the used outputs back. W, R, B, sequence_lens and P have no layout.
Status RecurrentBatchFirstDown(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->GetInt("layout", 0) == 0) return absl::OkStatus();
  ctx.rewriter->RemoveAttribute(n, "layout");
  const std::vector<int64_t> swap01 = {1, 0, 2};
  // Inputs: X (0), initial_h (5), initial_c (6, LSTM only).
  for (size_t i : {size_t{0}, size_t{5}, size_t{6}}) {
    if (i == 6 && n->op_type() != "LSTM") continue;
    if (i >= n->num_inputs() || !n->input(i)) continue;
    ctx.rewriter->SetInput(n, i, ctx.Emit("Transpose", {n->input(i)}, {AttrInts("perm", swap01)})->output(0));
  }
  // Outputs: Y (0) [seq, num_dir, batch, hidden] -> [batch, seq, num_dir, hidden];
  // Y_h (1), Y_c (2) [num_dir, batch, hidden] -> [batch, num_dir, hidden].
  for (size_t i = 0; i < n->num_outputs(); ++i) {
    Value* y = n->output(i);
    if (!y || !y->HasUsers()) continue;
    std::vector<int64_t> perm = i == 0 ? std::vector<int64_t>{2, 0, 1, 3} : swap01;
    OS_RETURN_IF_ERROR(RouteOutputThrough(ctx, i, "Transpose", {}, {AttrInts("perm", perm)}));
  }
  return absl::OkStatus();
}

// Given:  %Y = GatherND-12<batch_dims=1>(%D, %I)
// Result: %Y = Reshape(GatherND-11(%D_flat, Concat<axis=-1>(%batch_index, %I_flat)), %Y_shape)
//
// GatherND-12's batch_dims=b: the first b dims of data and indices are batch dims, and
// each batch gathers from its own slice of data. GatherND-11 has no batch dims, so the
// batch index is written into the indices:
//   D  = Reshape(data, [-1] ++ shape(data)[b:])                       [B, ...]
//   I  = Reshape(indices, [-1] ++ shape(indices)[b:])                 [B, i..., k]
//   G  = Expand(Reshape(Range(0, B, 1), [B, 1, ..., 1]), shape(I)[:-1] ++ [1])
//   Y  = Reshape(GatherND(D, Concat(G, I, axis=-1)), shape(indices)[:-1] ++ shape(data)[b+k:])
// with B the product of the batch dims. Dims may be dynamic; the indices' rank must be known.
Status GatherNDBatchDimsDown(StepContext& ctx) {
  Node* n = ctx.node;
  int64_t b = n->GetInt("batch_dims", 0);
  if (b == 0) return absl::OkStatus();
  if (b < 0) return ctx.Refuse("batch_dims is negative");
  Value* data = n->input(0);
  Value* indices = n->input(1);
  int64_t rank = ctx.types->Rank(indices);
  if (rank < 0) return ctx.Refuse("batch_dims != 0 and the indices' rank is unknown (the batch index grid needs it)");
  if (rank < b + 1) return ctx.Refuse("the indices' rank is not above batch_dims");
  ctx.rewriter->RemoveAttribute(n, "batch_dims");
  Value* first_axis = ctx.Int64s({0});
  Value* zero = first_axis;
  Value* to_end = ctx.Int64s({INT64_MAX});
  Value* minus_one = ctx.Int64s({-1});
  auto slice = [&](Value* v, Value* start, Value* end) {
    return ctx.Emit("Slice", {v, start, end, first_axis})->output(0);
  };
  auto concat = [&](std::vector<Value*> parts) { return ctx.Emit("Concat", parts, {AttrInt("axis", 0)})->output(0); };
  Value* data_shape = ctx.Emit("Shape", {data})->output(0);
  Value* idx_shape = ctx.Emit("Shape", {indices})->output(0);
  Value* batch_end = ctx.Int64s({b});
  Value* flat_data = ctx.Emit("Reshape", {data, concat({minus_one, slice(data_shape, batch_end, to_end)})})->output(0);
  Value* idx_tail = slice(idx_shape, batch_end, to_end);  // [i..., k]
  Value* flat_idx = ctx.Emit("Reshape", {indices, concat({minus_one, idx_tail})})->output(0);
  // B = prod(shape(indices)[:b]) as a scalar; Range(0, B, 1) numbers the batches.
  Value* batch = ctx.Emit("ReduceProd", {slice(idx_shape, zero, batch_end)}, {AttrInt("keepdims", 0)})->output(0);
  Value* range = ctx.Emit("Range", {ctx.Int64s({0}, true), batch, ctx.Int64s({1}, true)})->output(0);
  std::vector<int64_t> column(rank - b + 1, 1);  // [B, 1, ..., 1]: rank of flat_idx
  column[0] = -1;
  Value* column_idx = ctx.Emit("Reshape", {range, ctx.Int64s(column)})->output(0);
  Value* flat_idx_shape = ctx.Emit("Shape", {flat_idx})->output(0);
  Value* grid_shape = concat({slice(flat_idx_shape, zero, minus_one), ctx.Int64s({1})});
  Value* grid = ctx.Emit("Expand", {column_idx, grid_shape})->output(0);
  Value* full_idx = ctx.Emit("Concat", {grid, flat_idx}, {AttrInt("axis", -1)})->output(0);
  // Result shape: shape(indices)[:-1] ++ shape(data)[b + k:], k = shape(indices)[-1].
  Value* k = slice(idx_shape, minus_one, to_end);
  Value* data_tail = slice(data_shape, ctx.Emit("Add", {k, batch_end})->output(0), to_end);
  Value* out_shape = concat({slice(idx_shape, zero, minus_one), data_tail});
  ctx.rewriter->SetInput(n, 0, flat_data);
  ctx.rewriter->SetInput(n, 1, full_idx);
  return RouteOutputThrough(ctx, 0, "Reshape", {out_shape}, {});
}

// Given:  %Y = DepthToSpace-11<blocksize=2, mode="CRD">(%X)   %X: [1, 8, 2, 3]
// Result: %S = Reshape(%X, [0, 2, 2, 2, 2, 3])
//         %Y = Reshape(Transpose<perm=[0,1,4,2,5,3]>(%S), [0, 2, 4, 6])
//
// DepthToSpace-11's mode=CRD (column-row-depth: channel c*b*b + i*b + j goes to
// (c, h*b + i, w*b + j)); DepthToSpace-1 knows only DCR. Written out:
//   Y = Reshape(Transpose<perm=[0,1,4,2,5,3]>(Reshape(X, [N, C/(b*b), b, b, H, W])), [N, C/(b*b), H*b, W*b])
// N is copied by Reshape's 0; C/(b*b), H and W are constants when static, else C/(b*b)
// is Reshape's -1 and H, W are read with Shape.
Status DepthToSpaceCrdDown(StepContext& ctx) {
  Node* n = ctx.node;
  const Attribute* mode = n->FindAttribute("mode");
  if (!mode || mode->s() == "DCR") {
    ctx.rewriter->RemoveAttribute(n, "mode");
    return absl::OkStatus();
  }
  if (mode->s() != "CRD") return ctx.Refuse("mode='" + mode->s() + "' is not a DepthToSpace mode");
  int64_t bs = n->GetInt("blocksize", 0);
  if (bs <= 0) return ctx.Refuse("blocksize is missing or not positive");
  Value* x = n->input(0);
  auto dims = ctx.types->Dims(x);
  if (dims && dims->size() != 4) return ctx.Refuse("the input is not 4-D");
  if (dims && (*dims)[1] >= 0 && (*dims)[1] % (bs * bs) != 0)
    return ctx.Refuse("the channel count is not a multiple of blocksize^2");
  Value* split_shape;
  Value* merged_shape;
  int64_t c = dims && (*dims)[1] >= 0 ? (*dims)[1] / (bs * bs) : -1;  // -1: inferred by Reshape
  if (dims && (*dims)[2] >= 0 && (*dims)[3] >= 0) {
    int64_t h = (*dims)[2], w = (*dims)[3];
    // Before Reshape-14 a 0 in the shape copies the input's dim: an empty axis cannot be written.
    if (h == 0 || w == 0)
      return ctx.Refuse("an empty spatial dim cannot be written in a Reshape shape before opset 14");
    split_shape = ctx.Int64s({0, c, bs, bs, h, w});
    merged_shape = ctx.Int64s({0, c, h * bs, w * bs});
  } else {
    Value* hw =
        ctx.Emit("Slice", {ctx.Emit("Shape", {x})->output(0), ctx.Int64s({2}), ctx.Int64s({4}), ctx.Int64s({0})})
            ->output(0);
    split_shape = ctx.Emit("Concat", {ctx.Int64s({0, c, bs, bs}), hw}, {AttrInt("axis", 0)})->output(0);
    Value* hw_scaled = ctx.Emit("Mul", {hw, ctx.Int64s({bs})})->output(0);
    merged_shape = ctx.Emit("Concat", {ctx.Int64s({0, c}), hw_scaled}, {AttrInt("axis", 0)})->output(0);
  }
  Value* split = ctx.Emit("Reshape", {x, split_shape})->output(0);
  Value* moved = ctx.Emit("Transpose", {split}, {AttrInts("perm", {0, 1, 4, 2, 5, 3})})->output(0);
  Node* y = ctx.Emit("Reshape", {moved, merged_shape});
  ctx.types->Alias(n->output(0), y->output(0));
  OS_RETURN_IF_ERROR(ctx.rewriter->ReplaceNode(n, {y->output(0)}));
  ctx.node = nullptr;  // replaced
  return absl::OkStatus();
}

}  // namespace onnxsurgeon::opset

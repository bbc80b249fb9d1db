// Downgrade adapters for quantized weights (adapters_quant.h).
#include "passes/opset/adapters_quant.h"

#include <string>
#include <string_view>
#include <vector>

#include "core/ir/graph.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::opset {

namespace {

// The 4-bit constant `v` (int4 or uint4; packed: two per byte, low nibble first) as an int8
// or uint8 initializer holding the same integers; null when it is not such a constant.
StatusOr<Value*> WidenedFourBit(StepContext& ctx, Value* v) {
  using T = onnx::TensorProto;
  if (!v || !v->IsInitializer() || v->IsGraphInput()) return nullptr;
  const Tensor& init = *v->initializer();
  const int32_t type = init.meta().data_type();
  if (type != T::INT4 && type != T::UINT4) return nullptr;
  const bool is_signed = type == T::INT4;
  const int64_t n = init.NumElements();
  // raw_data or int32_data packed two per byte (the standard form), or int32_data with one
  // element per entry (what onnx's text parser writes).
  std::vector<int> nibbles;
  auto unpack = [&](auto bytes, size_t size) {
    for (int64_t i = 0; i < n && static_cast<size_t>(i / 2) < size; ++i)
      nibbles.push_back((static_cast<uint8_t>(bytes(static_cast<size_t>(i / 2))) >> (4 * (i % 2))) & 0xF);
  };
  const auto& ints = init.meta().int32_data();
  if (init.has_raw_bytes()) {
    std::string_view raw = init.raw_bytes();
    unpack([&](size_t k) { return raw[k]; }, raw.size());
  } else if (n > 1 && static_cast<int64_t>(ints.size()) == n) {
    for (int32_t e : ints) nibbles.push_back(e & 0xF);
  } else {
    unpack([&](size_t k) { return ints[static_cast<int>(k)] & 0xFF; }, static_cast<size_t>(ints.size()));
  }
  if (n < 0 || nibbles.size() != static_cast<size_t>(n)) return nullptr;
  std::string wide(static_cast<size_t>(n), '\0');
  for (int64_t i = 0; i < n; ++i) {
    int nibble = nibbles[static_cast<size_t>(i)];
    if (is_signed && nibble >= 8) nibble -= 16;
    wide[static_cast<size_t>(i)] = static_cast<char>(nibble);
  }
  Tensor t;
  t.mutable_meta().set_data_type(is_signed ? T::INT8 : T::UINT8);
  for (int64_t d : init.meta().dims()) t.mutable_meta().add_dims(d);
  t.SetRawBytes(std::move(wide));
  Graph* g = ctx.node->graph();
  return ctx.rewriter->AddInitializer(g, g->UniqueName(v->name() + "_8bit"), std::move(t));
}

}  // namespace

// Given:  %Y = DequantizeLinear-21<axis=0>(%W, %s, %z)   %W, %z: int4 | uint4 constants
// Result: %Y = DequantizeLinear-19<axis=0>(%W8, %s, %z8)  %W8, %z8: int8 | uint8, the same integers
//
// A stored 4-bit weight, per tensor or per axis, widened: the dequantized values are
// bit-identical ((q - z) * s of the same integers), the model stays quantized (twice the
// weight bytes). Blocked quantization and computed 4-bit values stay refused below.
Status WidenFourBitWeight(StepContext& ctx) {
  Node* n = ctx.node;
  if (n->GetInt("block_size", 0) != 0 || n->op_type() != "DequantizeLinear") return absl::OkStatus();
  OS_ASSIGN_OR_RETURN(Value * w, WidenedFourBit(ctx, n->input(0)));
  if (!w) return absl::OkStatus();
  Value* z = n->num_inputs() > 2 ? n->input(2) : nullptr;
  Value* z8 = nullptr;
  if (z) {
    OS_ASSIGN_OR_RETURN(z8, WidenedFourBit(ctx, z));
    if (!z8) return absl::OkStatus();  // a 4-bit weight with a zero point not readable: refused below
  }
  ctx.rewriter->SetInput(n, 0, w);
  if (z8) ctx.rewriter->SetInput(n, 2, z8);
  return absl::OkStatus();
}

}  // namespace onnxsurgeon::opset

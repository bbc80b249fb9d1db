// What the attention rules of lower-contrib-ops share (Attention, MultiHeadAttention,
// GroupQueryAttention): heads split and merged, the additive mask onnxruntime's CPU kernels
// build (attention_cpu_base.h's PrepareMask), and softmax(scale Q K^T + mask) V.
//
//   scores = MatMul(Q, Transpose(K)) * scale (softcapped) + mask (+ attention_bias)  [B, N, S, T]
//   mask   = key padding (0 where a key is kept, mask_filter_value where it is not), then
//            causal: the lowest value of T where key j is after query i (j > T - S + i)
//   output = Reshape(Transpose(MatMul(Softmax(scores), V), [0, 2, 1, 3]), [0, 0, -1])
// float16 / bfloat16: scores, mask and Softmax in float (Cast up after the first MatMul, down
// before the second).
#pragma once

#include <cstdint>

#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::contrib {

// How the key padding mask (Attention's mask_index, MultiHeadAttention's key_padding_mask)
// reads, by its shape.
enum class MaskKind {
  kNone,
  kRaw2D,       // [B, T] of 0 (masked) / 1
  kRaw3D,       // [B, S, T] of 0 / 1
  kLengths,     // [B]: the keys at and after mask[b] are masked (right padding)
  kEndsStarts,  // [2B]: ends, then starts: keys before start or at and after end are masked
  kOneD,        // [B] or [2B], not known which (a dynamic batch size): told apart at run time,
                // the starts read as zeros past the mask's end
};

struct AttentionSpec {
  Value* q;               // [B, N, S, H]
  Value* k;               // [B, N, T, H]
  Value* v;               // [B, N, T, Hv]
  Value* mask = nullptr;  // int32, read as `mask_kind`
  MaskKind mask_kind = MaskKind::kNone;
  Value* attention_bias = nullptr;  // [B or 1, N or 1, S, T]
  bool causal = false;
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: scores = softcap * Tanh(scores / softcap), before the mask
  float mask_filter_value = -10000.0f;
  int32_t type = 0;  // T's element type
};

// [B, S, N * H] -> [B, N, S, H].
Value* SplitHeads(Rewriter& rw, Value* x, int64_t num_heads);
// A rank-0 int64: dim `axis` of x's shape.
Value* DimOf(Rewriter& rw, Value* x, int64_t axis);
// The lowest finite value of a float type (float16: -65504), as onnxruntime's causal mask.
double LowestOf(int32_t type);
// A rank-0 constant of `type`.
StatusOr<Value*> ScalarOf(Rewriter& rw, int32_t type, double v);
// softmax(scale Q K^T + mask) V, heads merged: [B, S, N * Hv].
StatusOr<Value*> EmitAttention(Rewriter& rw, const AttentionSpec& spec);

}  // namespace onnxsurgeon::contrib

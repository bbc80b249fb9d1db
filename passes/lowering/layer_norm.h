// Emitting LayerNormalization as standard ops older opsets know. Shared by
// decompose-layernorm, fix-layernorm(to=decomposed) and the opset converter (< 17).
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/status.h"
#include "core/ir/value.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::lowering {

struct LayerNormSpec {
  Value* x = nullptr;
  Value* scale = nullptr;   // optional (null: ones)
  Value* bias = nullptr;    // optional
  int64_t axis = -1;        // first normalized axis; >= 0 needs `rank`
  float epsilon = 1e-5f;
  int32_t elem_type = 0;    // x's TensorProto data type; 0: unknown (CastLike, opset >= 15)
  int32_t stash_type = 1;   // precision of mean/variance (LayerNormalization's stash_type)
  int64_t rank = -1;        // x's rank when known
  // The normalized axes when they are not the trailing ones (LayerNorm2d over axis 1 of
  // NCHW, scale/bias [C,1,1]): used instead of `axis`. Empty: axis..rank-1.
  std::vector<int64_t> axes;
};

struct LayerNormParts {
  Value* y = nullptr;
  Value* mean = nullptr;         // in stash type, reduced dims kept (LayerNormalization's Mean)
  Value* inv_std_dev = nullptr;  // in stash type (LayerNormalization's InvStdDev)
};

// The normalized axes as negative indices [axis - rank, ..., -1] (or [axis, ..., -1]).
StatusOr<std::vector<int64_t>> NormalizedAxes(int64_t axis, int64_t rank);

// Given a LayerNormalization's operands and the target opset of the default domain.
// Execute emits, at the rewriter's insertion point,
//   x' = Cast(x, stash)                      (only when x is not in the stash type)
//   mean = ReduceMean(x', axes)  d = Sub(x', mean)  var = ReduceMean(Pow(d, 2), axes)
//   std = Sqrt(Add(var, eps))    n = Div(d, std)    n' = Cast(n, x's type) (if cast above)
//   y = Add(Mul(n', scale), bias)
// with ReduceMean's axes as an attribute below opset 18 and as an input from 18 on, the
// form runtimes without LayerNormalization (and their own LayerNorm fusions) expect.
// inv_std_dev is only built when `want_inv_std_dev`.
// `scale`/`bias` null: no Mul/Add. Result the parts, or an error when the axes cannot be
// known (axis >= 0, unknown rank).
StatusOr<LayerNormParts> EmitLayerNormDecomposition(Rewriter& rewriter, const LayerNormSpec& spec, int64_t opset,
                                                    bool want_inv_std_dev = false);


}  // namespace onnxsurgeon::lowering

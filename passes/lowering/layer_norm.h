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
  Value* scale = nullptr;  // optional (null: ones)
  Value* bias = nullptr;   // optional
  int64_t axis = -1;       // first normalized axis; >= 0 needs `rank`
  float epsilon = 1e-5f;
  int32_t elem_type = 0;   // x's TensorProto data type; 0: unknown (CastLike, opset >= 15)
  int32_t stash_type = 1;  // precision of mean/variance (LayerNormalization's stash_type)
  int64_t rank = -1;       // x's rank when known
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

// Emits a LayerNormalization's decomposition at the rewriter's insertion point, in the form
// runtimes without LayerNormalization (and their own LayerNorm fusions) expect:
//   Given:   %y = LayerNormalization<axis=-1, epsilon=1e-5>(%x, %scale, %bias)   opset 17
//   Result:  %x' = Cast<to=stash>(%x)                    (only when %x is not in the stash type)
//            %mean = ReduceMean<axes=[-1]>(%x')
//            %d = Sub(%x', %mean)
//            %var = ReduceMean<axes=[-1]>(Pow(%d, 2.0))
//            %std = Sqrt(Add(%var, 1e-5))
//            %n = Div(%d, %std)                          (Cast back to %x's type if cast above)
//            %y' = Add(Mul(%n, %scale), %bias)           (scale/bias null: no Mul/Add)
// ReduceMean's axes are an attribute below opset 18 and an input from 18 on. inv_std_dev is
// only built when `want_inv_std_dev`. Error when the axes cannot be known (axis >= 0,
// unknown rank).
StatusOr<LayerNormParts> EmitLayerNormDecomposition(Rewriter& rewriter, const LayerNormSpec& spec, int64_t opset,
                                                    bool want_inv_std_dev = false);

}  // namespace onnxsurgeon::lowering

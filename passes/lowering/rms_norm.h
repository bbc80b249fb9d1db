// Emitting RMS normalization (onnxruntime's SimplifiedLayerNormalization, opset 23's
// RMSNormalization) as standard ops every opset knows. Shared by lower-contrib-ops.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/status.h"
#include "core/ir/value.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::lowering {

struct RmsNormSpec {
  Value* x = nullptr;
  Value* scale = nullptr;     // optional (null: ones)
  std::vector<int64_t> axes;  // the normalized axes (NormalizedAxes in layer_norm.h)
  float epsilon = 1e-5f;
  int32_t elem_type = 0;   // x's TensorProto data type: a float type
  int32_t scale_type = 0;  // scale's, which y takes (onnxruntime's V); 0: x's
  int32_t stash_type = 1;  // the precision the statistics and the scaling are computed in
};

struct RmsNormParts {
  Value* y = nullptr;
  Value* inv_std_dev = nullptr;  // 1 / sqrt(mean(x^2) + eps), in stash type, reduced dims kept
};

// Emits x / sqrt(mean(x^2) + epsilon) * scale at the rewriter's insertion point, computed
// in the stash type as onnxruntime's kernel does (x and scale cast up, y cast back):
//   Given:   %y = SimplifiedLayerNormalization<axis=-1, epsilon=1e-5>(%x, %w)   (float16)
//   Result:  %x' = Cast<to=FLOAT>(%x)
//            %ms = ReduceMean<axes=[-1]>(Mul(%x', %x'))
//            %r = Sqrt(Add(%ms, 1e-5))
//            %y' = Cast<to=FLOAT16>(Mul(Div(%x', %r), Cast<to=FLOAT>(%w)))
// (no Cast of a value already in the stash type; y is cast to scale's type). ReduceMean's axes are an attribute below
// opset 18 and an input from 18 on. inv_std_dev (Reciprocal(%r)) only when asked for.
StatusOr<RmsNormParts> EmitRmsNorm(Rewriter& rewriter, const RmsNormSpec& spec, int64_t opset,
                                   bool want_inv_std_dev = false);

}  // namespace onnxsurgeon::lowering

// Downgrade adapters that keep a newer attribute's meaning by moving data around the
// older op (adapters_layout.cc). Internal to passes/opset; registered in adapters.cc.
#pragma once

#include "passes/opset/step.h"

namespace onnxsurgeon::opset {

// RNN/GRU/LSTM-14 -> 7: layout=1 (batch first) through Transposes around layout 0.
Status RecurrentBatchFirstDown(StepContext& ctx);
// GatherND-12 -> 11: batch_dims != 0 as the batch index prepended to the indices.
Status GatherNDBatchDimsDown(StepContext& ctx);
// DepthToSpace-11 -> 1: mode=CRD as Reshape/Transpose/Reshape.
Status DepthToSpaceCrdDown(StepContext& ctx);

}  // namespace onnxsurgeon::opset

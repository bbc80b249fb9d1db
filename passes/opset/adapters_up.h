// Upgrade adapters whose step moves meaning the two schemas do not show
// (adapters_up.cc). Internal to passes/opset; registered in adapters.cc.
#pragma once

#include "passes/opset/step.h"

namespace onnxsurgeon::opset {

// GroupNormalization-18 -> 21: scale/bias per group become per channel; stash_type = X's type.
Status GroupNormalizationPerChannelUp(StepContext& ctx);
// BatchNormalization-9 -> 14: outputs besides Y (training mode at 9) become training_mode=1.
Status BatchNormalizationTrainingUp(StepContext& ctx);
// Scan-8 -> 9: a batch of one without sequence_lens, as Scan-9 between Squeeze and Unsqueeze.
Status ScanBatchOfOneUp(StepContext& ctx);
// Dropout-7 -> 10: the mask's type changes (the data's -> bool): dropped when unused, else refused.
Status DropoutMaskUp(StepContext& ctx);
// MeanVarianceNormalization-9 -> 13: the default axes written out for onnx's checker.
Status MeanVarianceNormalizationAxesUp(StepContext& ctx);

}  // namespace onnxsurgeon::opset

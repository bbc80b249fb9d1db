// Declarations of every pass's registration function; passes/registry.cc lists them in
// one table. Adding a pass: write passes/<name>.cc defining <Name>PassInfo(), declare it
// here, add it to the table.
#pragma once

#include "core/pass/pass.h"

namespace onnxsurgeon::passes {

PassInfo NopPassInfo();
PassInfo DcePassInfo();
PassInfo ToposortPassInfo();
PassInfo InlineFunctionsPassInfo();
PassInfo FoldConstantsPassInfo();
PassInfo ResolveShapesPassInfo();
PassInfo FixLayerNormPassInfo();
PassInfo DecomposeLayerNormPassInfo();
PassInfo StripIdentityCastPassInfo();
PassInfo RemoveInitializerInputsPassInfo();
PassInfo DedupeInitializersPassInfo();
PassInfo ExtractConstantsPassInfo();
PassInfo SetInputShapePassInfo();
PassInfo CsePassInfo();
PassInfo FuseConvBnPassInfo();
PassInfo FoldIntoWeightsPassInfo();
PassInfo FuseTransposesPassInfo();
PassInfo FuseReshapesPassInfo();
PassInfo SimplifyPassInfo();
PassInfo FuseGeluPassInfo();
PassInfo RewriteGeluPassInfo();
PassInfo RewriteErfPassInfo();
PassInfo RewriteReciprocalPassInfo();
PassInfo RewriteGlobalPoolPassInfo();
PassInfo DropReshapeAllowzeroPassInfo();
PassInfo RewriteCastLikePassInfo();
PassInfo LowerScatterNDReductionPassInfo();
PassInfo RewriteIndexPutPassInfo();
PassInfo ConvertOpsetPassInfo();
PassInfo DowngradeOpsetPassInfo();
PassInfo UpgradeOpsetPassInfo();
PassInfo ExtractPassInfo();
PassInfo ConvertFloat16PassInfo();
PassInfo LowerIrVersionPassInfo();
PassInfo PruneOpsetImportsPassInfo();
PassInfo InferShapesPassInfo();
PassInfo InlineWeightsPassInfo();
PassInfo TargetPassInfo();
PassInfo FixDeclaredShapesPassInfo();

}  // namespace onnxsurgeon::passes

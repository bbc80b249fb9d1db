// The pass table: every pass onnxsurgeon knows, in the order `onnxsurgeon passes` lists them.
#include "passes/registry.h"

namespace onnxsurgeon {

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> table = {
      passes::NopPassInfo(),
      passes::DcePassInfo(),
      passes::ToposortPassInfo(),
      passes::InlineFunctionsPassInfo(),
      passes::FoldConstantsPassInfo(),
      passes::ResolveShapesPassInfo(),
      passes::FixLayerNormPassInfo(),
      passes::DecomposeLayerNormPassInfo(),
      passes::StripIdentityCastPassInfo(),
      passes::RemoveInitializerInputsPassInfo(),
      passes::DedupeInitializersPassInfo(),
      passes::ExtractConstantsPassInfo(),
      passes::SetInputShapePassInfo(),
      passes::CsePassInfo(),
      passes::FuseConvBnPassInfo(),
      passes::FoldIntoWeightsPassInfo(),
      passes::FuseTransposesPassInfo(),
      passes::FuseReshapesPassInfo(),
      passes::SimplifyPassInfo(),
      passes::FuseGeluPassInfo(),
      passes::RewriteGeluPassInfo(),
      passes::RewriteErfPassInfo(),
      passes::RewriteReciprocalPassInfo(),
      passes::RewriteGlobalPoolPassInfo(),
      passes::DropReshapeAllowzeroPassInfo(),
      passes::RewriteCastLikePassInfo(),
      passes::RewriteIndexPutPassInfo(),
      passes::LowerScatterNDReductionPassInfo(),
      passes::ConvertOpsetPassInfo(),
      passes::DowngradeOpsetPassInfo(),
      passes::UpgradeOpsetPassInfo(),
      passes::ExtractPassInfo(),
      passes::ConvertFloat16PassInfo(),
      passes::LowerIrVersionPassInfo(),
      passes::PruneOpsetImportsPassInfo(),
      passes::InferShapesPassInfo(),
      passes::InlineWeightsPassInfo(),
      passes::TargetPassInfo(),
      passes::FixDeclaredShapesPassInfo(),
  };
  return table;
}

}  // namespace onnxsurgeon

// The pass table: every pass onnxsurgeon knows, in the order `onnxsurgeon passes` lists them.
#include "passes/registry.h"

namespace onnxsurgeon {

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> table = {
      passes::NopPassInfo(),
      passes::DcePassInfo(),
      passes::ToposortPassInfo(),
      passes::InlineFunctionsPassInfo(),
      passes::ConvertOpsetPassInfo(),
      passes::DowngradeOpsetPassInfo(),
      passes::UpgradeOpsetPassInfo(),
  };
  return table;
}

}  // namespace onnxsurgeon

#include "passes/reductions/rules.h"

#include "passes/reductions/rules_internal.h"

namespace onnxsurgeon::reductions {

std::vector<std::unique_ptr<RewriteRule>> MakeRules(bool assume_finite) {
  std::vector<std::unique_ptr<RewriteRule>> rules;
  AddSumToMeanRules(rules);
  AddSizeOneAxisRules(rules, assume_finite);
  return rules;
}

const std::vector<std::string>& RootOps() {
  static const std::vector<std::string> ops = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd",
                                               "ArgMax",     "ArgMin",    "Softmax",   "LogSoftmax"};
  return ops;
}

}  // namespace onnxsurgeon::reductions

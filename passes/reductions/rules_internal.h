// Shared by the files of passes/reductions.
#pragma once

#include <optional>
#include <vector>

#include "core/rewrite/rule.h"

namespace onnxsurgeon::reductions {

// A Reduce* node's axes as written (attribute, or constant input), empty when none;
// nullopt when the axes input is not a constant.
std::optional<std::vector<int64_t>> WrittenAxes(const Node& reduce);

void AddSumToMeanRules(std::vector<std::unique_ptr<RewriteRule>>& rules);
void AddSizeOneAxisRules(std::vector<std::unique_ptr<RewriteRule>>& rules, bool assume_finite);

}  // namespace onnxsurgeon::reductions

// A pass that writes each node of one op as the Reshape it equals, for runtimes that
// mistranslate that op but get the Reshape right (transpose-to-reshape, flatten-to-reshape).
// The op's own fact (reshape_facts.h) decides the Reshape's shape or says why there is none.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/node.h"
#include "core/pass/pass.h"

namespace onnxsurgeon::passes::reshapes {

// Given a node of the op. Result the Reshape's shape input (-1 for one dynamic dim), or
// nullopt and why not.
using ReshapeShapeOf = std::optional<std::vector<int64_t>> (*)(const Node& node, std::string* why);

// Given the rule's name, the op and its fact. Result the pass: one rule, `name`, that
// replaces each such node by Reshape(x, shape), keeping the output's declared type; the
// model's types are inferred first when the op's inputs lack them.
std::unique_ptr<Pass> MakeAsReshapePass(const char* name, const char* op, ReshapeShapeOf shape_of);

}  // namespace onnxsurgeon::passes::reshapes

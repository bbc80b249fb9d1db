// Converting control-flow nodes innermost first. The greedy driver queues every node of
// every subgraph; replacing an If or a Loop frees its subgraphs, and with them nodes still
// queued. Converting in post order (a node after everything nested in it) never visits a
// freed node, and a nested If or Loop is converted (or refused) before the one holding it.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/ir/model.h"
#include "core/pass/pass.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::passes::control_flow {

// Given a node of `op_type`, converts it through `rw` and returns "", or returns why not
// (touching nothing).
using ConvertNode = std::function<StatusOr<std::string>(Node* node, Rewriter& rw)>;

// Runs `convert` on every default-domain `op_type` node of the model (main graph, function
// bodies, their subgraphs), innermost first, with a Rewriter stamping `rule` and telling
// `listener`. Refusals go to --debug-patterns as the greedy driver reports them; the result
// counts conversions under `rule`.
StatusOr<PassResult> ConvertInnermostFirst(Model& model, const PassContext& context, std::string_view op_type,
                                           const std::string& rule, RewriteListener* listener,
                                           const ConvertNode& convert);

}  // namespace onnxsurgeon::passes::control_flow

// Inlining one call of a model-local function; the inline-functions pass and passes that
// inline selectively (fix-layernorm) share it.
#pragma once

#include "core/ir/function.h"
#include "core/ir/model.h"
#include "core/pass/pass.h"

namespace onnxsurgeon::passes {

// Given a call node (in the main graph or a subgraph) and the function it calls.
// Execute clones the body before the call with the call's inputs, attributes resolved
// (ref_attr_name: the call's value, else the function's default), rewires the call's
// outputs (graph output names kept) and erases the call; the body's opset imports must
// agree with the model's (a missing domain is imported).
// Result the call is gone; result counts "calls-inlined".
Status InlineCall(Model& model, Node* call, const Function& f, PassResult& result);

}  // namespace onnxsurgeon::passes

// loop-carry-outer-values: makes a Loop body read the enclosing graph's computed values
// through loop-carried values instead of by scope: each such value v becomes a new
// loop-carried input of the Loop (initial value v), a new body input the body reads in
// place of v, a body output Identity(that input) (so it is carried unchanged), and a new
// Loop output (its final value, unused). For converters that build the body apart from
// the main graph: onnx2tf 1.29.24 converts it inside tf.while_loop, where a main-graph
// value is a symbolic Keras tensor, and refuses the model ("found return value of type
// KerasTensor"; control_flow_op17, measured here); carried, it converts and matches.
//
// Exact: the body sees the same v in every iteration (it is carried by Identity, and
// nothing else writes it), which is what reading v by scope gives; the Loop's other
// outputs are unchanged, and its new output is unused. Constants (initializers, Constant
// outputs) are left as they are read: they are not computed values. Only Loops without
// scan outputs (new carried values go before the scan outputs, and a node's outputs can
// only be appended), and only values of known type (the new body input needs one).
//
// Options: none.
//
// Given:  %y = Loop(%n, %c, %h0) <body: (%i, %cond, %h) => (%cond, %h2) { %h2 = Add(%h, %x) }>
// Result: %y, %x_final = Loop(%n, %c, %h0, %x)
//             <body: (%i, %cond, %h, %xc) => (%cond, %h2, %xo) { %h2 = Add(%h, %xc)  %xo = Identity(%xc) }>
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

bool IsConstantValue(const Value* v) {
  if (v->IsInitializer() && !v->IsGraphInput()) return true;
  return v->producer() && v->producer()->Is("Constant");
}

// `g` and every graph nested in its nodes.
void Collect(Graph* g, std::vector<Graph*>& out) {
  out.push_back(g);
  for (Node* n : g->nodes())
    for (Graph* sub : n->subgraphs()) Collect(sub, out);
}

struct CarryPlan {
  Graph* body = nullptr;
  std::vector<Graph*> inner;  // body and the graphs nested in it
  std::vector<Value*> outer;  // in order of first read
};

class CarryOuterValues : public NodeRule<CarryPlan> {
 public:
  CarryOuterValues() : NodeRule("loop-carry-outer-values", "Loop") {}

 protected:
  Verdict<CarryPlan> Check(Node* root, RewriteFacts&) const override {
    CarryPlan plan;
    std::vector<Graph*> subs = root->subgraphs();
    if (subs.size() != 1) return Refuse("it has no body");
    plan.body = subs[0];
    Collect(plan.body, plan.inner);
    auto inside = [&](const Graph* g) {
      return std::find(plan.inner.begin(), plan.inner.end(), g) != plan.inner.end();
    };
    auto consider = [&](Value* v) {
      if (!v || inside(v->graph()) || IsConstantValue(v)) return;
      if (std::find(plan.outer.begin(), plan.outer.end(), v) == plan.outer.end()) plan.outer.push_back(v);
    };
    for (Graph* g : plan.inner) {
      for (Node* n : g->nodes())
        for (Value* v : n->inputs()) consider(v);
      for (Value* v : g->outputs()) consider(v);
    }
    if (plan.outer.empty()) return Refuse("its body reads no computed value of an enclosing graph");
    const size_t carried = root->num_inputs() >= 2 ? root->num_inputs() - 2 : 0;
    if (plan.body->outputs().size() > 1 + carried)
      return Refuse(absl::StrCat("it has scan outputs (", plan.body->outputs().size() - 1 - carried,
                                 "): new carried values would have to go before them"));
    if (plan.body->outputs().size() != 1 + carried || root->num_outputs() != carried)
      return Refuse(absl::StrCat("its body's ", plan.body->outputs().size(), " outputs and its ", root->num_outputs(),
                                 " outputs do not match its ", carried, " carried values"));
    for (Value* v : plan.outer)
      if (!v->has_type())
        return Refuse(absl::StrCat("the type of '", v->name(), "' is unknown (run infer-shapes first)"));
    return plan;
  }

  Status Replace(Node* root, CarryPlan plan, Rewriter& rw) const override {
    auto inside = [&](const Graph* g) {
      return std::find(plan.inner.begin(), plan.inner.end(), g) != plan.inner.end();
    };
    for (Value* v : plan.outer) {
      onnx::ValueInfoProto info;
      *info.mutable_type() = *v->type();
      OS_ASSIGN_OR_RETURN(Value * carried, rw.AddGraphInput(plan.body, "", info));
      const std::vector<Use> uses = v->uses();
      for (const Use& u : uses)
        if (inside(u.node->graph())) rw.SetInput(u.node, static_cast<size_t>(u.input_index), carried);
      const std::vector<GraphOutputUse> outputs = v->graph_outputs();
      for (const GraphOutputUse& o : outputs)
        if (inside(o.graph)) rw.SetGraphOutput(o.graph, static_cast<size_t>(o.output_index), carried);
      rw.SetInsertionPointAtEnd(plan.body);
      Value* through = rw.Op("Identity", {carried});
      *through->mutable_info()->mutable_type() = *v->type();
      rw.AddGraphOutput(plan.body, through);
      rw.AddInput(root, v);
      Value* final_value = rw.AddOutput(root);
      *final_value->mutable_info()->mutable_type() = *v->type();
    }
    return absl::OkStatus();
  }
};

class LoopCarryOuterValuesPass : public PatternPass {
 public:
  LoopCarryOuterValuesPass() { AddRule(std::make_unique<CarryOuterValues>()); }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateLoopCarryOuterValuesPass(const PassOptions&) {
  return std::make_unique<LoopCarryOuterValuesPass>();
}

}  // namespace onnxsurgeon::passes

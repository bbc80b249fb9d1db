// outer-scope-input: a subgraph of the node (or one nested in it) reads a value of a graph
// outside the node's subgraphs that is not a constant. onnx2tf builds a Loop body inside
// tf.while_loop, where such a value is a symbolic Keras tensor of the outer model.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

void CollectSubgraphs(const Graph* g, std::vector<const Graph*>& out) {
  out.push_back(g);
  for (const Node* m : g->nodes())
    for (Graph* sub : m->subgraphs()) CollectSubgraphs(sub, out);
}

class OuterScopeInputCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    std::vector<const Graph*> inner;
    for (Graph* sub : n.subgraphs()) CollectSubgraphs(sub, inner);
    for (const Graph* g : inner)
      for (const Node* m : g->nodes())
        for (const Value* v : m->inputs()) {
          if (!v || IsConstant(v) || std::find(inner.begin(), inner.end(), v->graph()) != inner.end()) continue;
          *detail = absl::StrCat("its body reads '", v->name(), "' of the enclosing graph");
          return true;
        }
    return false;
  }
  // loop-carry-outer-values carries them for a Loop without scan outputs (new carried values
  // would have to go before those); any other Loop is unroll-loop's to remove, if it can.
  bool RemedyApplies(const Node& n, const RemedyContext&) const override {
    if (!n.Is("Loop") || n.subgraphs().size() != 1) return false;
    const size_t carried = n.num_inputs() >= 2 ? n.num_inputs() - 2 : 0;
    return n.subgraphs()[0]->outputs().size() == 1 + carried;
  }
  std::string WhyNoRemedy(const Node& n, const RemedyContext&) const override {
    return absl::StrCat("no onnxsurgeon pass makes a ", n.op_type(), " subgraph carry the outer values it reads");
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<OuterScopeInputCondition>();
}

}  // namespace

extern const ConditionKind kOuterScopeInput = {
    "outer-scope-input", "outer-scope-input",
    "a subgraph of the node (or one nested in it) reads a value of an enclosing graph that is not a constant",
    "loop-carry-outer-values", Parse};

}  // namespace onnxsurgeon::target

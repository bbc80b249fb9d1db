// transpose-view: Transpose(x, perm) that only moves dims of size 1 (the dims above 1 keep
// their order, so every element keeps its row-major offset) is Reshape(x, its output dims).
// Written so only where a Reshape (or Squeeze, Unsqueeze, Flatten) is beside it: its input's
// producer, read only by it, or its only reader; reshape-chain and view-of-reshape then
// merge the two, one node fewer. A bidirectional LSTM's [T,2,1,H] -> [T,1,2,H] before the
// Reshape to [T,1,2H] is the common case.
//
// Not when a MatMul of two computed values is beside it: Reshape -> Transpose(0,2,1,3) ->
// MatMul(q, k) is attention's head split (and MatMul(p, v) -> Transpose -> Reshape its
// merge), which is a view exactly when there is one head, and the form onnxruntime's
// attention fusions match. A linear layer's MatMul (constant weight) does not block it.
//
// Given:  %t = Transpose<perm=[0,2,1,3]>(%h)      %h: [20,2,1,16]
//         %y = Reshape(%t, [20,1,32])
// Result: %r = Reshape(%h, [20,1,2,16])           %y = Reshape(%r, [20,1,32])   (then one Reshape)
#include "passes/reshapes/transpose_view.h"

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "passes/reshapes/reshape_facts.h"

namespace onnxsurgeon::passes::reshapes {
namespace {

bool IsView(const Node* n) {
  return n && n->domain().empty() && (n->Is("Reshape") || n->Is("Squeeze") || n->Is("Unsqueeze") || n->Is("Flatten"));
}

// A MatMul neither of whose operands is a constant: attention's scores or context, not a
// linear layer (whose weight is constant).
bool ProductOfActivations(const Node* n) {
  if (!n || !n->Is("MatMul") || n->num_inputs() != 2) return false;
  return !GetConstantTypeAndDims(n->input(0)) && !GetConstantTypeAndDims(n->input(1));
}

class TransposeViewRule : public NodeRule<std::vector<int64_t>> {
 public:
  TransposeViewRule() : NodeRule("transpose-view", "Transpose", "", 2) {}

 protected:
  Verdict<std::vector<int64_t>> Check(Node* t, RewriteFacts&) const override {
    Value* x = t->input(0);
    Value* y = t->output(0);
    if (!x || !y || !y->HasUsers()) return Refuse("nothing reads the Transpose");
    Node* producer = x->producer();
    bool after_view =
        IsView(producer) && producer->graph() == t->graph() && x->uses().size() == 1 && !x->IsGraphOutput();
    bool before_view = y->uses().size() == 1 && !y->IsGraphOutput() && IsView(y->uses()[0].node) &&
                       y->uses()[0].input_index == 0 && y->uses()[0].node->graph() == t->graph();
    if (!after_view && !before_view) return Refuse("no Reshape, Squeeze, Unsqueeze or Flatten beside it to merge with");
    bool attention = ProductOfActivations(producer);
    for (const Use& u : y->uses()) attention |= ProductOfActivations(u.node);
    if (attention)
      return Refuse(
          "a MatMul of two computed values is beside it (attention's head split or merge, which onnxruntime's "
          "fusions match)");
    std::string why;
    auto shape = TransposeAsReshape(*t, &why);
    if (!shape) return Refuse(std::move(why));
    return *shape;
  }

  Status Replace(Node* t, std::vector<int64_t> shape, Rewriter& rw) const override {
    Value* y = rw.Op("Reshape", {t->input(0), rw.Int64s(shape)});
    if (t->output(0)->has_type()) *y->mutable_info()->mutable_type() = t->output(0)->info()->type();
    return rw.ReplaceNode(t, {y});
  }
};

}  // namespace

std::unique_ptr<RewriteRule> MakeTransposeViewRule() { return std::make_unique<TransposeViewRule>(); }

}  // namespace onnxsurgeon::passes::reshapes

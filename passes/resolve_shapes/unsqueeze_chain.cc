// unsqueeze-chain: Unsqueeze(Unsqueeze(x, a1), a2) -> one Unsqueeze of x (rules.h); not
// when x is a graph input or the chain's result is read by a Sub (through Casts, an Expand): both are
// the attention-mask form, kept for onnxruntime's fusions.
#include <algorithm>

#include "passes/resolve_shapes/rules.h"

namespace onnxsurgeon::resolve_shapes {
namespace {

// True when `v` is read, directly or through Casts and an Expand, by Sub(1, v): the extended
// attention mask (1 - mask) * -big that transformers builds (eager attention; the SDPA
// export expands it to [B,1,S,S] first), also from a mask it made of ones (ConstantOfShape)
// when the model has no attention_mask input.
bool ReadAsMask(const Value* v) {
  for (int depth = 0; depth < 4 && v && v->uses().size() == 1 && !v->IsGraphOutput(); ++depth) {
    const Node* user = v->uses()[0].node;
    if (user->Is("Sub")) return user->num_inputs() == 2 && user->input(1) == v;
    if (!(user->Is("Cast") || (user->Is("Expand") && user->input(0) == v)) || user->num_outputs() != 1) return false;
    v = user->output(0);
  }
  return false;
}

struct MergedUnsqueeze {
  Value* x = nullptr;
  std::vector<int64_t> axes;  // of the result, sorted
};

// Given Unsqueeze(Unsqueeze(x, a1), a2), the inner read only here. Result one Unsqueeze of
// x whose axes are where a1's and a2's new dims end up.
class UnsqueezeChain : public SymbolicRule<MergedUnsqueeze> {
 public:
  UnsqueezeChain() : SymbolicRule("unsqueeze-chain", "Unsqueeze") {}

 protected:
  std::optional<MergedUnsqueeze> Decide(Node* n, const SymbolicShapes& shapes, std::string& why) const override {
    Node* inner = n->input(0) ? n->input(0)->producer() : nullptr;
    if (!n->output(0) || !n->output(0)->HasUsers() || !inner || !inner->Is("Unsqueeze") || inner->num_outputs() != 1 ||
        inner->output(0)->uses().size() != 1 || inner->output(0)->IsGraphOutput() || inner->graph() != n->graph())
      return std::nullopt;
    // An Unsqueeze chain on a graph input is how exporters widen an attention mask
    // ([B,S] -> [B,1,1,S]), and the form onnxruntime's attention fusions match
    // (mask -> Unsqueeze -> Unsqueeze -> Cast -> Sub -> Mul): merging it would save one
    // node per model and lose every fused Attention.
    if (inner->input(0) && inner->input(0)->IsGraphInput()) {
      why = "the chain reads a graph input (the attention-mask form onnxruntime's fusions match)";
      return std::nullopt;
    }
    // The same form on a mask the model built itself (no attention_mask input: a
    // ConstantOfShape of ones): ...Unsqueeze -> Unsqueeze -> (Expand) (Cast) -> Sub(1, .).
    // Merged, a dev BERT without the mask input lost both its fused Attention.
    if (ReadAsMask(n->output(0))) {
      why = "the chain's result is read by Sub(1, mask) (the attention-mask form onnxruntime's fusions match)";
      return std::nullopt;
    }
    int64_t opset = n->graph()->OpsetVersion("");
    auto axes_of = [&](Node* u) -> std::optional<std::vector<int64_t>> {
      if (opset >= 13) return u->input(1) ? shapes.Int64s(u->input(1)) : std::nullopt;
      const Attribute* a = u->FindAttribute("axes");
      if (!a) return std::nullopt;
      return std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
    };
    auto a1 = axes_of(inner), a2 = axes_of(n);
    if (!a1 || !a2) return std::nullopt;
    auto shape = ShapeOf(inner->input(0));
    bool negative = std::any_of(a1->begin(), a1->end(), [](int64_t a) { return a < 0; }) ||
                    std::any_of(a2->begin(), a2->end(), [](int64_t a) { return a < 0; });
    if (negative && !shape) {
      why = "negative axes and the input's rank is unknown";
      return std::nullopt;
    }
    // Without negative axes the rank only bounds them; the axes themselves say enough.
    int64_t r1 = 0;
    if (shape) {
      r1 = static_cast<int64_t>(shape->size());
    } else {
      for (int64_t a : *a1) r1 = std::max(r1, a + 1 - static_cast<int64_t>(a1->size()));
      for (int64_t a : *a2) r1 = std::max(r1, a + 1 - static_cast<int64_t>(a1->size() + a2->size()));
    }
    int64_t mid = r1 + static_cast<int64_t>(a1->size());
    int64_t rank = mid + static_cast<int64_t>(a2->size());
    auto normalize = [](std::vector<int64_t> axes, int64_t r) -> std::optional<std::vector<int64_t>> {
      for (int64_t& a : axes) {
        if (a < -r || a >= r) return std::nullopt;
        if (a < 0) a += r;
      }
      std::sort(axes.begin(), axes.end());
      if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
      return axes;
    };
    auto n1 = normalize(*a1, mid), n2 = normalize(*a2, rank);
    if (!n1 || !n2) return std::nullopt;
    // The dims of the result that a2 did not insert are the inner result's, in order.
    std::vector<int64_t> kept;
    for (int64_t i = 0, j = 0; i < rank; ++i) {
      if (j < static_cast<int64_t>(n2->size()) && (*n2)[static_cast<size_t>(j)] == i) {
        ++j;
        continue;
      }
      kept.push_back(i);
    }
    MergedUnsqueeze plan{inner->input(0), *n2};
    for (int64_t a : *n1) plan.axes.push_back(kept[static_cast<size_t>(a)]);
    std::sort(plan.axes.begin(), plan.axes.end());
    return plan;
  }

  Status Replace(Node* n, MergedUnsqueeze plan, Rewriter& rw) const override {
    Value* merged;
    if (n->graph()->OpsetVersion("") >= 13) {
      merged = rw.Op("Unsqueeze", {plan.x, rw.Int64s(plan.axes)});
    } else {
      merged = rw.Op("Unsqueeze", {plan.x}, {Rewriter::AttrInts("axes", plan.axes)});
    }
    if (n->output(0)->info() && !merged->has_type()) {
      *merged->mutable_info() = *n->output(0)->info();
      merged->mutable_info()->set_name(merged->name());
    }
    return rw.ReplaceAllUsesWith(n->output(0), merged, GraphOutputs::kKeepNames);
  }
};

}  // namespace

std::unique_ptr<RewriteRule> UnsqueezeChainRule() { return std::make_unique<UnsqueezeChain>(); }

}  // namespace onnxsurgeon::resolve_shapes

// slice-chain: Slice(Slice(x, ...), ...) on different axes -> one Slice of x (rules.h).
//
// Each axis of a Slice is cut independently of the others (its start, end and step are
// clamped against that axis' dim only), so two Slices that cut disjoint axes are one Slice
// that cuts both: exact for every input, empty results included. A chain that cuts one
// axis twice stays (merging it needs the dim, and a negative step composes differently).
//
// Given:  %a = Slice(%x, [1], [5], [2])        %y = Slice(%a, [0], [3], [3])
// Result: %y = Slice(%x, [1,0], [5,3], [2,3])
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "passes/resolve_shapes/rules.h"

namespace onnxsurgeon::resolve_shapes {
namespace {

struct MergedSlice {
  Value* x = nullptr;
  std::vector<int64_t> starts, ends, axes, steps;
  bool with_steps = false;
};

// One Slice's constant parameters, axes written out (and non-negative when `rank` is known).
struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
  bool with_steps = false;
};

std::optional<SliceParams> ParamsOf(Node* s, const SymbolicShapes& shapes, std::optional<int64_t> rank,
                                    std::string& why) {
  if (s->num_inputs() < 3 || !s->input(0) || !s->input(1) || !s->input(2)) return std::nullopt;
  auto starts = shapes.Int64s(s->input(1)), ends = shapes.Int64s(s->input(2));
  if (!starts || !ends || starts->size() != ends->size()) {
    why = "a Slice's starts or ends are not constant";
    return std::nullopt;
  }
  SliceParams p{*starts, *ends, {}, std::vector<int64_t>(starts->size(), 1), false};
  if (s->num_inputs() > 3 && s->input(3)) {
    auto axes = shapes.Int64s(s->input(3));
    if (!axes || axes->size() != starts->size()) {
      why = "a Slice's axes are not constant";
      return std::nullopt;
    }
    p.axes = *axes;
  } else {
    for (size_t i = 0; i < starts->size(); ++i) p.axes.push_back(static_cast<int64_t>(i));
  }
  if (s->num_inputs() > 4 && s->input(4)) {
    auto steps = shapes.Int64s(s->input(4));
    if (!steps || steps->size() != starts->size()) {
      why = "a Slice's steps are not constant";
      return std::nullopt;
    }
    p.steps = *steps;
    p.with_steps = true;
  }
  for (int64_t& a : p.axes) {
    if (a >= 0) continue;
    if (!rank) {
      why = "negative axes and the input's rank is unknown";
      return std::nullopt;
    }
    a += *rank;
    if (a < 0) return std::nullopt;
  }
  return p;
}

class SliceChain : public SymbolicRule<MergedSlice> {
 public:
  SliceChain() : SymbolicRule("slice-chain", "Slice") {}

 protected:
  std::optional<MergedSlice> Decide(Node* n, const SymbolicShapes& shapes, std::string& why) const override {
    Node* inner = n->input(0) ? n->input(0)->producer() : nullptr;
    if (!n->output(0) || !n->output(0)->HasUsers() || !inner || !inner->Is("Slice") || inner->num_outputs() != 1 ||
        inner->output(0)->uses().size() != 1 || inner->output(0)->IsGraphOutput() || inner->graph() != n->graph() ||
        !inner->domain().empty() || n->graph()->OpsetVersion("") < 10)
      return std::nullopt;
    std::optional<int64_t> rank;
    if (auto shape = ShapeOf(inner->input(0))) rank = static_cast<int64_t>(shape->size());
    auto a = ParamsOf(inner, shapes, rank, why);
    if (!a) return std::nullopt;
    auto b = ParamsOf(n, shapes, rank, why);
    if (!b) return std::nullopt;
    absl::flat_hash_set<int64_t> seen(a->axes.begin(), a->axes.end());
    if (seen.size() != a->axes.size()) return std::nullopt;  // invalid: repeated axis
    for (int64_t axis : b->axes) {
      if (!seen.insert(axis).second) {
        why = "both Slices cut axis " + std::to_string(axis);
        return std::nullopt;
      }
    }
    MergedSlice plan{inner->input(0), a->starts, a->ends, a->axes, a->steps, a->with_steps || b->with_steps};
    plan.starts.insert(plan.starts.end(), b->starts.begin(), b->starts.end());
    plan.ends.insert(plan.ends.end(), b->ends.begin(), b->ends.end());
    plan.axes.insert(plan.axes.end(), b->axes.begin(), b->axes.end());
    plan.steps.insert(plan.steps.end(), b->steps.begin(), b->steps.end());
    return plan;
  }

  Status Replace(Node* n, MergedSlice plan, Rewriter& rw) const override {
    std::vector<Value*> inputs{plan.x, rw.Int64s(plan.starts), rw.Int64s(plan.ends), rw.Int64s(plan.axes)};
    if (plan.with_steps) inputs.push_back(rw.Int64s(plan.steps));
    Value* merged = rw.Op("Slice", inputs);
    if (n->output(0)->info() && !merged->has_type()) {
      *merged->mutable_info() = *n->output(0)->info();
      merged->mutable_info()->set_name(merged->name());
    }
    return rw.ReplaceAllUsesWith(n->output(0), merged, GraphOutputs::kKeepNames);
  }
};

}  // namespace

std::unique_ptr<RewriteRule> SliceChainRule() { return std::make_unique<SliceChain>(); }

}  // namespace onnxsurgeon::resolve_shapes

// where-constant, expand-noop, slice-noop, tile-noop and flatten-noop: an op the analysis proves
// returns (one of) its inputs unchanged is replaced by that input (rules.h).
#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "passes/resolve_shapes/rules.h"

namespace onnxsurgeon::resolve_shapes {
namespace {

// True when `o`'s shape broadcasts into `s` without changing it.
bool BroadcastsInto(const std::optional<Shape>& o, const Shape& s) {
  if (!o || o->size() > s.size()) return false;
  size_t off = s.size() - o->size();
  for (size_t i = 0; i < o->size(); ++i) {
    const Dim& d = (*o)[i];
    if (!(d.is_static() && d.value == 1) && !d.SameAs(s[off + i])) return false;
  }
  return true;
}

// The plan of these rules: the input that replaces the root's output.
class ForwardRule : public SymbolicRule<Value*> {
 public:
  using SymbolicRule::SymbolicRule;

 protected:
  Status Replace(Node* n, Value* input, Rewriter& rw) const final {
    return rw.ReplaceAllUsesWith(n->output(0), input, GraphOutputs::kKeepNames);
  }
};

// Where(c, a, b), c decided all true (all false), the others broadcasting into a (b).
class WhereConstantRule : public ForwardRule {
 public:
  WhereConstantRule() : ForwardRule("where-constant", "Where") {}

 protected:
  std::optional<Value*> Decide(Node* n, const SymbolicShapes& shapes, std::string& why) const override {
    if (!Replaceable(n->output(0)) || n->num_inputs() != 3) return std::nullopt;
    auto cond = shapes.UniformBool(n->input(0));
    if (!cond) return std::nullopt;
    Value* side = n->input(*cond ? 1 : 2);
    Value* other = n->input(*cond ? 2 : 1);
    auto s = shapes.ShapeFor(side);
    if (!s || !BroadcastsInto(shapes.ShapeFor(n->input(0)), *s) || !BroadcastsInto(shapes.ShapeFor(other), *s)) {
      why = absl::StrCat("the condition is all ", *cond ? "true" : "false",
                         " but the output may be larger than the selected side");
      return std::nullopt;
    }
    return side;
  }
};

// Expand(x, s), every element of s 1 or x's aligned dim.
class ExpandNoopRule : public ForwardRule {
 public:
  ExpandNoopRule() : ForwardRule("expand-noop", "Expand") {}

 protected:
  std::optional<Value*> Decide(Node* n, const SymbolicShapes& shapes, std::string& why) const override {
    if (!Replaceable(n->output(0))) return std::nullopt;
    const SymbolicVector* v = shapes.VectorOf(n->input(1));
    auto shape = ShapeOf(n->input(0));
    if (!v || v->scalar || !shape) return std::nullopt;
    if (v->elems.size() > shape->size()) {
      why = "the target has more dims than the input";
      return std::nullopt;
    }
    size_t off = shape->size() - v->elems.size();
    for (size_t i = 0; i < v->elems.size(); ++i) {
      const SymbolicElem& e = v->elems[i];
      if ((e.is_const && e.c == 1) || shapes.DimOf(n->input(0), *shape, off + i).Same(e)) continue;
      why = absl::StrCat("target element ", i, " is neither 1 nor the input's dim ", off + i);
      return std::nullopt;
    }
    return n->input(0);
  }
};

// Slice(x, ...), every sliced axis from 0 (step 1) to its dim or past it.
class SliceNoopRule : public ForwardRule {
 public:
  SliceNoopRule() : ForwardRule("slice-noop", "Slice") {}

 protected:
  std::optional<Value*> Decide(Node* n, const SymbolicShapes& shapes, std::string& why) const override {
    if (!Replaceable(n->output(0)) || n->graph()->OpsetVersion("") < 10 || n->num_inputs() < 3) return std::nullopt;
    auto shape = ShapeOf(n->input(0));
    const SymbolicVector* starts = shapes.VectorOf(n->input(1));
    const SymbolicVector* ends = shapes.VectorOf(n->input(2));
    if (!shape || !starts || !ends || starts->elems.size() != ends->elems.size()) return std::nullopt;
    int64_t rank = static_cast<int64_t>(shape->size());
    std::vector<int64_t> axes;
    if (n->input(3)) {
      auto a = shapes.Int64s(n->input(3));
      if (!a || a->size() != starts->elems.size()) return std::nullopt;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->elems.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    std::vector<int64_t> steps(axes.size(), 1);
    if (n->input(4)) {
      auto s = shapes.Int64s(n->input(4));
      if (!s || s->size() != axes.size()) return std::nullopt;
      steps = *s;
    }
    absl::flat_hash_set<int64_t> seen;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (axis < 0 || axis >= rank || !seen.insert(axis).second) return std::nullopt;
      const SymbolicElem& st = starts->elems[i];
      const SymbolicElem& en = ends->elems[i];
      const Dim& d = (*shape)[static_cast<size_t>(axis)];
      bool from_start = st.is_const && (st.c == 0 || (d.is_static() && st.c < 0 && st.c + d.value <= 0));
      bool to_end =
          (en.is_const && (en.c == std::numeric_limits<int64_t>::max() || (d.is_static() && en.c >= d.value))) ||
          shapes.DimOf(n->input(0), *shape, static_cast<size_t>(axis)).Same(en);
      if (steps[i] != 1 || !from_start || !to_end) {
        why = absl::StrCat("axis ", axis, " is not sliced whole with step 1");
        return std::nullopt;
      }
    }
    return n->input(0);
  }
};

// Tile(x, repeats), every repeat 1.
class TileNoopRule : public ForwardRule {
 public:
  TileNoopRule() : ForwardRule("tile-noop", "Tile") {}

 protected:
  std::optional<Value*> Decide(Node* n, const SymbolicShapes& shapes, std::string&) const override {
    if (!Replaceable(n->output(0))) return std::nullopt;
    auto repeats = shapes.Int64s(n->input(1));
    if (!repeats || !std::all_of(repeats->begin(), repeats->end(), [](int64_t r) { return r == 1; }))
      return std::nullopt;
    return n->input(0);
  }
};

// Flatten(x, axis), x of rank 2 and axis 1 (or -1): [d0, d1] stays [d0, d1].
class FlattenNoopRule : public ForwardRule {
 public:
  FlattenNoopRule() : ForwardRule("flatten-noop", "Flatten") {}

 protected:
  std::optional<Value*> Decide(Node* n, const SymbolicShapes&, std::string& why) const override {
    if (!Replaceable(n->output(0)) || !n->domain().empty()) return std::nullopt;
    auto shape = ShapeOf(n->input(0));
    if (!shape) return std::nullopt;
    int64_t axis = n->GetInt("axis", 1);
    if (shape->size() != 2 || (axis != 1 && axis != -1)) {
      why =
          absl::StrCat("flattens a rank-", shape->size(), " input at axis ", axis, " (a no-op only at rank 2, axis 1)");
      return std::nullopt;
    }
    return n->input(0);
  }
};

}  // namespace

std::vector<std::unique_ptr<RewriteRule>> NoopRules() {
  std::vector<std::unique_ptr<RewriteRule>> rules;
  rules.push_back(std::make_unique<WhereConstantRule>());
  rules.push_back(std::make_unique<ExpandNoopRule>());
  rules.push_back(std::make_unique<SliceNoopRule>());
  rules.push_back(std::make_unique<TileNoopRule>());
  rules.push_back(std::make_unique<FlattenNoopRule>());
  return rules;
}

}  // namespace onnxsurgeon::resolve_shapes

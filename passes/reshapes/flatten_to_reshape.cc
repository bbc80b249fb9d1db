// flatten-to-reshape: writes a Flatten whose axis is not 1 as a Reshape to its 2-D shape, for
// runtimes that mistranslate such Flattens: nncase 1.9 refuses Flatten with axis 0, 2 or 3
// ('Shapes must be same') and, behind optimum's Llama mask (Cast(attention_mask, bool) ->
// Flatten(axis=2) -> Gather), compiles it and corrupts memory (the decoder's logits 99.7%
// off; targets/probes/embedding_models.py). The same moves as Reshapes match.
//
// Exact: Flatten(x, axis) is x in row-major order as [prod(dims[:axis]), prod(dims[axis:])],
// which is what Reshape to that shape does. The input's rank must be known; each side's
// dims must be static, except that one side may hold dynamic dims (it becomes the
// Reshape's -1). A dim of size 0 makes a 0 side, which Reshape would read as "copy": refused.
//
// Given:  %y = Flatten<axis = 2>(%x)          %x: bool[1,5]
// Result: %y = Reshape(%x, [5,1])
#include "absl/strings/str_cat.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// The plan: Reshape's shape input.
using TargetShape = std::vector<int64_t>;

std::optional<TargetShape> FlattenAsReshape(const Node& flatten, std::string* why) {
  const Value* x = flatten.input(0);
  if (!x || !x->type() || !x->type()->has_tensor_type() || !x->type()->tensor_type().has_shape()) {
    *why = "the input's shape is unknown";
    return std::nullopt;
  }
  const auto& dims = x->type()->tensor_type().shape().dim();
  const int64_t rank = dims.size();
  int64_t axis = 1;
  if (const Attribute* a = flatten.FindAttribute("axis")) axis = a->proto().i();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) {
    *why = "axis is out of range";
    return std::nullopt;
  }
  TargetShape out;
  int dynamic = 0;
  for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, axis}, {axis, rank}}) {
    int64_t size = 1;
    bool known = true;
    for (int64_t i = lo; i < hi; ++i) {
      if (!dims[i].has_dim_value()) {
        known = false;
      } else {
        size *= dims[i].dim_value();
      }
    }
    if (known && size == 0) {
      *why = "a side of size 0 (a 0 in Reshape's shape copies a dim)";
      return std::nullopt;
    }
    dynamic += !known;
    out.push_back(known ? size : -1);
  }
  if (dynamic > 1) {
    *why = "both sides hold dims of unknown size (a Reshape can leave one to -1)";
    return std::nullopt;
  }
  return out;
}

class FlattenToReshapePass : public PatternPass {
 public:
  FlattenToReshapePass() {
    pattern::Pattern p("flatten-to-reshape");
    pattern::OpRef f = p.Op("Flatten", {p.Any("x")});
    AddRule(std::make_unique<PatternRule<TargetShape>>(
        "flatten-to-reshape", std::move(p), f.id(),
        [](const pattern::Match& m) -> Verdict<TargetShape> {
          std::string why;
          auto shape = FlattenAsReshape(*m.root(), &why);
          return Verdict<TargetShape>::From(std::move(shape), why);
        },
        [](const pattern::Match& m, const TargetShape& shape, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Value* y = rw.Op("Reshape", {m.value("x"), rw.Int64s(shape)});
          const Value* old = m.root()->output(0);
          if (old->has_type()) *y->mutable_info()->mutable_type() = old->info()->type();
          return std::vector<Value*>{y};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "Flatten");  // the input's shape decides
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFlattenToReshapePass(const PassOptions&) {
  return std::make_unique<FlattenToReshapePass>();
}

}  // namespace onnxsurgeon::passes

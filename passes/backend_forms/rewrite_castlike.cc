// rewrite-castlike: CastLike(x, like) with `like`'s element type known becomes
// Cast(x, to=that type), for converters without CastLike (onnx2tf: "CastLike OP is not
// yet implemented.", measured here). Lowerings write CastLike where a type is
// unknown when they run (a LayerNorm decomposed inside a function body, say); after
// inlining and inference the type is usually known.
//
// Exact: CastLike is defined as Cast to the type of its second input; `saturate`
// (opset 19+) is carried over. The CastLike's shape-only reading of `like` goes away.
// Types come from annotations and onnx shape inference (TypeFacts); a CastLike whose
// target type is unknown stays, with that reason.
//
// Options: none.
//
// Before:  y = CastLike(x, like)        (like : float16)
// After:   y = Cast<to=FLOAT16>(x)
#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class RewriteCastLikePass : public PatternPass {
 public:
  RewriteCastLikePass() {
    pattern::Pattern p("castlike-to-cast");
    pattern::OpRef r = p.Op("CastLike", {p.Any("x"), p.Any("like")});
    // The plan: the element type to cast to.
    AddRule(std::make_unique<PatternRule<int32_t>>(
        "castlike-to-cast", std::move(p), r.id(),
        [](const pattern::Match& m, RewriteFacts& facts) -> Verdict<int32_t> {
          int32_t to = facts.Get<TypeFacts>().ElemType(m.value("like"));
          if (to != 0) return to;
          return Refuse(
              absl::StrCat("the element type of '", m.value("like")->name(), "' (the type to cast to) is unknown"));
        },
        [](const pattern::Match& m, int32_t to, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          std::vector<onnx::AttributeProto> attributes = {Rewriter::AttrInt("to", to)};
          for (const Attribute& a : m.root()->attributes())
            if (a.name() == "saturate") attributes.push_back(a.proto());
          return std::vector<Value*>{rw.Op("Cast", {m.value("x")}, std::move(attributes))};
        }));
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateRewriteCastLikePass(const PassOptions&) {
  return std::make_unique<RewriteCastLikePass>();
}

}  // namespace onnxsurgeon::passes

// drop-reshape-allowzero: writes Reshape(allowzero=1) as Reshape(allowzero=0) where the two
// mean the same, for runtimes that mishandle allowzero=1 (onnxruntime 1.10 fails any
// allowzero=1 Reshape whose shape holds -1: "!allow_zero was false. The input tensor cannot
// be reshaped to the requested shape", measured here; torch's dynamo exporter
// writes allowzero=1 on every view).
//
// Exact: allowzero only changes what a 0 in the shape means (a literal 0 instead of "copy
// the input's dim"). So the rewrite needs a constant shape with no 0 in it. A shape with
// -1 and 0 together is invalid under allowzero=1 anyway, but we still refuse any 0.
//
// Options: none.
//
// Before:  y = Reshape<allowzero=1>(x, [2,-1,2,16])
// After:   y = Reshape(x, [2,-1,2,16])
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

bool AllowsZero(const Node& n) {
  const Attribute* a = n.FindAttribute("allowzero");
  return a && a->proto().i() != 0;
}

class DropReshapeAllowzeroPass : public PatternPass {
 public:
  DropReshapeAllowzeroPass() {
    pattern::Pattern p("reshape-allowzero");
    pattern::OpRef r = p.Op("Reshape", {p.Any("x"), p.Any("shape")});
    AddRule(std::make_unique<PatternRule<>>(
        "reshape-allowzero", std::move(p), r.id(),
        [](const pattern::Match& m) -> Verdict<> {
          if (!AllowsZero(*m.root())) return Refuse("allowzero is 0 already");
          std::optional<std::vector<int64_t>> shape = ConstantInt64s(m.value("shape"));
          if (!shape) {
            return Refuse(absl::StrCat("shape '", m.value("shape")->name(),
                                       "' is computed at run time: a 0 in it would change meaning"));
          }
          if (std::find(shape->begin(), shape->end(), 0) != shape->end()) {
            return Refuse(absl::StrCat("shape '", m.value("shape")->name(),
                                       "' holds a 0, which allowzero=1 keeps as a literal 0"));
          }
          return Matched();
        },
        [](const pattern::Match& m, NoPlan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          return std::vector<Value*>{rw.Op("Reshape", {m.value("x"), m.value("shape")})};
        }));
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateDropReshapeAllowzeroPass(const PassOptions&) {
  return std::make_unique<DropReshapeAllowzeroPass>();
}

}  // namespace onnxsurgeon::passes

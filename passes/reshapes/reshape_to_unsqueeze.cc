// reshape-to-unsqueeze: writes a Reshape that only inserts dims of size 1 as Unsqueeze,
// for converters that mistranslate such Reshapes: onnx2tf 1.29 transposes a rank-4
// Reshape's output as if it were an NCHW image (gpt2_dynamo18's attention mask
// [batch,seq] -> [batch,1,1,seq] came out wrong, measured here) and leaves an
// Unsqueeze alone.
//
// Exact: a Reshape keeps the elements in row-major order; when its output shape is the
// input shape with unit dims inserted, Unsqueeze at those positions gives the same shape,
// hence the same tensor. The output shape is derived from the constant shape input and
// the input's shape (0 copies a dim unless allowzero=1, -1 takes the rest), never from the
// output's own annotation; every input dim must be provably the same as its output
// counterpart (static and equal, or the same dim_param). Axes are an attribute below opset
// 13 and an input from 13.
//
// Options: min-rank (rewrite only Reshapes whose output has at least this rank; the
// tflite profile asks for 4, the rank onnx2tf mistranslates).
//
// Given:  %y = Reshape(%x, [2,1,1,8])          %x: float[2,8]
// Result: %y = Unsqueeze(%x, [1,2])
#include "absl/strings/str_cat.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"
#include "passes/reshapes/reshape_facts.h"

namespace onnxsurgeon::passes {
namespace {

// The plan: Unsqueeze's axes.
using Axes = std::vector<int64_t>;

class ReshapeToUnsqueezePass : public PatternPass {
 public:
  explicit ReshapeToUnsqueezePass(int64_t min_rank) {
    pattern::Pattern p("reshape-to-unsqueeze");
    pattern::OpRef r = p.Op("Reshape", {p.Any("x"), p.Any("shape")});
    AddRule(std::make_unique<PatternRule<Axes>>(
        "reshape-to-unsqueeze", std::move(p), r.id(),
        [min_rank](const pattern::Match& m) -> Verdict<Axes> {
          std::string why;
          auto shapes = reshapes::KnownReshapeShapes(*m.root(), &why);
          if (!shapes) return Refuse(why);
          if (static_cast<int64_t>(shapes->out.size()) < min_rank)
            return Refuse(absl::StrCat("the output rank ", shapes->out.size(), " is below min-rank ", min_rank));
          auto axes = reshapes::InsertedUnitAxes(shapes->in, shapes->out);
          if (!axes) {
            return Refuse(absl::StrCat("the output shape ", ShapeToString(shapes->out), " is not the input shape ",
                                       ShapeToString(shapes->in), " with unit dims inserted"));
          }
          return *axes;
        },
        [](const pattern::Match& m, const Axes& axes, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Value* x = m.value("x");
          Value* y = m.root()->graph()->OpsetVersion("") >= 13
                         ? rw.Op("Unsqueeze", {x, rw.Int64s(axes)})
                         : rw.Op("Unsqueeze", {x}, {Rewriter::AttrInts("axes", axes)});
          const Value* old = m.root()->output(0);
          if (old->has_type()) *y->mutable_info()->mutable_type() = old->info()->type();
          return std::vector<Value*>{y};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "Reshape");  // the input's shape decides
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateReshapeToUnsqueezePass(const PassOptions& o) {
  return std::make_unique<ReshapeToUnsqueezePass>(o.Int("min-rank"));
}

}  // namespace onnxsurgeon::passes

#include "passes/reshapes/as_reshape.h"

#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::passes::reshapes {
namespace {

// The plan: Reshape's shape input.
using TargetShape = std::vector<int64_t>;

class AsReshapePass : public PatternPass {
 public:
  AsReshapePass(const char* name, const char* op, ReshapeShapeOf shape_of) : op_(op) {
    pattern::Pattern p(name);
    pattern::OpRef node = p.Op(op, {p.Any("x")});
    AddRule(std::make_unique<PatternRule<TargetShape>>(
        name, std::move(p), node.id(),
        [shape_of](const pattern::Match& m) -> Verdict<TargetShape> {
          std::string why;
          auto shape = shape_of(*m.root(), &why);
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
    lowering::InferTypesIfNeeded(model, op_);  // the input's shape decides
    return PatternPass::Run(model, context);
  }

 private:
  const char* op_;
};

}  // namespace

std::unique_ptr<Pass> MakeAsReshapePass(const char* name, const char* op, ReshapeShapeOf shape_of) {
  return std::make_unique<AsReshapePass>(name, op, shape_of);
}

}  // namespace onnxsurgeon::passes::reshapes

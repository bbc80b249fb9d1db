// rewrite-global-pool: replaces GlobalAveragePool / GlobalMaxPool by ReduceMean / ReduceMax
// over the spatial axes, for runtimes whose pooling kernels take only 4-D images (nncase
// 1.9: "Image with 4-dimensional shape is expected on the input of pooling operators",
// measured on tf2onnx's LayerNorms, which take the mean of a rank-3 tensor this way).
//
// Exact: GlobalAveragePool is the mean, and GlobalMaxPool the maximum, of x over axes
// 2..r-1 with those axes kept as size 1 (the ONNX spec), which is ReduceMean/ReduceMax with
// keepdims=1 over the same axes. (A runtime's two kernels may sum in different orders:
// onnxruntime's differ by 6e-8 on a float mean of 32 values; the max is bit-identical.) x's rank must be known (r >=
// 3). Axes are an attribute below opset 18 and an input from 18.
//
// Options: none.
//
// Given:  %y = GlobalAveragePool(%x)          x: float[2,5,32]
// Result: %y = ReduceMean<axes=[2], keepdims=1>(%x)
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// The plan: the spatial axes 2..r-1.
using SpatialAxes = std::vector<int64_t>;

std::unique_ptr<RewriteRule> GlobalPoolRule(const std::string& name, const std::string& pool,
                                            const std::string& reduce) {
  pattern::Pattern p(name);
  pattern::OpRef g = p.Op(pool, {p.Any("x")});
  return std::make_unique<PatternRule<SpatialAxes>>(
      name, std::move(p), g.id(),
      [](const pattern::Match& m) -> Verdict<SpatialAxes> {
        int64_t rank = lowering::Rank(m.value("x"));
        if (rank < 0) return Refuse("the rank of its input is unknown (run infer-shapes first)");
        if (rank < 3) return Refuse(absl::StrCat("its input has rank ", rank, ", below the 3 a pool needs"));
        SpatialAxes axes;
        for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
        return axes;
      },
      [reduce](const pattern::Match& m, const SpatialAxes& axes, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
        Value* x = m.value("x");
        if (m.root()->graph()->OpsetVersion("") >= 18)
          return std::vector<Value*>{rw.Op(reduce, {x, rw.Int64s(axes)}, {Rewriter::AttrInt("keepdims", 1)})};
        return std::vector<Value*>{
            rw.Op(reduce, {x}, {Rewriter::AttrInts("axes", axes), Rewriter::AttrInt("keepdims", 1)})};
      });
}

class RewriteGlobalPoolPass : public PatternPass {
 public:
  RewriteGlobalPoolPass() {
    AddRule(GlobalPoolRule("global-average-pool", "GlobalAveragePool", "ReduceMean"));
    AddRule(GlobalPoolRule("global-max-pool", "GlobalMaxPool", "ReduceMax"));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    context.Forbid("GlobalAveragePool", "rewrite-global-pool");
    context.Forbid("GlobalMaxPool", "rewrite-global-pool");
    lowering::InferTypesIfNeeded(model, "GlobalAveragePool");
    lowering::InferTypesIfNeeded(model, "GlobalMaxPool");
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateRewriteGlobalPoolPass(const PassOptions&) {
  return std::make_unique<RewriteGlobalPoolPass>();
}

}  // namespace onnxsurgeon::passes

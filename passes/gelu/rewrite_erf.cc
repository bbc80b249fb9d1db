// rewrite-erf: replaces Erf by a rational approximation made of Min/Max/Mul/Add/Div, for
// targets without Erf (and for rewrite-gelu's exact form on such targets).
//
//   erf(x) ~= c * P(c^2) / Q(c^2),   c = clamp(x, -4, 4)
// with P odd of degree 13 and Q even of degree 8: the minimax coefficients of Eigen's and
// XLA's float erf (generic_fast_erf_float). For |x| >= 4, erf(x) rounds to +-1 in fp32.
// Max abs error against erf, measured with onnxruntime on 2,000,001 evenly spaced points
// of [-10, 10] by bench/gelu_error.py, checked against the bounds in brackets by
// tests/python/test_gelu.py:
//   float32   4.2e-7  [5e-7]   (a few ulp of 1; Erf itself is not better than 1 ulp)
//   float64   6.9e-8  [1e-7]   (the approximation's own error: float accuracy, not double)
//   float16 / bfloat16 inputs are computed in float32 between two Casts: their rounding.
// Through GELU (rewrite-gelu then rewrite-erf) against exact GELU in fp32: 1.35e-6 [2e-6]
// (the exact lowering alone: 4.5e-7; both mostly rounding of outputs near |x| = 10).
// NaN stays NaN (an IsNaN/Where guard: Min/Max need not propagate it).
//
// Options: none.
//
// Before:  y = Erf(x)
// After:   c = Min(Max(x, -4), 4)  c2 = Mul(c, c)  p = <Horner in c2>  q = <Horner in c2>
//          r = Div(Mul(c, p), q)   y = Where(IsNaN(x), x, r)
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// Numerator coefficients of x^1, x^3, ..., x^13; denominator of x^0, x^2, ..., x^8.
constexpr double kNumerator[] = {-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04,
                                 -5.69250639462346e-05, -2.10102402082508e-06, 2.77068142495902e-08,
                                 -2.72614225801306e-10};
constexpr double kDenominator[] = {-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
                                   -2.13374055278905e-04, -1.45660718464996e-05};

// A constant of a float type (the caller checked it): cannot fail.
Value* Scalar(Rewriter& rw, double v, int32_t type) { return *rw.ScalarFloat(static_cast<float>(v), type); }

// Sum of coefficients[i] * t^i, by Horner's rule.
template <size_t N>
Value* Horner(Rewriter& rw, Value* t, const double (&coefficients)[N], int32_t type) {
  Value* acc = Scalar(rw, coefficients[N - 1], type);
  for (size_t i = N - 1; i-- > 0;) acc = rw.Op("Add", {rw.Op("Mul", {acc, t}), Scalar(rw, coefficients[i], type)});
  return acc;
}

// Given x of float type `type`.
Value* EmitErf(Rewriter& rw, Value* x, int32_t type) {
  // Half types compute in float: the small coefficients underflow in fp16.
  bool widen = type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  int32_t compute = widen ? onnx::TensorProto::FLOAT : type;
  Value* wide = widen ? rw.Op("Cast", {x}, {Rewriter::AttrInt("to", compute)}) : x;
  Value* c = rw.Op("Min", {rw.Op("Max", {wide, Scalar(rw, -4.0, compute)}), Scalar(rw, 4.0, compute)});
  Value* c2 = rw.Op("Mul", {c, c});
  Value* p = Horner(rw, c2, kNumerator, compute);
  Value* q = Horner(rw, c2, kDenominator, compute);
  Value* r = rw.Op("Div", {rw.Op("Mul", {c, p}), q});
  if (widen) r = rw.Op("Cast", {r}, {Rewriter::AttrInt("to", type)});
  return rw.Op("Where", {rw.Op("IsNaN", {x}), x, r});
}

class RewriteErfPass : public PatternPass {
 public:
  RewriteErfPass() {
    pattern::Pattern p("erf");
    pattern::OpRef erf = p.Op("Erf", {p.Any("x")});
    // The plan: x's element type, a float type.
    AddRule(std::make_unique<PatternRule<int32_t>>(
        "erf", std::move(p), erf.id(),
        [](const pattern::Match& m) -> Verdict<int32_t> {
          int32_t t = ElementType(m.value("x"));
          if (lowering::IsFloatType(t)) return t;
          return Refuse(lowering::WhyNotFloat(*m.root(), m.value("x")));
        },
        [](const pattern::Match& m, int32_t type, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          return std::vector<Value*>{EmitErf(rw, m.value("x"), type)};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    context.Forbid("Erf", "rewrite-erf");  // nothing later in the pipeline may bring Erf back
    lowering::InferTypesIfNeeded(model, "Erf");
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateRewriteErfPass(const PassOptions&) { return std::make_unique<RewriteErfPass>(); }

}  // namespace onnxsurgeon::passes

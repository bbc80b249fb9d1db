#include "passes/gelu/subgraph_rules.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/pattern/pattern.h"

namespace onnxsurgeon::gelu {
namespace {

using pattern::OpRef;
using pattern::Pattern;
using pattern::ValueRef;

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrtHalf = 0.7071067811865476;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kKappa = 0.044715;

// Relative tolerance for an irrational GELU constant (sqrt 2, sqrt(2/pi), 0.044715) stored
// as `data_type`: its rounding, and 1e-4 for fp32/fp64 (hand-typed constants like
// 0.79788456 or 1.41421; GELU's output then moves by less than 3e-5 absolute).
double ToleranceFor(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT16: return 1.0 / 1024;  // 2^-10: one fp16 ulp, relative
    case onnx::TensorProto::BFLOAT16: return 1.0 / 128;  // 2^-7
    default: return 1e-4;
  }
}

// A scalar constant equal to `value` to the precision of its type; `exact` values (0.5,
// 1, 2, 3: representable in every float type) must be equal, as their error would scale
// the output itself.
ValueRef Near(Pattern& p, std::string capture, double value, bool exact = false) {
  return p.Const(std::move(capture), [value, exact](const ConstantData& c, std::string* why) {
    auto s = c.ScalarAsDouble();
    if (!s) {
      if (why) *why = absl::StrCat("constant has ", c.num_elements(), " elements, wants the scalar ", value);
      return false;
    }
    double tolerance = exact ? 1e-7 : ToleranceFor(c.data_type);
    if (std::abs(*s - value) > tolerance * std::abs(value)) {
      if (why) *why = absl::StrCat("constant is ", *s, ", wants ", value);
      return false;
    }
    return true;
  });
}

// A multiset of pattern values, kept sorted by id so equal multisets compare equal.
using Factors = std::vector<int>;

std::vector<std::pair<Factors, Factors>> Splits(const Factors& factors) {
  // Every way to cut the product at its root into two non-empty sub-multisets, each
  // unordered pair once (the Mul is commutative).
  std::set<std::pair<Factors, Factors>> seen;
  std::vector<std::pair<Factors, Factors>> out;
  size_t n = factors.size();
  for (uint32_t mask = 1; mask + 1 < (1u << n); ++mask) {
    Factors a, b;
    for (size_t i = 0; i < n; ++i) ((mask >> i) & 1 ? a : b).push_back(factors[i]);
    if (b < a) std::swap(a, b);
    if (seen.insert({a, b}).second) out.push_back({a, b});
  }
  return out;
}

// The product of `factors` as any tree of binary Muls; a run of one value x repeated n
// times may also be Pow(x, n). Sub-products are built fresh for every alternative: two
// Muls of the same factors in one graph are two nodes.
ValueRef Product(Pattern& p, Factors factors) {
  std::sort(factors.begin(), factors.end());
  if (factors.size() == 1) return {factors[0]};
  std::vector<ValueRef> alternatives;
  for (const auto& [a, b] : Splits(factors))
    alternatives.push_back(p.Op("Mul", {Product(p, a), Product(p, b)}).Commutative());
  if (factors.front() == factors.back()) {
    auto n = static_cast<double>(factors.size());
    alternatives.push_back(
        p.Op("Pow", {ValueRef{factors[0]}, Near(p, absl::StrCat("exponent ", n), n, /*exact=*/true)}));
  }
  return alternatives.size() == 1 ? alternatives[0] : p.Or(std::move(alternatives));
}

// 0.5 * x * one_plus, rooted at split `split` of the three factors, or at the forms
// with a division by 2; `count` receives how many root forms there are.
OpRef HalfXTimes(Pattern& p, ValueRef x, ValueRef one_plus, int form, int* count) {
  ValueRef half = Near(p, "0.5", 0.5, /*exact=*/true);
  auto splits = Splits({half.id, x.id, one_plus.id});
  *count = static_cast<int>(splits.size()) + 2;
  if (form < static_cast<int>(splits.size())) {
    const auto& [a, b] = splits[form];
    return p.Op("Mul", {Product(p, a), Product(p, b)}).Commutative().Capture("gelu");
  }
  ValueRef two = Near(p, "2", 2.0, /*exact=*/true);
  if (form == static_cast<int>(splits.size())) {
    return p.Op("Mul", {p.Op("Div", {x, two}), one_plus}).Commutative().Capture("gelu");  // (x / 2) * (1 + f)
  }
  return p.Op("Div", {p.Op("Mul", {x, one_plus}).Commutative(), two}).Capture("gelu");  // x * (1 + f) / 2
}

// One plus `f`.
ValueRef OnePlus(Pattern& p, ValueRef f) { return p.Op("Add", {f, Near(p, "1", 1.0, /*exact=*/true)}).Commutative(); }

// x * 0.5 * (1 + Erf(x / sqrt(2))).
OpRef ErfGelu(Pattern& p, int form, int* count) {
  ValueRef x = p.Any("x");
  ValueRef scaled = p.Or(
      {p.Op("Div", {x, Near(p, "sqrt(2)", kSqrt2)}), p.Op("Mul", {x, Near(p, "1/sqrt(2)", kSqrtHalf)}).Commutative()});
  return HalfXTimes(p, x, OnePlus(p, p.Op("Erf", {scaled})), form, count);
}

// x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), or with Megatron's
// sqrt(2/pi) * x * (1 + 0.044715 * x * x).
OpRef TanhGelu(Pattern& p, int form, int* count) {
  ValueRef x = p.Any("x");
  ValueRef c = Near(p, "sqrt(2/pi)", kSqrt2OverPi);
  ValueRef k = Near(p, "0.044715", kKappa);
  ValueRef cubic = p.Op("Add", {x, Product(p, {k.id, x.id, x.id, x.id})}).Commutative();  // x + k x^3
  ValueRef megatron = OnePlus(p, Product(p, {k.id, x.id, x.id}));                         // 1 + k x^2
  ValueRef argument = p.Or({Product(p, {c.id, cubic.id}), Product(p, {c.id, x.id, megatron.id})});
  return HalfXTimes(p, x, OnePlus(p, p.Op("Tanh", {argument})), form, count);
}

using Builder = OpRef (*)(Pattern&, int, int*);

}  // namespace

void AddGeluSubgraphRules(PatternPass& pass, const std::string& prefix, const std::vector<GeluKind>& kinds,
                          GeluReplace replace, GeluCheck check) {
  if (!check) check = [](const pattern::Match&) -> Verdict<> { return Matched(); };
  for (GeluKind kind : kinds) {
    Builder build = kind == GeluKind::kExact ? ErfGelu : TanhGelu;
    std::string name = absl::StrCat(prefix, kind == GeluKind::kExact ? "-erf" : "-tanh");
    int count = 1;
    for (int form = 0; form < count; ++form) {
      Pattern p(name);
      OpRef root = build(p, form, &count);
      pass.AddRule(std::make_unique<PatternRule<>>(
          absl::StrCat(name, "#", form), std::move(p), root.id(), check,
          [kind, replace](const pattern::Match& m, NoPlan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
            OS_ASSIGN_OR_RETURN(Value * out, replace(kind, m.value("x"), m, rw));
            return std::vector<Value*>{out};
          }));
    }
  }
}

PassResult MergeFormCounts(const PassResult& raw) {
  PassResult result;
  for (const auto& [rule, n] : raw.counts) result.Count(rule.substr(0, rule.find('#')), n);
  return result;
}

}  // namespace onnxsurgeon::gelu

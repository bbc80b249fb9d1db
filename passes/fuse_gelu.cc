// fuse-gelu: replaces the GELU subgraphs exporters write by the Gelu op (opset >= 20).
//
// Matches, with any operand order and any association of the products:
//   exact:  x * 0.5 * (1 + Erf(x / sqrt(2)))          -> Gelu(x)
//           (also Erf(x * 0.70710678), x / 2 instead of x * 0.5, and 0.5 * (1 + erf)
//           as one factor: x * (0.5 * (1 + erf)), (x * 0.5) * (1 + erf), ...)
//   tanh:   x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//                                                      -> Gelu(x, approximate="tanh")
//           with x^3 as x*x*x (any tree, the 0.044715 anywhere in it) or Pow(x, 3), and
//           Megatron's factoring sqrt(2/pi) * x * (1 + 0.044715 * x * x).
// Constants must equal the GELU constants to the precision of their own type (fp32
// within 1e-4 relative, so 0.79788456 and 1.41421 pass and 0.8 or 1.5 do not; fp16 and
// bf16 constants within their rounding). Every intermediate must feed only the match.
// Refusals (shown by --debug-patterns): a wrong constant, an intermediate used outside
// the match, a default-domain opset below 20 (Gelu does not exist there: convert the
// opset first), an element type Gelu does not take.
//
// Options: none.
//
// Before:  d = Div(x, 1.4142135)  e = Erf(d)  a = Add(e, 1.0)  m = Mul(x, a)  y = Mul(m, 0.5)
// After:   y = Gelu(x)
#include <map>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/pass/pattern_pass.h"
#include "core/pattern/pattern.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using pattern::OpRef;
using pattern::Pattern;
using pattern::ValueRef;

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrtHalf = 0.7071067811865476;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kKappa = 0.044715;

// Relative tolerance for a GELU constant stored as `data_type`: its rounding, and 1e-4 for
// fp32/fp64 (hand-typed constants like 0.79788456; the output moves by < 5e-5 absolute).
double ToleranceFor(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT16:
      return 1.0 / 1024;  // 2^-10: one fp16 ulp, relative
    case onnx::TensorProto::BFLOAT16:
      return 1.0 / 128;  // 2^-7
    default:
      return 1e-4;
  }
}

// A scalar constant equal to `value` to the precision of its type.
ValueRef Near(Pattern& p, std::string capture, double value) {
  return p.Const(std::move(capture), [value](const ConstantData& c, std::string* why) {
    auto s = c.ScalarAsDouble();
    if (!s) {
      if (why) *why = absl::StrCat("constant has ", c.num_elements(), " elements, wants the scalar ", value);
      return false;
    }
    if (std::abs(*s - value) > ToleranceFor(c.data_type) * std::abs(value)) {
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
  for (const auto& [a, b] : Splits(factors)) alternatives.push_back(p.Op("Mul", {Product(p, a), Product(p, b)}).Commutative());
  if (factors.front() == factors.back()) {
    auto n = static_cast<double>(factors.size());
    alternatives.push_back(p.Op("Pow", {ValueRef{factors[0]}, Near(p, absl::StrCat("exponent ", n), n)}));
  }
  return alternatives.size() == 1 ? alternatives[0] : p.Or(std::move(alternatives));
}

// 0.5 * x * one_plus, rooted at split `split` of the three factors, or at the forms
// with a division by 2; `count` receives how many root forms there are.
OpRef HalfXTimes(Pattern& p, ValueRef x, ValueRef one_plus, int form, int* count) {
  ValueRef half = Near(p, "0.5", 0.5);
  auto splits = Splits({half.id, x.id, one_plus.id});
  *count = static_cast<int>(splits.size()) + 2;
  if (form < static_cast<int>(splits.size())) {
    const auto& [a, b] = splits[form];
    return p.Op("Mul", {Product(p, a), Product(p, b)}).Commutative().Capture("gelu");
  }
  ValueRef two = Near(p, "2", 2.0);
  if (form == static_cast<int>(splits.size())) {
    return p.Op("Mul", {p.Op("Div", {x, two}), one_plus}).Commutative().Capture("gelu");  // (x / 2) * (1 + f)
  }
  return p.Op("Div", {p.Op("Mul", {x, one_plus}).Commutative(), two}).Capture("gelu");  // x * (1 + f) / 2
}

// One plus `f`.
ValueRef OnePlus(Pattern& p, ValueRef f) { return p.Op("Add", {f, Near(p, "1", 1.0)}).Commutative(); }

// x * 0.5 * (1 + Erf(x / sqrt(2))).
OpRef ErfGelu(Pattern& p, int form, int* count) {
  ValueRef x = p.Any("x");
  ValueRef scaled = p.Or({p.Op("Div", {x, Near(p, "sqrt(2)", kSqrt2)}),
                          p.Op("Mul", {x, Near(p, "1/sqrt(2)", kSqrtHalf)}).Commutative()});
  return HalfXTimes(p, x, OnePlus(p, p.Op("Erf", {scaled})), form, count);
}

// x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), or with Megatron's
// sqrt(2/pi) * x * (1 + 0.044715 * x * x).
OpRef TanhGelu(Pattern& p, int form, int* count) {
  ValueRef x = p.Any("x");
  ValueRef c = Near(p, "sqrt(2/pi)", kSqrt2OverPi);
  ValueRef k = Near(p, "0.044715", kKappa);
  ValueRef cubic = p.Op("Add", {x, Product(p, {k.id, x.id, x.id, x.id})}).Commutative();   // x + k x^3
  ValueRef megatron = OnePlus(p, Product(p, {k.id, x.id, x.id}));                           // 1 + k x^2
  ValueRef argument = p.Or({Product(p, {c.id, cubic.id}), Product(p, {c.id, x.id, megatron.id})});
  return HalfXTimes(p, x, OnePlus(p, p.Op("Tanh", {argument})), form, count);
}

bool GeluAllowed(const pattern::Match& m, std::string* why) {
  Node* root = m.root();
  int64_t opset = root->graph()->OpsetVersion("");
  if (opset < 20) {
    if (why) *why = absl::StrCat("Gelu needs opset >= 20 and the model imports ", opset, " (convert the opset first)");
    return false;
  }
  const Value* x = m.value("x");
  if (x->has_type() && x->type()->has_tensor_type() && x->type()->tensor_type().elem_type() != 0) {
    int32_t t = x->type()->tensor_type().elem_type();
    if (t != onnx::TensorProto::FLOAT && t != onnx::TensorProto::FLOAT16 && t != onnx::TensorProto::DOUBLE &&
        t != onnx::TensorProto::BFLOAT16) {
      if (why) *why = absl::StrCat("Gelu does not take element type ", onnx::TensorProto::DataType_Name(t));
      return false;
    }
  }
  return true;
}

using Builder = OpRef (*)(Pattern&, int, int*);

class FuseGeluPass : public PatternPass {
 public:
  FuseGeluPass() {
    AddRules("gelu-erf", ErfGelu, "");
    AddRules("gelu-tanh", TanhGelu, "tanh");
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    constants_.clear();
    OS_ASSIGN_OR_RETURN(PassResult raw, PatternPass::Run(model, context));
    // One count per kind, not per root form.
    PassResult result;
    for (const auto& [rule, n] : raw.counts) result.Count(rule.substr(0, rule.find('#')), n);
    OS_RETURN_IF_ERROR(RemoveDeadConstants(result));
    return result;
  }

 private:
  void AddRules(const char* name, Builder build, std::string approximate) {
    int count = 1;
    for (int form = 0; form < count; ++form) {
      Pattern p(name);
      OpRef root = build(p, form, &count);
      AddRule(std::make_unique<PatternRule>(
          absl::StrCat(name, "#", form), std::move(p), root.id(),
          [this, approximate](const pattern::Match& m, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
            RememberConstants(m);
            std::vector<onnx::AttributeProto> attrs;
            if (!approximate.empty()) attrs.push_back(Rewriter::AttrString("approximate", approximate));
            return std::vector<Value*>{rw.Op("Gelu", {m.value("x")}, std::move(attrs))};
          },
          GeluAllowed));
    }
  }

  // The GELU constants (0.5, 1, sqrt 2, ...) of a fused subgraph usually have no other
  // reader; they go with it. Constants that were unused before the pass are dce's business.
  void RememberConstants(const pattern::Match& m) {
    for (Node* n : m.nodes())
      for (Value* v : n->inputs())
        if (v && v != m.value("x") && GetConstant(v) && seen_.insert(v).second) constants_.push_back(v);
  }

  Status RemoveDeadConstants(PassResult& result) {
    for (Value* v : constants_) {
      if (v->HasUsers() || v->IsGraphInput()) continue;
      if (v->IsInitializer()) {
        OS_RETURN_IF_ERROR(v->graph()->RemoveInitializer(v));
      } else if (Node* n = v->producer(); n && n->Is("Constant") && n->num_outputs() == 1) {
        OS_RETURN_IF_ERROR(n->graph()->EraseNode(n));
      }
    }
    constants_.clear();
    seen_.clear();
    return absl::OkStatus();
  }

  std::vector<Value*> constants_;  // in match order, so removal is deterministic
  absl::flat_hash_set<Value*> seen_;
};

}  // namespace

PassInfo FuseGeluPassInfo() {
  return {"fuse-gelu",
          "Fuse the Erf and tanh GELU subgraphs into Gelu (opset >= 20)",
          {},
          [](const PassOptions&) -> StatusOr<std::unique_ptr<Pass>> { return std::make_unique<FuseGeluPass>(); }};
}

}  // namespace onnxsurgeon::passes

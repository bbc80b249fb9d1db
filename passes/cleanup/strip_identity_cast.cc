// strip-identity-cast: removes Identity nodes, Casts that change nothing, and Cast chains
// whose middle type loses nothing.
//
// Rules (the pattern DSL; each refusal says why):
//   identity               Identity(x)                 -> x
//   cast-to-same-type      Cast(x, to=T), x : T        -> x
//   castlike-to-same-type  CastLike(x, like), x, like : T -> x
//   cast-chain             Cast(Cast(x, to=A), to=B), x : T, CastIsLossless(T, A) -> Cast(x, to=B)
//                          (-> x when B == T); never when B is string (its text depends on
//                          the type it is printed from). The inner Cast stays if others read it.
//   neutral-operand        Mul(x, 1), Mul(1, x), Div(x, 1), Sub(x, 0), Add(x, 0), Add(0, x) -> x
//                          when the constant has one element and no more dims than x (so
//                          the result has x's shape); Add of 0 only on integers (on floats
//                          -0 + 0 is +0). A constant with more elements stays: a LayerNorm's
//                          weight of ones or a Linear's zero bias is what onnxruntime's
//                          fusions match (LayerNormalization, Attention), and a default
//                          initialisation writes exactly those.
// Graph outputs keep their names: a removed node's output that a graph (or an If/Loop/Scan
// body) returns is taken over by its input only when that input is a plain node output of
// the same graph, not returned already; otherwise the node stays (so a graph input returned
// through an Identity, or a body returning an outer-scope value, stay correct).
// Types come from the model's annotations and onnx shape inference (on a copy: the model
// gains no value_info); a Cast whose input type is unknown stays.
//
// Options:
//   allow-precision-loss=false  also collapse chains through a narrower floating type
//                               (float -> float16 -> float becomes x): values change.
//
// Before:  a = Identity(X); b = Cast<to=DOUBLE>(a); c = Cast<to=FLOAT>(b); Y = Relu(c)   (X float)
// After:   Y = Relu(X)
#include "passes/cleanup/strip_identity_cast.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"

#include "core/analysis/type_facts.h"
#include "core/ir/dtypes.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using pattern::Match;
using pattern::Pattern;
using pattern::ValueRef;
using Types = onnx::TensorProto;

// How a tensor element type represents numbers.
struct NumberFormat {
  enum Kind { kBool, kInt, kFloat } kind;
  bool is_signed = false;
  int bits = 0;       // integers: width
  int precision = 0;  // floats: significand bits, the implicit one included
  int emin = 0;       // floats: exponent of the smallest normal
  double max = 0;     // floats: largest finite value
  bool inf = false, nan = false, negative_zero = false;
};

std::optional<NumberFormat> FormatOf(int32_t type) {
  using F = NumberFormat;
  auto integer = [](bool is_signed, int bits) { return F{F::kInt, is_signed, bits}; };
  auto floating = [](int precision, int emin, double max, bool inf, bool nan, bool negative_zero) {
    return F{F::kFloat, true, 0, precision, emin, max, inf, nan, negative_zero};
  };
  switch (type) {
    case Types::BOOL: return F{F::kBool};
    case Types::UINT4: return integer(false, 4);
    case Types::INT4: return integer(true, 4);
    case Types::UINT8: return integer(false, 8);
    case Types::INT8: return integer(true, 8);
    case Types::UINT16: return integer(false, 16);
    case Types::INT16: return integer(true, 16);
    case Types::UINT32: return integer(false, 32);
    case Types::INT32: return integer(true, 32);
    case Types::UINT64: return integer(false, 64);
    case Types::INT64: return integer(true, 64);
    case Types::FLOAT4E2M1: return floating(2, 0, 6.0, false, false, true);
    case Types::FLOAT8E4M3FN: return floating(4, -6, 448.0, false, true, true);
    case Types::FLOAT8E4M3FNUZ: return floating(4, -7, 240.0, false, true, false);
    case Types::FLOAT8E5M2: return floating(3, -14, 57344.0, true, true, true);
    case Types::FLOAT8E5M2FNUZ: return floating(3, -15, 57344.0, false, true, false);
    case Types::FLOAT16: return floating(11, -14, 65504.0, true, true, true);
    case Types::BFLOAT16: return floating(8, -126, 3.3895313892515355e38, true, true, true);
    case Types::FLOAT: return floating(24, -126, 3.4028234663852886e38, true, true, true);
    case Types::DOUBLE: return floating(53, -1022, 1.7976931348623157e308, true, true, true);
    default: return std::nullopt;  // string, complex, float8e8m0, 2-bit types, unknown
  }
}

// Largest magnitude of an integer type, as a double (exact: a power of two or 2^n - 1
// only matters through comparisons with powers of two).
double IntMaxMagnitude(const NumberFormat& f) {
  return f.is_signed ? std::ldexp(1.0, f.bits - 1) : std::ldexp(1.0, f.bits) - 1;
}

}  // namespace

bool CastIsLossless(int32_t from, int32_t to, bool allow_precision_loss) {
  if (from == to) return true;
  auto a = FormatOf(from), b = FormatOf(to);
  if (!a || !b) return false;
  switch (a->kind) {
    case NumberFormat::kBool: return true;  // 0 and 1 are numbers of every format here
    case NumberFormat::kInt:
      if (b->kind == NumberFormat::kBool) return false;
      if (b->kind == NumberFormat::kInt) {
        if (a->is_signed && !b->is_signed) return false;
        return a->is_signed == b->is_signed ? a->bits <= b->bits : a->bits < b->bits;
      }
      // Every integer up to 2^precision is exact in a float format (within its range).
      return IntMaxMagnitude(*a) <= std::ldexp(1.0, b->precision) && IntMaxMagnitude(*a) <= b->max;
    case NumberFormat::kFloat:
      if (b->kind != NumberFormat::kFloat) return false;  // fractions, infinities, NaN
      if (allow_precision_loss) return true;
      // Finer significand, a last bit at least as small (subnormals), a range at least as
      // wide, and the same special values.
      return b->precision >= a->precision && b->emin - b->precision <= a->emin - a->precision && b->max >= a->max &&
             (!a->inf || b->inf) && (!a->nan || b->nan) && (!a->negative_zero || b->negative_zero);
  }
  return false;
}

namespace {

// A graph output keeps its name: `replacement` may take over `out`'s place only when it
// can take the name too (a plain node output of the same graph, not returned already).
bool CanReplace(const Value* out, const Value* replacement, std::string* why) {
  if (!out->IsGraphOutput()) return true;
  const char* reason = nullptr;
  if (replacement->graph() != out->graph()) {
    reason = "is an outer-scope value";
  } else if (replacement->IsGraphInput()) {
    reason = "is a graph input";
  } else if (replacement->IsInitializer() || !replacement->producer()) {
    reason = "is an initializer";
  } else if (replacement->IsGraphOutput()) {
    reason = "is a graph output already";
  }
  if (!reason) return true;
  if (why)
    *why = absl::StrCat("'", out->name(), "' is a graph output and its input '", replacement->name(), "' ", reason,
                        ": the node keeps the output's name");
  return false;
}

class StripIdentityCastPass : public PatternPass {
 public:
  explicit StripIdentityCastPass(bool allow_precision_loss) : allow_precision_loss_(allow_precision_loss) {
    AddRule(IdentityRule());
    AddRule(CastToSameTypeRule());
    AddRule(CastLikeToSameTypeRule());
    AddRule(CastChainRule());
    for (const char* op : {"Mul", "Div", "Add", "Sub"}) AddRule(NeutralOperandRule(op));
  }

  // Identity(x) -> x
  static std::unique_ptr<RewriteRule> IdentityRule() {
    Pattern p("identity");
    ValueRef x = p.Any("x");
    int root = p.Op("Identity", {x}).Capture("identity").id();
    return std::make_unique<PatternRule<>>(
        "identity", std::move(p), root,
        [](const Match& m) { return Replaceable(m.node("identity")->output(0), m.value("x")); },
        [](const Match& m, NoPlan, Rewriter&) -> StatusOr<std::vector<Value*>> {
          return std::vector<Value*>{m.value("x")};
        });
  }

  // Cast(x, to=T) -> x  when x : T
  static std::unique_ptr<RewriteRule> CastToSameTypeRule() {
    Pattern p("cast-to-same-type");
    ValueRef x = p.Any("x");
    int root = p.Op("Cast", {x}).Capture("cast").id();
    return std::make_unique<PatternRule<>>(
        "cast-to-same-type", std::move(p), root,
        [](const Match& m, RewriteFacts& facts) -> Verdict<> {
          Node* cast = m.node("cast");
          int32_t from = facts.Get<TypeFacts>().ElemType(m.value("x")),
                  to = static_cast<int32_t>(cast->GetInt("to", 0));
          if (from == 0) return Refuse("the input's type is unknown");
          if (from != to) return Refuse(absl::StrCat("casts ", DataTypeName(from), " to ", DataTypeName(to)));
          return Replaceable(cast->output(0), m.value("x"));
        },
        [](const Match& m, NoPlan, Rewriter&) -> StatusOr<std::vector<Value*>> {
          return std::vector<Value*>{m.value("x")};
        });
  }

  // CastLike(x, like) -> x  when x and like have the same type
  static std::unique_ptr<RewriteRule> CastLikeToSameTypeRule() {
    Pattern p("castlike-to-same-type");
    ValueRef x = p.Any("x");
    int root = p.Op("CastLike", {x, p.Any("like")}).Capture("cast").id();
    return std::make_unique<PatternRule<>>(
        "castlike-to-same-type", std::move(p), root,
        [](const Match& m, RewriteFacts& facts) -> Verdict<> {
          const TypeFacts& types = facts.Get<TypeFacts>();
          int32_t from = types.ElemType(m.value("x")), to = types.ElemType(m.value("like"));
          if (from == 0 || to == 0) return Refuse("an input's type is unknown");
          if (from != to) return Refuse(absl::StrCat("casts ", DataTypeName(from), " to ", DataTypeName(to)));
          return Replaceable(m.node("cast")->output(0), m.value("x"));
        },
        [](const Match& m, NoPlan, Rewriter&) -> StatusOr<std::vector<Value*>> {
          return std::vector<Value*>{m.value("x")};
        });
  }

  // Cast(Cast(x, to=A), to=B) -> Cast(x, to=B)  when x : T and CastIsLossless(T, A); x
  // itself when T is B. The plan: whether it is x itself.
  std::unique_ptr<RewriteRule> CastChainRule() const {
    Pattern p("cast-chain");
    ValueRef x = p.Any("x");
    auto inner = p.Op("Cast", {x}).Capture("inner").AllowExternalUses();
    int root = p.Op("Cast", {inner}).Capture("outer").id();
    const bool allow_precision_loss = allow_precision_loss_;
    return std::make_unique<PatternRule<bool>>(
        "cast-chain", std::move(p), root,
        [allow_precision_loss](const Match& m, RewriteFacts& facts) -> Verdict<bool> {
          int32_t from = facts.Get<TypeFacts>().ElemType(m.value("x"));
          int32_t via = static_cast<int32_t>(m.node("inner")->GetInt("to", 0));
          Node* outer = m.node("outer");
          int32_t to = static_cast<int32_t>(outer->GetInt("to", 0));
          if (from == 0) return Refuse("the input's type is unknown");
          if (to == Types::STRING) return Refuse("a number's text depends on the type it is printed from");
          if (!CastIsLossless(from, via, allow_precision_loss)) {
            return Refuse(
                absl::StrCat(DataTypeName(from), " -> ", DataTypeName(via), " loses values",
                             allow_precision_loss ? "" : " (allow-precision-loss=true to collapse float narrowing)"));
          }
          return from == to && CanReplace(outer->output(0), m.value("x"), nullptr);
        },
        [](const Match& m, bool x_itself, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Value* x = m.value("x");
          if (x_itself) return std::vector<Value*>{x};
          std::vector<onnx::AttributeProto> attributes;  // `to`, and saturate/round if given
          for (const Attribute& a : m.node("outer")->attributes()) attributes.push_back(a.proto());
          return std::vector<Value*>{rw.Op("Cast", {x}, std::move(attributes))};
        });
  }

  // Given:  %y = Mul(%x, %one)     %one = [1.0] (one element), rank(%one) <= rank(%x)
  // Result: %y is %x (Div by 1, Sub of 0 and integer Add of 0 alike; Mul and Add either order)
  static std::unique_ptr<RewriteRule> NeutralOperandRule(const std::string& op) {
    const bool multiplies = op == "Mul" || op == "Div";
    const double neutral = multiplies ? 1.0 : 0.0;
    Pattern p("neutral-operand");
    ValueRef x = p.Any("x");
    ValueRef c = p.Const("c", [neutral](const ConstantData& d, std::string* why) {
      std::optional<double> v = d.is_scalar() ? d.ScalarAsDouble() : std::nullopt;
      if (v && *v == neutral) return true;
      if (why) *why = absl::StrCat("is not one element equal to ", neutral);
      return false;
    });
    pattern::OpRef root = p.Op(op, {x, c}).Capture("op");
    if (op == "Mul" || op == "Add") root.Commutative();
    return std::make_unique<PatternRule<>>(
        "neutral-operand", std::move(p), root.id(),
        [op](const Match& m, RewriteFacts& facts) -> Verdict<> {
          const TypeFacts& types = facts.Get<TypeFacts>();
          Value* x = m.value("x");
          Value* y = m.node("op")->output(0);
          // The constant has x's type (the op requires it) and is read without its elements.
          std::optional<std::pair<int32_t, std::vector<int64_t>>> c = GetConstantTypeAndDims(m.value("c"));
          if (!c) return Refuse("the constant's type is unknown");
          if (op == "Add" && (!FormatOf(c->first) || FormatOf(c->first)->kind != NumberFormat::kInt))
            return Refuse("on floats x + 0 turns -0 into +0");
          // y has x's shape when the constant adds no dims: it is a scalar, x has at least its
          // rank, or y has more dims than the constant (so all of them are x's).
          int64_t rank_c = static_cast<int64_t>(c->second.size());
          if (rank_c > 0 && types.Rank(x) < rank_c && types.Rank(y) <= rank_c)
            return Refuse("the constant may add dims to x (x's rank unknown or lower)");
          return Replaceable(m.node("op")->output(0), x);
        },
        [](const Match& m, NoPlan, Rewriter&) -> StatusOr<std::vector<Value*>> {
          return std::vector<Value*>{m.value("x")};
        });
  }

  // CanReplace as a verdict.
  static Verdict<> Replaceable(const Value* out, const Value* x) {
    std::string why;
    if (CanReplace(out, x, &why)) return Matched();
    return Refuse(std::move(why));
  }

  bool allow_precision_loss_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateStripIdentityCastPass(const PassOptions& o) {
  return std::make_unique<StripIdentityCastPass>(o.Bool("allow-precision-loss"));
}

}  // namespace onnxsurgeon::passes

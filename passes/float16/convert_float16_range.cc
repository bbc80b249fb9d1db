// convert-float16's range analysis (convert_float16_range.h).
#include "passes/float16/convert_float16_range.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"

namespace onnxsurgeon::passes::fp16 {
namespace {
constexpr double kHalfMax = 65504.0;

// Per float value an interval [lo, hi] that holds every element (infinite ends: unknown)
// and whether it "grew": made by squaring or exponentiating a value whose bound is not
// known (a decomposed norm's variance, a written-out Softmax's Exp), or computed from such
// a value by an op that keeps the growth (Add, ReduceMean, MatMul...). A grown value is
// assumed beyond float16; the ops that undo the growth (Sqrt, Log, Reciprocal, a Div by
// it, the bounded activations) end the region.
constexpr double kSqrtHalfMax = 255.9375;   // the largest float16 whose square fits (255.9375^2 < 65504)
constexpr double kHalfExactInteger = 2048;  // float16 holds every integer up to 2^11, not all past it

double Mag(const Range& r) { return std::max(std::fabs(r.lo), std::fabs(r.hi)); }
bool Known(const Range& r) { return std::isfinite(r.lo) && std::isfinite(r.hi); }
bool Fits(const Range& r) { return Known(r) && Mag(r) <= kHalfMax; }
// Bound known and beyond float16 (or a side known beyond it).
bool Exceeds(const Range& r) { return (Known(r) && Mag(r) > kHalfMax) || r.lo > kHalfMax || r.hi < -kHalfMax; }

Range Hull(const Range& a, const Range& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

double SafeMul(double a, double b) {  // 0 * inf = 0: a zero bound stays exact
  if (a == 0 || b == 0) return 0;
  return a * b;
}

Range MulRange(const Range& a, const Range& b) {
  double p[] = {SafeMul(a.lo, b.lo), SafeMul(a.lo, b.hi), SafeMul(a.hi, b.lo), SafeMul(a.hi, b.hi)};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

// Range of a constant's elements (clamped to float16's range when `clamp`, as the pass
// will store them); non-finite elements make that side unknown.
std::optional<Range> ConstantRange(const Value* v, bool clamp) {
  auto c = GetConstant(v);
  if (!c) return std::nullopt;
  auto values = c->AsDoubles();
  if (!values) return std::nullopt;
  Range r{kInf, -kInf};
  for (double x : *values) {
    if (std::isnan(x)) return Range{};
    if (clamp && std::isfinite(x)) x = std::clamp<double>(x, -kHalfMax, kHalfMax);
    r.lo = std::min(r.lo, x);
    r.hi = std::max(r.hi, x);
  }
  if (values->empty()) r = {0, 0};
  return r;
}

// The values an integer (or bool) element type can hold, for the types narrow enough that
// the bound helps: an int8/uint8 accumulation (MatMulInteger) is bounded by them.
std::optional<Range> TypeRange(int32_t elem) {
  using T = onnx::TensorProto;
  switch (elem) {
    case T::BOOL: return Range{0, 1};
    case T::INT8: return Range{-128, 127};
    case T::UINT8: return Range{0, 255};
    case T::INT16: return Range{-32768, 32767};
    case T::UINT16: return Range{0, 65535};
    default: return std::nullopt;
  }
}

// Casts to these types make integers that float16 holds exactly only up to 2048 (8-bit
// integers always fit).
bool WideInteger(int64_t to) {
  using T = onnx::TensorProto;
  return to == T::INT16 || to == T::UINT16 || to == T::INT32 || to == T::UINT32 || to == T::INT64 || to == T::UINT64;
}

// Ops through which an integer-making chain is walked back: they compute each element
// from the same elements of their inputs, move them, or select one (a quantizer's
// ReduceMin/ReduceMax of its input), so rounding anywhere in the chain reaches the integer.
bool ChainOp(const Node& n) {
  for (const char* op : {"Floor",   "Ceil",       "Round",     "Add",     "Sub",    "Mul",       "Div",      "Neg",
                         "Abs",     "Reciprocal", "Clip",      "Max",     "Min",    "Relu",      "Identity", "Cast",
                         "Reshape", "Squeeze",    "Unsqueeze", "Flatten", "Expand", "ReduceMin", "ReduceMax"})
    if (n.Is(op)) return true;
  return false;
}

}  // namespace

class RangeAnalysis::Impl {
 public:
  Impl(const Graph& main, const TypeFacts& types, const absl::flat_hash_map<std::string, Range>& measured, bool clamp)
      : types_(types), measured_(measured), clamp_(clamp) {
    for (Graph* g : main.SelfAndSubgraphs())
      for (Value* v : g->initializers()) Seed(v);
    for (Graph* g : main.SelfAndSubgraphs())  // a body's inputs: measured (calibrate), else typed
      for (Value* v : g->inputs()) Seed(v);
    std::vector<Node*> nodes = main.AllNodesRecursive();
    for (Node* n : nodes) Visit(*n);
    for (Node* n : nodes)
      if (n->Is("Cast") && WideInteger(n->GetInt("to", 0))) KeepIntegerChain(*n);
  }

  const Range& Of(const Value* v) const {
    static const Range kUnknown;
    auto it = ranges_.find(v);
    return it == ranges_.end() ? kUnknown : it->second;
  }

  // Why the node must compute in float32 ("" when float16 is safe as far as ranges go).
  std::string KeepReason(const Node& n) const {
    auto it = reasons_.find(&n);
    return it == reasons_.end() ? std::string() : it->second;
  }

 private:
  void Seed(const Value* v) {
    if (auto it = measured_.find(v->name()); it != measured_.end()) {
      ranges_[v] = it->second;
    } else if (auto c = ConstantRange(v, clamp_)) {
      ranges_[v] = *c;
    } else if (auto t = TypeRange(types_.ElemType(v))) {
      ranges_[v] = *t;
    }
  }

  // A float value rounded to an integer by a Cast to a wide integer type: unless its bound
  // is within float16's exact integers (|x| <= 2048), the elementwise chain that computes
  // it keeps float32 (a quantizer's Floor(bias / (x_scale * w_scale)) -> Cast int32:
  // float16 changes those integers, and a product of small scales falls to subnormals).
  void KeepIntegerChain(const Node& cast) {
    const Value* in = cast.input(0);
    if (!in || types_.ElemType(in) != onnx::TensorProto::FLOAT) return;
    if (Known(Of(in)) && Mag(Of(in)) <= kHalfExactInteger) return;
    const std::string reason = absl::StrCat("computes an integer not bounded by 2048 for a Cast to ",
                                            onnx::TensorProto::DataType_Name(cast.GetInt("to", 0)));
    std::vector<const Value*> work{in};
    absl::flat_hash_set<const Value*> seen{in};
    while (!work.empty()) {
      const Node* p = work.back()->producer();
      work.pop_back();
      if (!p || !ChainOp(*p)) continue;
      reasons_.try_emplace(p, reason);
      for (const Value* v : p->inputs())
        if (v && types_.ElemType(v) == onnx::TensorProto::FLOAT && seen.insert(v).second) work.push_back(v);
    }
  }

  int64_t ReducedCount(const Node& n) const {
    auto dims = types_.Dims(n.input(0));
    if (!dims) return -1;
    std::vector<int64_t> axes;
    if (const Attribute* a = n.FindAttribute("axes")) {
      for (int64_t x : a->proto().ints()) axes.push_back(x);
    } else if (n.num_inputs() > 1 && n.input(1)) {
      auto c = GetConstant(n.input(1));
      if (!c) return -1;
      auto ints = c->AsInt64s();
      if (!ints) return -1;
      axes = *ints;
    }
    if (axes.empty() && n.GetInt("noop_with_empty_axes", 0)) return 1;
    int64_t rank = static_cast<int64_t>(dims->size()), count = 1;
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    for (int64_t a : axes) {
      int64_t d = (*dims)[(a + rank) % std::max<int64_t>(rank, 1)];
      if (d < 0) return -1;
      count *= d;
    }
    return count;
  }

  // The inner (accumulated) length of a MatMul/Gemm/Conv, -1 when unknown.
  int64_t InnerCount(const Node& n) const {
    if (n.Is("MatMul") || n.Is("MatMulInteger")) {
      if (auto b = types_.Dims(n.input(1)); b && b->size() >= 2 && (*b)[b->size() - 2] >= 0) return (*b)[b->size() - 2];
      auto dims = types_.Dims(n.input(0));
      return dims && !dims->empty() ? dims->back() : -1;
    }
    if (n.Is("Gemm")) {
      auto dims = types_.Dims(n.input(0));
      if (!dims || dims->size() != 2) return -1;
      return n.GetInt("transA", 0) ? (*dims)[0] : (*dims)[1];
    }
    auto w = types_.Dims(n.input(1));  // Conv: [M, C/group, k...]; ConvTranspose: [C, M/group, k...]
    if (!w || w->size() < 2) return -1;
    int64_t count = n.Is("ConvTranspose") ? (*w)[0] : (*w)[1];
    for (size_t i = 2; i < w->size(); ++i) count *= (*w)[i];
    for (int64_t d : *w)
      if (d < 0) return -1;
    return count;
  }

  std::optional<double> ScalarConstant(const Value* v) const {
    if (!v) return std::nullopt;
    auto c = GetConstant(v);
    if (!c || !c->is_scalar()) return std::nullopt;
    return c->ScalarAsDouble();
  }

  static bool IsAny(const Node& n, std::initializer_list<const char*> ops) {
    for (const char* op : ops)
      if (n.Is(op)) return true;
    return false;
  }

  // The value v is a copy of (Identity, Dropout, a Cast between floats), else v.
  const Value* Source(const Value* v) const {
    for (const Node* p = v ? v->producer() : nullptr; p && p->num_inputs() > 0 && p->input(0); p = v->producer()) {
      bool copy = p->Is("Identity") || p->Is("Dropout") ||
                  (p->Is("Cast") && types_.ElemType(p->input(0)) == onnx::TensorProto::FLOAT &&
                   p->GetInt("to", 0) == onnx::TensorProto::FLOAT);
      if (!copy) break;
      v = p->input(0);
    }
    return v;
  }

  // Whether a and b hold the same elements: one value, copies of it, or the same op with
  // the same attributes on the same inputs (a Sub(x, mean) written twice). Graph inputs
  // and weights are the same only as one value.
  bool Same(const Value* a, const Value* b, int depth = 4) const {
    a = Source(a), b = Source(b);
    if (a == b) return a != nullptr;
    const Node *pa = a ? a->producer() : nullptr, *pb = b ? b->producer() : nullptr;
    if (!pa || !pb || depth == 0 || pa->op_type() != pb->op_type() || pa->domain() != pb->domain() ||
        pa->num_inputs() != pb->num_inputs() || pa->num_outputs() != 1 || pb->num_outputs() != 1 ||
        pa->attributes().size() != pb->attributes().size() || !pa->subgraphs().empty())
      return false;
    for (size_t i = 0; i < pa->attributes().size(); ++i)
      if (pa->attributes()[i].proto().SerializeAsString() != pb->attributes()[i].proto().SerializeAsString())
        return false;
    for (size_t i = 0; i < pa->num_inputs(); ++i)
      if ((pa->input(i) == nullptr) != (pb->input(i) == nullptr) ||
          (pa->input(i) && !Same(pa->input(i), pb->input(i), depth - 1)))
        return false;
    return true;
  }

  // v without the epsilon added to it: Add(v, c) or Max(v, c) with a constant c >= 0.
  const Value* WithoutEpsilon(const Value* v) const {
    v = Source(v);
    const Node* p = v ? v->producer() : nullptr;
    if (!p || !(p->Is("Add") || p->Is("Max")) || p->num_inputs() != 2) return v;
    for (int i = 0; i < 2; ++i) {
      auto c = ConstantRange(p->input(1 - i), clamp_);
      if (c && c->lo >= 0) return Source(p->input(i));
    }
    return v;
  }

  // The bound of num / den when den is num's own norm (plus an epsilon): |x| / sqrt(mean(x^2))
  // is at most sqrt(n) over n elements (a decomposed LayerNorm's or RMSNorm's quotient),
  // |x| / sqrt(sum(x^2)) and |x| / ReduceL2(x) at most 1. nullopt for any other quotient.
  std::optional<double> NormRatioBound(const Value* num, const Value* den) const {
    const Value* root = WithoutEpsilon(den);
    const Node* p = root ? root->producer() : nullptr;
    if (p && p->Is("ReduceL2")) return Same(p->input(0), num) ? std::optional<double>(1) : std::nullopt;
    if (!p || !p->Is("Sqrt")) return std::nullopt;
    const Value* sum = WithoutEpsilon(p->input(0));
    const Node* r = sum ? sum->producer() : nullptr;
    if (!r || !(r->Is("ReduceMean") || r->Is("ReduceSum") || r->Is("ReduceSumSquare"))) return std::nullopt;
    if (r->Is("ReduceSumSquare")) return Same(r->input(0), num) ? std::optional<double>(1) : std::nullopt;
    const Value* sq = Source(r->input(0));
    const Node* q = sq ? sq->producer() : nullptr;
    bool squares = q && ((q->Is("Mul") && Same(q->input(0), q->input(1))) ||
                         (q->Is("Pow") && ScalarConstant(q->input(1)) == std::optional<double>(2)));
    if (!squares || !Same(q->input(0), num)) return std::nullopt;
    if (r->Is("ReduceSum")) return 1;
    int64_t count = ReducedCount(*r);
    return count > 0 ? std::optional<double>(std::sqrt(double(count))) : std::nullopt;
  }

  // The output range from the inputs' (real arithmetic). `growth` is set to why the op
  // squares/exponentiates, `contracts` when it undoes growth.
  Range Compute(const Node& n, const std::vector<Range>& in, std::string& growth, bool& contracts) const {
    const Range a = in.empty() ? Range{} : in[0];
    const Range b = in.size() > 1 ? in[1] : Range{};
    if (IsAny(n, {"Identity",     "Reshape",         "Transpose",  "Squeeze",     "Unsqueeze",
                  "Flatten",      "Expand",          "Tile",       "Gather",      "GatherElements",
                  "GatherND",     "Slice",           "Split",      "ReduceMax",   "ReduceMin",
                  "MaxPool",      "GlobalMaxPool",   "ReduceMean", "AveragePool", "GlobalAveragePool",
                  "DepthToSpace", "SpaceToDepth",    "Dropout",    "Cast",        "CastLike",
                  "Compress",     "ReverseSequence", "Upsample"})) {
      if (n.Is("Resize") || n.Is("Upsample")) return {};
      return {a.lo, a.hi};
    }
    if (n.Is("Concat") || n.Is("Max") || n.Is("Min") || n.Is("Sum") || n.Is("Mean")) {
      Range r = a;
      for (size_t i = 1; i < in.size(); ++i) {
        if (n.Is("Sum")) r = {r.lo + in[i].lo, r.hi + in[i].hi};
        else if (n.Is("Max")) r = {std::max(r.lo, in[i].lo), std::max(r.hi, in[i].hi)};
        else if (n.Is("Min")) r = {std::min(r.lo, in[i].lo), std::min(r.hi, in[i].hi)};
        else r = Hull(r, in[i]);
      }
      return r;
    }
    if (n.Is("Where")) return in.size() > 2 ? Hull(in[1], in[2]) : Range{};
    if (n.Is("Relu")) return {std::max(0.0, a.lo), std::max(0.0, a.hi)};
    if (n.Is("Clip")) {
      Range r{a.lo, a.hi};
      if (auto lo = in.size() > 1 && n.input(1) ? ScalarConstant(n.input(1)) : std::nullopt)
        r.lo = std::max(r.lo, *lo), r.hi = std::max(r.hi, *lo);
      if (auto hi = in.size() > 2 && n.input(2) ? ScalarConstant(n.input(2)) : std::nullopt)
        r.hi = std::min(r.hi, *hi), r.lo = std::min(r.lo, *hi);
      if (const Attribute* m = n.FindAttribute("min")) r.lo = std::max(r.lo, double(m->proto().f()));
      if (const Attribute* m = n.FindAttribute("max")) r.hi = std::min(r.hi, double(m->proto().f()));
      contracts = true;
      return r;
    }
    if (IsAny(n, {"Sigmoid", "HardSigmoid", "Softmax"})) return contracts = true, Range{0, 1};
    if (IsAny(n, {"Tanh", "Erf", "Sin", "Cos", "Softsign", "Sign"})) return contracts = true, Range{-1, 1};
    if (n.Is("LogSoftmax")) return contracts = true, Range{-kInf, 0};
    if (n.Is("Neg")) return {-a.hi, -a.lo};
    if (n.Is("Floor")) return {std::floor(a.lo), std::floor(a.hi)};
    if (n.Is("Ceil")) return {std::ceil(a.lo), std::ceil(a.hi)};
    if (n.Is("Round")) return {std::round(a.lo), std::round(a.hi)};
    if (n.Is("Abs")) return {a.lo >= 0 ? a.lo : 0, Mag(a)};
    if (n.Is("Add")) return {a.lo + b.lo, a.hi + b.hi};
    if (n.Is("Sub")) {
      // x - ReduceMax(x): at most 0 (a written-out Softmax's shift).
      const Node* p = n.input(1) ? n.input(1)->producer() : nullptr;
      if (p && p->Is("ReduceMax") && p->input(0) == n.input(0)) return {a.lo - a.hi, 0};
      return {a.lo - b.hi, a.hi - b.lo};
    }
    if (n.Is("Mul")) {
      for (int i = 0; i < 2; ++i) {  // x * Reciprocal(norm of x)
        const Node* r = n.input(1 - i) ? Source(n.input(1 - i))->producer() : nullptr;
        if (auto bound = r && r->Is("Reciprocal") ? NormRatioBound(n.input(i), r->input(0)) : std::nullopt)
          return contracts = true, Range{-*bound, *bound};
      }
      if (Same(n.input(0), n.input(1))) {
        Range r{a.lo <= 0 && a.hi >= 0 ? 0 : std::min(a.lo * a.lo, a.hi * a.hi), Mag(a) * Mag(a)};
        if (!Fits(r)) growth = "squares a value not bounded by 256 (Mul(x, x))";
        return r;
      }
      return MulRange(a, b);
    }
    if (n.Is("Div") || n.Is("Reciprocal")) {
      Range num = n.Is("Div") ? a : Range{1, 1}, den = n.Is("Div") ? b : a;
      // A grown value over a grown value (Exp over its ReduceSum) is a ratio; over a
      // bounded one (a variance's unbiasing) it keeps growing.
      contracts = !num.grown || den.grown;
      if (n.Is("Div"))
        if (auto bound = NormRatioBound(n.input(0), n.input(1))) return Range{-*bound, *bound};
      // A denominator of one sign bounded away from 0 (y + eps with y >= 0): the quotient is
      // at most |num| / eps. One that may reach 0 says nothing: the bound is unknown.
      if (den.lo > 0 || den.hi < 0) return MulRange(num, {1 / den.hi, 1 / den.lo});
      return {};
    }
    if (n.Is("Sqrt")) return contracts = true, Range{std::sqrt(std::max(0.0, a.lo)), std::sqrt(std::max(0.0, a.hi))};
    if (n.Is("Log")) return contracts = true, Range{a.lo > 0 ? std::log(a.lo) : -kInf, std::log(std::max(0.0, a.hi))};
    if (n.Is("Exp")) {
      Range r{std::exp(a.lo), std::exp(a.hi)};
      if (!Fits(r)) growth = "exponentiates a value not bounded by 11 (Exp)";
      return r;
    }
    if (n.Is("Pow")) {
      auto e = ScalarConstant(n.input(1));
      if (!e) {
        growth = "raises to a power that is not a constant (Pow)";
        return {};
      }
      if (*e == 1) return {a.lo, a.hi};
      if (*e <= 0 || *e < 1) return {};  // roots and reciprocals: no growth, bound unknown
      double m = std::pow(Mag(a), *e);
      bool even = std::floor(*e) == *e && std::fmod(*e, 2.0) == 0;
      Range r{even || a.lo >= 0 ? 0 : -m, m};
      if (!Fits(r))
        growth =
            absl::StrCat("raises a value not bounded by ", std::pow(kHalfMax, 1 / *e), " to the power ", *e, " (Pow)");
      return r;
    }
    if (IsAny(n, {"ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp"})) {
      int64_t count = ReducedCount(n);
      double c = count < 0 ? kInf : double(count);
      if (n.Is("ReduceSum")) {
        Range r{a.lo >= 0 ? a.lo : SafeMul(c, a.lo), a.hi <= 0 ? a.hi : SafeMul(c, a.hi)};
        return r;
      }
      if (n.Is("ReduceL1")) return {0, SafeMul(c, Mag(a))};
      Range sq{0, SafeMul(c, Mag(a) * Mag(a))};
      if (n.Is("ReduceLogSumExp")) {
        if (!(std::exp(a.hi) * c <= kHalfMax))
          growth = "sums exponentials of a value not bounded by 11 (ReduceLogSumExp)";
        return {};
      }
      if (!Fits(sq)) growth = "sums squares of a value not known to be small (" + n.op_type() + ")";
      if (n.Is("ReduceL2")) return {0, std::sqrt(sq.hi)};
      return sq;
    }
    if (IsAny(n, {"MatMulInteger", "ConvInteger"})) {
      // Sums of products of 8-bit integers less their zero points: past 65504 already for
      // a few dozen terms, so the Cast to float after them keeps float32.
      int64_t k = InnerCount(n);
      Range za = in.size() > 2 && n.input(2) ? in[2] : Range{0, 0};
      Range zb = in.size() > 3 && n.input(3) ? in[3] : Range{0, 0};
      double bound = SafeMul(k < 0 ? kInf : double(k),
                             SafeMul(Mag({a.lo - za.hi, a.hi - za.lo}), Mag({b.lo - zb.hi, b.hi - zb.lo})));
      if (!(bound <= kHalfMax)) growth = "sums products of 8-bit integers past 65504 (" + n.op_type() + ")";
      return {-bound, bound};
    }
    if (IsAny(n, {"MatMul", "Gemm", "Conv", "ConvTranspose"})) {
      int64_t k = InnerCount(n);
      double bound = SafeMul(k < 0 ? kInf : double(k), SafeMul(Mag(a), Mag(b)));
      if (n.Is("Gemm")) bound = SafeMul(bound, std::fabs(n.GetFloat("alpha", 1.0f)));
      if (in.size() > 2 && n.input(2))
        bound += SafeMul(n.Is("Gemm") ? std::fabs(n.GetFloat("beta", 1.0f)) : 1.0, Mag(in[2]));
      return {-bound, bound};
    }
    return {};
  }

  void Visit(const Node& n) {
    std::vector<Range> in;
    bool input_grown = false, input_exceeds = false, integer_grown = false;
    for (const Value* v : n.inputs()) {
      in.push_back(v ? Of(v) : Range{});
      if (v && types_.ElemType(v) == onnx::TensorProto::FLOAT) {
        input_grown |= Of(v).grown;
        input_exceeds |= Exceeds(Of(v)) || beyond_.contains(v);
      } else if (v) {
        integer_grown |= Of(v).grown;
      }
    }
    std::string growth;
    bool contracts = false;
    Range out = n.num_outputs() ? Compute(n, in, growth, contracts) : Range{};
    if (n.Is("Constant") && n.num_outputs()) {
      if (auto c = ConstantRange(n.output(0), clamp_)) out = *c;
    }
    if (n.num_outputs() && n.output(0)) {
      if (auto it = measured_.find(n.output(0)->name()); it != measured_.end()) {
        out = it->second;  // measured beats the static bound, and any structural guess
        growth.clear();
        contracts = true;
      }
    }
    std::string reason;
    if (!growth.empty() && !Fits(out)) {
      out.grown = !n.Is("ReduceL2");  // its square root is back at its input's scale
      reason = growth;
    } else if (input_grown && !contracts && !Fits(out)) {
      out.grown = true;
    }
    // An integer sum past float16 (MatMulInteger's, plus its bias) made float: the Cast and
    // its readers keep float32; the scale they multiply by brings the value back.
    if (n.Is("Cast") && integer_grown && n.GetInt("to", 0) == onnx::TensorProto::FLOAT) {
      reason = "casts an integer sum beyond float16 to float (" + n.op_type() + " of an integer accumulation)";
      beyond_.insert(n.output(0));
    }
    // Norms whose kernels compute the variance in the input's type.
    // GroupNormalization-21 computes them in stash_type, float32 by default; 18 in its input's.
    const int64_t stash_default = n.graph()->OpsetVersion("") >= 21 ? onnx::TensorProto::FLOAT : 0;
    if ((n.Is("InstanceNormalization") ||
         (n.Is("GroupNormalization") && n.GetInt("stash_type", stash_default) != onnx::TensorProto::FLOAT)) &&
        !(Known(in[0]) && Mag(in[0]) <= kSqrtHalfMax / 2)) {
      reason = "computes a variance (squares) of a value not bounded by 128 (" + n.op_type() + ")";
    }
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Value* v = n.output(i);
      if (!v) continue;
      Range r = out;
      if (auto t = TypeRange(types_.ElemType(v))) r = {std::max(r.lo, t->lo), std::min(r.hi, t->hi)};
      // An integer computed from an integer sum past float16 (ConvInteger's plus a bias).
      if (types_.ElemType(v) != onnx::TensorProto::FLOAT && integer_grown && !Fits(r)) r.grown = true;
      if (auto it = measured_.find(v->name()); it != measured_.end()) {
        r = it->second;  // measured on real inputs: it overrides the static bound
        if (!Fits(r) && reason.empty())
          reason = absl::StrCat("measured range [", r.lo, ", ", r.hi, "] exceeds float16");
      } else if (Exceeds(r) && reason.empty() && types_.ElemType(v) == onnx::TensorProto::FLOAT) {
        reason = absl::StrCat("its bound [", r.lo, ", ", r.hi, "] exceeds float16's 65504 (", n.op_type(), ")");
      }
      ranges_[v] = r;
    }
    if (reason.empty() && out.grown)
      reason = "continues a float32 region (" + n.op_type() + " of a value beyond float16)";
    if (reason.empty() && (input_grown || input_exceeds))
      reason = "reads a value beyond float16 (" + n.op_type() + " ends a float32 region)";
    if (!reason.empty()) reasons_[&n] = reason;
  }

  const TypeFacts& types_;
  const absl::flat_hash_map<std::string, Range>& measured_;
  bool clamp_;
  absl::flat_hash_map<const Value*, Range> ranges_;
  absl::flat_hash_map<const Node*, std::string> reasons_;
  absl::flat_hash_set<const Value*> beyond_;  // float values beyond float16 with no known bound
};

RangeAnalysis::RangeAnalysis(const Graph& main, const TypeFacts& types,
                             const absl::flat_hash_map<std::string, Range>& measured, bool clamp)
    : impl_(std::make_unique<Impl>(main, types, measured, clamp)) {}
RangeAnalysis::~RangeAnalysis() = default;
std::string RangeAnalysis::KeepReason(const Node& n) const { return impl_->KeepReason(n); }

// A ranges file (what onnxsurgeon.calibrate writes): one value per line, "MIN MAX NAME";
// '#' starts a comment line.
StatusOr<absl::flat_hash_map<std::string, Range>> ReadRanges(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("convert-float16: cannot read ranges file '", path, "'"));
  absl::flat_hash_map<std::string, Range> ranges;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Range r;
    std::string name;
    if (!(fields >> r.lo >> r.hi) || !std::getline(fields >> std::ws, name) || name.empty() || r.lo > r.hi) {
      return absl::InvalidArgumentError(
          absl::StrCat("convert-float16: ", path, ":", line_no, ": want 'MIN MAX NAME' with MIN <= MAX"));
    }
    // Headroom for inputs beyond the calibration set: the measured range, doubled.
    r.lo = std::min(r.lo * 2, r.lo);
    r.hi = std::max(r.hi * 2, r.hi);
    ranges[name] = r;
  }
  return ranges;
}

}  // namespace onnxsurgeon::passes::fp16

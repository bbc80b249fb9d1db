// convert-float16: runs the main graph in float16 where that is safe, as onnxconverter-
// common's convert_float_to_float16 does, without the failures its issues report.
//
// Each node of the model (If/Loop/Scan bodies included) either runs in float16
// ("converted") or keeps float32 ("blocked"). A node is blocked when its op is in `block`,
// its name in `block-nodes`, it has no onnx schema at the model's opset (custom ops, local
// functions), it is a Scatter that accumulates (reduction other than none), it holds
// If/Loop/Scan bodies (its boundary keeps float32; the bodies convert inside, their inputs
// and outputs keeping their types), the range analysis below finds that its values
// overflow float16 (a region: squares, exponentials, bounds past 65504), an input or output has an
// unknown element type, or a float output's type comes from an attribute (random ops,
// EyeLike, window ops; Cast, Constant and ConstantOfShape are converted by rewriting that
// attribute). In a converted node only the float operands whose schema allows float16
// change: Resize's scales, LayerNormalization's Mean/InvStdDev and the like stay float32.
//
// The model's own Casts between float16 and float32 that end up float16 -> float16 are
// removed. Casts are inserted only where a value crosses between the two precisions, once per value
// and direction, shared by every reader: two adjacent blocked ops exchange float32 with no
// Cast between them. Float32 weights read in float16 are converted in place (a float16
// copy when float32 readers remain); finite values beyond float16's range (|x| > 65504,
// e.g. -1e9 attention masks) are clamped to +-65504 and counted (overflow=clamp), or their
// readers are blocked so they compute in float32 (overflow=keep). With keep-io-types
// (default) graph inputs and outputs keep float32 and one Cast converts at each boundary;
// output names never change. value_info types follow the new element types.
//
// Options:
//   keep-io-types=true|false   float32 graph inputs/outputs (default true)
//   block=OP;OP                ops kept in float32 (default: Range;CumSum;TopK;
//                              NonMaxSuppression;RoiAlign: precision or index results)
//   block-nodes=NAME;NAME      nodes kept in float32
//   overflow=clamp|keep        constants beyond float16's range (default clamp)
//   range-analysis=true|false  keep float32 the regions whose range overflows (default true)
//   ranges=FILE                measured ranges, lines "MIN MAX NAME" (onnxsurgeon.calibrate)
//
// Before:  g (float[N,4] X) => (float[N,4] Y) { h = Mul(X, W)  Y = Softmax(h) }   block=Softmax
// After:   g (float[N,4] X) => (float[N,4] Y) {
//            X16 = Cast<to=10>(X)  h16 = Mul(X16, W16)  h = Cast<to=1>(h16)  Y = Softmax(h) }
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/ir/constant.h"
#include "core/rewrite/rewriter.h"
#include "onnx/defs/schema.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using T = onnx::TensorProto;
constexpr float kHalfMax = 65504.0f;

enum Precision : int32_t { kF32 = T::FLOAT, kF16 = T::FLOAT16 };

struct Options {
  bool keep_io_types = true;
  absl::flat_hash_set<std::string> block_ops;
  absl::flat_hash_set<std::string> block_nodes;
  bool clamp = true;
  bool range_analysis = true;
  std::string ranges_file;  // measured ranges: lines "MIN MAX NAME"
};

// Float32 elements -> float16 bits, clamping finite values beyond float16's range.
struct HalfData {
  std::string bytes;
  int64_t clamped = 0;
};

HalfData ToHalf(std::string_view raw) {
  HalfData out;
  size_t n = raw.size() / 4;
  out.bytes.resize(n * 2);
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, raw.data() + i * 4, 4);
    if (std::isfinite(f) && std::fabs(f) > kHalfMax) {
      f = std::copysign(kHalfMax, f);
      ++out.clamped;
    }
    uint16_t h = FloatToHalf(f);
    std::memcpy(out.bytes.data() + i * 2, &h, 2);
  }
  return out;
}

bool Overflows(const Value* v) {
  auto c = GetConstant(v);
  if (!c || c->data_type != T::FLOAT) return false;
  for (size_t i = 0; i + 4 <= c->raw.size(); i += 4) {
    float f;
    std::memcpy(&f, c->raw.data() + i, 4);
    if (std::isfinite(f) && std::fabs(f) > kHalfMax) return true;
  }
  return false;
}

// A float16 TensorProto with the dims of `source` (raw data inline).
onnx::TensorProto HalfTensor(const ConstantData& source, HalfData& half) {
  onnx::TensorProto t;
  t.set_data_type(T::FLOAT16);
  for (int64_t d : source.dims) t.add_dims(d);
  half = ToHalf(source.raw);
  t.set_raw_data(half.bytes);
  return t;
}

bool AllowsHalf(const onnx::OpSchema::FormalParameter& p) {
  for (const auto* t : p.GetTypes())
    if (*t == "tensor(float16)") return true;
  return false;
}

// The schema's formal parameter of operand i (the last one repeats when variadic).
const onnx::OpSchema::FormalParameter* Param(const std::vector<onnx::OpSchema::FormalParameter>& params, size_t i) {
  if (params.empty()) return nullptr;
  if (i < params.size()) return &params[i];
  const auto& last = params.back();
  return last.GetOption() == onnx::OpSchema::Variadic ? &last : nullptr;
}

// How a node runs: blocked, or converted with which operands in float16.
struct NodePlan {
  bool converted = false;
  std::vector<bool> input_half;   // per input slot: read in float16
  std::vector<bool> output_half;  // per output: produced in float16
};

// ---- range analysis ------------------------------------------------------------------
// Per float value an interval [lo, hi] that holds every element (infinite ends: unknown)
// and whether it "grew": made by squaring or exponentiating a value whose bound is not
// known (a decomposed norm's variance, a written-out Softmax's Exp), or computed from such
// a value by an op that keeps the growth (Add, ReduceMean, MatMul...). A grown value is
// assumed beyond float16; the ops that undo the growth (Sqrt, Log, Reciprocal, a Div by
// it, the bounded activations) end the region.
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrtHalfMax = 255.9375;  // the largest float16 whose square fits (255.9375^2 < 65504)

struct Range {
  double lo = -kInf, hi = kInf;
  bool grown = false;
  double Mag() const { return std::max(std::fabs(lo), std::fabs(hi)); }
  bool Known() const { return std::isfinite(lo) && std::isfinite(hi); }
  bool Fits() const { return Known() && Mag() <= kHalfMax; }
  // Bound known and beyond float16 (or a side known beyond it).
  bool Exceeds() const { return (Known() && Mag() > kHalfMax) || lo > kHalfMax || hi < -kHalfMax; }
};

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

class RangeAnalysis {
 public:
  RangeAnalysis(const Graph& main, const TypeFacts& types, const absl::flat_hash_map<std::string, Range>& measured,
                bool clamp)
      : types_(types), measured_(measured), clamp_(clamp) {
    for (Graph* g : main.SelfAndSubgraphs())
      for (Value* v : g->initializers()) Seed(v);
    for (Value* v : main.inputs()) Seed(v);
    for (Node* n : main.AllNodesRecursive()) Visit(*n);
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
    if (n.Is("MatMul")) {
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
    if (n.Is("Abs")) return {a.lo >= 0 ? a.lo : 0, a.Mag()};
    if (n.Is("Add")) return {a.lo + b.lo, a.hi + b.hi};
    if (n.Is("Sub")) {
      // x - ReduceMax(x): at most 0 (a written-out Softmax's shift).
      const Node* p = n.input(1) ? n.input(1)->producer() : nullptr;
      if (p && p->Is("ReduceMax") && p->input(0) == n.input(0)) return {a.lo - a.hi, 0};
      return {a.lo - b.hi, a.hi - b.lo};
    }
    if (n.Is("Mul")) {
      if (n.input(0) == n.input(1)) {
        Range r{a.lo <= 0 && a.hi >= 0 ? 0 : std::min(a.lo * a.lo, a.hi * a.hi), a.Mag() * a.Mag()};
        if (!r.Fits()) growth = "squares a value not bounded by 256 (Mul(x, x))";
        return r;
      }
      return MulRange(a, b);
    }
    if (n.Is("Div") || n.Is("Reciprocal")) {
      Range num = n.Is("Div") ? a : Range{1, 1}, den = n.Is("Div") ? b : a;
      // A grown value over a grown value (Exp over its ReduceSum) is a ratio; over a
      // bounded one (a variance's unbiasing) it keeps growing.
      contracts = !num.grown || den.grown;
      // A denominator that may come near 0 (an epsilon guard: sqrt(var + 1e-12)) says
      // nothing useful: the quotient's bound is unknown, as an activation's.
      if (den.lo >= 1e-3 || den.hi <= -1e-3) return MulRange(num, {1 / den.hi, 1 / den.lo});
      return {};
    }
    if (n.Is("Sqrt")) return contracts = true, Range{std::sqrt(std::max(0.0, a.lo)), std::sqrt(std::max(0.0, a.hi))};
    if (n.Is("Log")) return contracts = true, Range{a.lo > 0 ? std::log(a.lo) : -kInf, std::log(std::max(0.0, a.hi))};
    if (n.Is("Exp")) {
      Range r{std::exp(a.lo), std::exp(a.hi)};
      if (!r.Fits()) growth = "exponentiates a value not bounded by 11 (Exp)";
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
      double m = std::pow(a.Mag(), *e);
      bool even = std::floor(*e) == *e && std::fmod(*e, 2.0) == 0;
      Range r{even || a.lo >= 0 ? 0 : -m, m};
      if (!r.Fits())
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
      if (n.Is("ReduceL1")) return {0, SafeMul(c, a.Mag())};
      Range sq{0, SafeMul(c, a.Mag() * a.Mag())};
      if (n.Is("ReduceLogSumExp")) {
        if (!(std::exp(a.hi) * c <= kHalfMax))
          growth = "sums exponentials of a value not bounded by 11 (ReduceLogSumExp)";
        return {};
      }
      if (!sq.Fits()) growth = "sums squares of a value not known to be small (" + n.op_type() + ")";
      if (n.Is("ReduceL2")) return {0, std::sqrt(sq.hi)};
      return sq;
    }
    if (IsAny(n, {"MatMul", "Gemm", "Conv", "ConvTranspose"})) {
      int64_t k = InnerCount(n);
      double bound = SafeMul(k < 0 ? kInf : double(k), SafeMul(a.Mag(), b.Mag()));
      if (n.Is("Gemm")) bound = SafeMul(bound, std::fabs(n.GetFloat("alpha", 1.0f)));
      if (in.size() > 2 && n.input(2))
        bound += SafeMul(n.Is("Gemm") ? std::fabs(n.GetFloat("beta", 1.0f)) : 1.0, in[2].Mag());
      return {-bound, bound};
    }
    return {};
  }

  void Visit(const Node& n) {
    std::vector<Range> in;
    bool input_grown = false, input_exceeds = false;
    for (const Value* v : n.inputs()) {
      in.push_back(v ? Of(v) : Range{});
      if (v && types_.ElemType(v) == onnx::TensorProto::FLOAT) {
        input_grown |= Of(v).grown;
        input_exceeds |= Of(v).Exceeds();
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
    if (!growth.empty() && !out.Fits()) {
      out.grown = true;
      reason = growth;
    } else if (input_grown && !contracts && !out.Fits()) {
      out.grown = true;
    }
    // Norms whose kernels compute the variance in the input's type.
    if ((n.Is("InstanceNormalization") || (n.Is("GroupNormalization") && n.GetInt("stash_type", 0) != 1)) &&
        !(in[0].Known() && in[0].Mag() <= kSqrtHalfMax / 2)) {
      reason = "computes a variance (squares) of a value not bounded by 128 (" + n.op_type() + ")";
    }
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Value* v = n.output(i);
      if (!v) continue;
      Range r = out;
      if (auto it = measured_.find(v->name()); it != measured_.end()) {
        r = it->second;  // measured on real inputs: it overrides the static bound
        if (!r.Fits() && reason.empty())
          reason = absl::StrCat("measured range [", r.lo, ", ", r.hi, "] exceeds float16");
      } else if (r.Exceeds() && reason.empty() && types_.ElemType(v) == onnx::TensorProto::FLOAT) {
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
};

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

class ConvertFloat16Pass : public Pass {
 public:
  explicit ConvertFloat16Pass(Options options) : options_(std::move(options)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    Graph& g = model.graph();
    // Without an ai.onnx import there is no Cast to insert (ai.onnx.ml-only models).
    if (model.OpsetVersion("") < 0) return result;
    TypeFacts types(model);
    // Every graph: the main one and the If/Loop/Scan bodies (the nodes holding them keep
    // float32 at their boundary, their bodies convert inside, as keep-io-types does).
    const std::vector<Graph*> graphs = g.SelfAndSubgraphs();
    const std::vector<Node*> all_nodes = g.AllNodesRecursive();
    // Float values in graph order (inputs, weights, node outputs), decided before any
    // annotation changes; the order keeps the inserted Casts deterministic.
    std::vector<Value*> float_values;
    absl::flat_hash_set<const Value*> floats;
    auto note = [&](Value* v) {
      if (v && types.ElemType(v) == T::FLOAT && floats.insert(v).second) float_values.push_back(v);
    };
    for (Graph* sg : graphs) {
      for (Value* v : sg->inputs()) note(v);
      for (Value* v : sg->initializers()) note(v);
    }
    for (Node* n : all_nodes)
      for (Value* v : n->outputs()) note(v);
    auto is_float = [&](const Value* v) { return v && floats.contains(v); };
    // A graph output that keeps its type: the main graph's with keep-io-types, a body's always.
    auto keeps_type = [&](const Value* v) {
      return v->IsGraphOutput() && (options_.keep_io_types || v->graph() != &g);
    };
    std::optional<RangeAnalysis> ranges;
    if (options_.range_analysis) {
      absl::flat_hash_map<std::string, Range> measured;
      if (!options_.ranges_file.empty()) {
        OS_ASSIGN_OR_RETURN(measured, ReadRanges(options_.ranges_file));
        result.Count("ranges-measured", static_cast<int64_t>(measured.size()));
      }
      ranges.emplace(g, types, measured, options_.clamp);
    }

    // ---- plan: which nodes convert, which values end up float16 ------------------------
    absl::flat_hash_set<const Value*> overflowing;
    if (!options_.clamp) {
      for (Value* v : g.initializers())
        if (Overflows(v)) overflowing.insert(v);
      for (Node* n : g.nodes())
        if (n->Is("Constant") && Overflows(n->output(0))) overflowing.insert(n->output(0));
    }
    absl::flat_hash_map<const Node*, NodePlan> plans;
    for (Node* n : all_nodes) {
      NodePlan plan = PlanNode(*n, *n->graph(), types, overflowing);
      if (!plan.converted) continue;
      if (std::string why = ranges ? ranges->KeepReason(*n) : ""; !why.empty()) {
        result.Count("kept-fp32-range");
        result.Count("kept-fp32-range: " + why);
        continue;
      }
      plans[n] = std::move(plan);
    }
    // A Constant converts only when every reader reads it in float16 (else readers in
    // float32 would see rounded values): it is a weight like an initializer. So does a Cast
    // to float from another type (int64 -> float -> Range): made float16 it would round
    // every integer above 2048 for readers that stay float32, through one more Cast.
    for (Node* n : all_nodes) {
      if (!plans.contains(n)) continue;
      bool source = n->Is("Constant");
      if (n->Is("Cast")) {
        int32_t from = types.ElemType(n->input(0));
        source = from != T::FLOAT && from != T::FLOAT16;
      }
      if (!source) continue;
      if (!AllReadHalf(n->output(0), plans) || keeps_type(n->output(0))) plans.erase(n);
    }
    // Casts that become float16 -> float16 (the model's own Casts between float16 and
    // float32, both sides now float16) are dropped: no-ops that runtimes' fusions
    // misread (onnxruntime's LayerNormFusion fused across one with mixed types).
    std::vector<Node*> identity_casts;
    for (Node* n : all_nodes) {
      auto it = plans.find(n);
      if (!n->Is("Cast") || it == plans.end()) continue;
      int64_t to = n->GetInt("to", 0);
      int32_t from = types.ElemType(n->input(0));
      bool input_half = from == T::FLOAT16 || (from == T::FLOAT && it->second.input_half[0]);
      if ((to == T::FLOAT || to == T::FLOAT16) && input_half && !n->output(0)->IsGraphOutput())
        identity_casts.push_back(n);
    }
    auto reads_half = [&](const Use& u) {
      auto it = plans.find(u.node);
      return it != plans.end() && it->second.input_half[u.input_index];
    };
    // The precision each float value has after the conversion.
    absl::flat_hash_map<const Value*, Precision> have;
    for (Value* v : g.inputs())  // an overridable weight (ir_version < 4) stays float32
      if (is_float(v)) have[v] = options_.keep_io_types || v->IsInitializer() ? kF32 : kF16;
    for (Graph* sg : graphs)  // body inputs keep their types
      if (sg != &g)
        for (Value* v : sg->inputs())
          if (is_float(v)) have[v] = kF32;
    for (Node* n : all_nodes) {
      auto it = plans.find(n);
      for (size_t i = 0; i < n->num_outputs(); ++i) {
        Value* v = n->output(i);
        if (!is_float(v)) continue;
        have[v] = it != plans.end() && it->second.output_half[i] ? kF16 : kF32;
      }
    }

    // ---- apply -----------------------------------------------------------------------
    absl::flat_hash_map<const Graph*, Node*> graph_start;
    for (Graph* sg : graphs) graph_start[sg] = sg->first_node();
    // Every change goes through it; the Casts it inserts carry kProvenanceKey = convert-float16.
    Rewriter rw;
    rw.SetRule("convert-float16");
    // Float weights read in float16: converted in place, or a float16 copy beside them.
    absl::flat_hash_map<const Value*, Value*> half_copy;
    std::vector<Value*> initializers;
    for (Graph* sg : graphs)
      for (Value* v : sg->initializers()) initializers.push_back(v);
    for (Value* v : initializers) {
      if (v->IsGraphInput() || !is_float(v)) continue;
      bool any_half = false, any_full = v->IsGraphOutput();  // a weight that is an output stays
      for (const Use& u : v->uses()) (reads_half(u) ? any_half : any_full) = true;
      if (!any_half) {
        have[v] = kF32;
        continue;
      }
      auto data = GetConstant(v);
      if (!data) continue;  // not readable as raw floats: readers get a Cast
      HalfData half;
      onnx::TensorProto proto = HalfTensor(*data, half);
      CountClamped(half, result);
      Tensor tensor(v->initializer()->meta());
      tensor.mutable_meta().set_data_type(T::FLOAT16);
      tensor.SetRawBytes(std::move(half.bytes));
      if (!any_full) {
        *v->mutable_initializer() = std::move(tensor);
        have[v] = kF16;
        SetElemType(v, kF16);
      } else {
        tensor.mutable_meta().set_name("");
        OS_ASSIGN_OR_RETURN(Value * copy,
                            rw.AddInitializer(v->graph(), g.UniqueName(v->name() + "_fp16"), std::move(tensor)));
        half_copy[v] = copy;
        have[v] = kF32;
      }
      result.Count("initializers-fp16");
    }
    // Nodes: attributes that carry the output type, then float16 annotations.
    for (auto& [node_ptr, plan] : plans) {
      Node* n = const_cast<Node*>(node_ptr);
      OS_RETURN_IF_ERROR(RewriteTypeAttributes(*n, rw, result));
      for (size_t i = 0; i < n->num_outputs(); ++i)
        if (plan.output_half[i]) SetElemType(n->output(i), kF16);
      result.Count("nodes-fp16");
    }
    for (Node* n : all_nodes) {
      if (plans.contains(n)) continue;
      bool touches_float = false;
      for (Value* v : n->inputs()) touches_float |= is_float(v);
      for (Value* v : n->outputs()) touches_float |= is_float(v);
      if (touches_float) result.Count("nodes-kept-fp32");
    }
    for (auto& [v, p] : have)
      if (p == kF16 && v->IsGraphInput()) SetElemType(const_cast<Value*>(v), kF16);
    // Readers that need the other precision: one Cast per value and direction.
    absl::flat_hash_map<std::pair<const Value*, int32_t>, Value*> casts;
    std::function<Value*(Value*, Precision)> cast_of = [&](Value* v, Precision to) -> Value* {
      auto key = std::make_pair(static_cast<const Value*>(v), static_cast<int32_t>(to));
      if (auto it = casts.find(key); it != casts.end()) return it->second;
      // The output of a Cast that stays (int64 -> float read in float32 and float16): cast
      // its source instead, so that no Cast reads a Cast.
      if (Node* p = v->producer();
          p && p->Is("Cast") && !plans.contains(p) && p->input(0) && !p->input(0)->IsGraphInput() && !keeps_type(v)) {
        Value* src = p->input(0);
        int32_t from = types.ElemType(src);
        if (is_float(src)) return casts[key] = (have.contains(src) && have[src] == to) ? src : cast_of(src, to);
        if (from == T::FLOAT16 && to == kF16) return casts[key] = src;
      }
      Value* source = v;
      if (Node* p = v->producer(); p && p->Is("Cast") && !plans.contains(p) && p->input(0) &&
                                   types.ElemType(p->input(0)) != 0 && types.ElemType(p->input(0)) != T::FLOAT16)
        source = p->input(0);  // int64 -> float16 at once
      Node* after = source->producer();
      Node* before = after ? after->next() : graph_start[source->graph()];
      if (before) rw.SetInsertionPoint(before);
      else rw.SetInsertionPointAtEnd(source->graph());
      Node* cast = rw.Create("Cast", {source}, {Rewriter::AttrInt("to", to)}, 1, "", "Cast");
      Value* out = cast->output(0);
      (void)out->SetName(g.UniqueName(v->name() + (to == kF16 ? "_fp16" : "_fp32")));  // unique: cannot fail
      cast->set_name(out->name());
      if (v->type()) *out->mutable_info()->mutable_type() = *v->type();
      SetElemType(out, to, /*create=*/true);
      result.Count("casts");
      return casts[key] = out;
    };
    for (Value* v : float_values) {
      Precision h = have.contains(v) ? have[v] : kF32;
      std::vector<Use> uses = v->uses();
      for (const Use& u : uses) {
        Precision want = reads_half(u) ? kF16 : kF32;
        if (want == h) continue;
        Value* source = want == kF16 && half_copy.contains(v) ? half_copy[v] : cast_of(v, want);
        rw.SetInput(u.node, u.input_index, source);
      }
      // Graph outputs keep their float32 type (and name) with keep-io-types.
      if (h == kF16 && keeps_type(v)) {
        std::string name = v->name();
        std::vector<GraphOutputUse> slots = v->graph_outputs();
        Value* full = cast_of(v, kF32);
        for (const GraphOutputUse& slot : slots) rw.SetGraphOutput(slot.graph, slot.output_index, full);
        OS_RETURN_IF_ERROR(v->SetName(g.UniqueName(name + "_fp16")));
        OS_RETURN_IF_ERROR(full->SetName(name));
        full->producer()->set_name(name + "_cast");
      }
    }
    for (Node* n : identity_casts) {
      OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(n->output(0), n->input(0), GraphOutputs::kRefuse));
      OS_RETURN_IF_ERROR(rw.EraseNode(n));
      result.Count("identity-casts-removed");
    }
    return result;
  }

 private:
  // Given a main-graph node. Execute nothing. Result whether it runs in float16 and which
  // of its float operands change.
  NodePlan PlanNode(const Node& n, const Graph& g, const TypeFacts& types,
                    const absl::flat_hash_set<const Value*>& overflowing) const {
    NodePlan plan;
    if (options_.block_ops.contains(n.op_type()) || options_.block_nodes.contains(n.name())) return plan;
    if (!n.subgraphs().empty()) return plan;
    // Scatters that accumulate (reduction add/mul/min/max) sum in float16, and onnxruntime
    // has no float16 kernel for them.
    if ((n.Is("ScatterND") || n.Is("ScatterElements")) && n.FindAttribute("reduction") &&
        n.FindAttribute("reduction")->s() != "none") {
      return plan;
    }
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(g.OpsetVersion(n.domain())), n.domain());
    if (!schema) return plan;
    plan.input_half.assign(n.num_inputs(), false);
    plan.output_half.assign(n.num_outputs(), false);
    absl::flat_hash_set<std::string> input_type_strs;
    for (const auto& p : schema->inputs()) input_type_strs.insert(p.GetTypeStr());
    bool any = false;
    for (size_t i = 0; i < n.num_inputs(); ++i) {
      const Value* v = n.input(i);
      if (!v) continue;
      int32_t t = types.ElemType(v);
      if (t == 0) return {};  // unknown: cannot tell whether it is float
      if (overflowing.contains(v)) return {};
      const auto* p = Param(schema->inputs(), i);
      if (t == T::FLOAT && p && AllowsHalf(*p)) plan.input_half[i] = any = true;
    }
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Value* v = n.output(i);
      if (!v) continue;
      int32_t t = types.ElemType(v);
      if (t == 0) return {};
      const auto* p = Param(schema->outputs(), i);
      if (t != T::FLOAT || !p || !AllowsHalf(*p)) continue;
      // A float output whose type no input decides comes from an attribute.
      if (!input_type_strs.contains(p->GetTypeStr()) && !n.Is("Cast") && !n.Is("Constant") &&
          !n.Is("ConstantOfShape")) {
        return {};
      }
      if (n.Is("Cast") && n.GetInt("to", 0) != T::FLOAT) continue;
      plan.output_half[i] = any = true;
    }
    plan.converted = any;
    return plan;
  }

  static bool AllReadHalf(const Value* v, const absl::flat_hash_map<const Node*, NodePlan>& plans) {
    for (const Use& u : v->uses()) {
      auto it = plans.find(u.node);
      if (it == plans.end() || !it->second.input_half[u.input_index]) return false;
    }
    return true;
  }

  // Cast's `to`, Constant's and ConstantOfShape's `value` say float; make them float16.
  static Status RewriteTypeAttributes(Node& n, Rewriter& rw, PassResult& result) {
    if (n.Is("Cast")) {
      if (n.GetInt("to", 0) == T::FLOAT) {
        onnx::AttributeProto a = n.FindAttribute("to")->proto();
        a.set_i(T::FLOAT16);
        rw.SetAttribute(&n, std::move(a));
      }
      return absl::OkStatus();
    }
    if (!n.Is("Constant") && !n.Is("ConstantOfShape")) return absl::OkStatus();
    std::optional<ConstantData> data;
    if (n.Is("Constant")) {
      data = GetConstant(n.output(0));
    } else if (const Attribute* a = n.FindAttribute("value")) {
      data = GetConstant(a->proto().t());
    } else {
      ConstantData zero;  // ConstantOfShape's default: one float 0
      static const float kZero = 0.0f;
      zero.data_type = T::FLOAT;
      zero.dims = {1};
      zero.raw = std::string_view(reinterpret_cast<const char*>(&kZero), 4);
      data = zero;
    }
    if (!data || data->data_type != T::FLOAT) {
      return absl::InternalError(absl::StrCat("node '", n.name(), "': cannot read its float value"));
    }
    HalfData half;
    onnx::TensorProto t = HalfTensor(*data, half);
    CountClamped(half, result);
    if (n.Is("Constant")) {
      std::vector<std::string> names;
      for (const auto& a : n.attributes()) names.push_back(a.name());
      for (const auto& name : names) rw.RemoveAttribute(&n, name);
    }
    onnx::AttributeProto a;
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    *a.mutable_t() = std::move(t);
    rw.SetAttribute(&n, std::move(a));
    return absl::OkStatus();
  }

  static void CountClamped(const HalfData& half, PassResult& result) {
    if (half.clamped == 0) return;
    result.Count("overflow-clamped-constants");
    result.Count("overflow-clamped-elements", half.clamped);
  }

  static void SetElemType(Value* v, int32_t elem, bool create = false) {
    if (!v->has_type() && !create) return;
    v->mutable_info()->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }

  Options options_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateConvertFloat16Pass(const PassOptions& o) {
  Options options;
  options.keep_io_types = o.Bool("keep-io-types");
  for (const auto& op : o.List("block")) options.block_ops.insert(op);
  for (const auto& n : o.List("block-nodes")) options.block_nodes.insert(n);
  options.clamp = o.String("overflow") == "clamp";
  options.range_analysis = o.Bool("range-analysis");
  options.ranges_file = o.String("ranges");
  return std::make_unique<ConvertFloat16Pass>(std::move(options));
}

}  // namespace onnxsurgeon::passes

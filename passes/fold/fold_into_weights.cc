// fold-into-weights: folds constant affine ops that follow a linear layer into the layer's
// weights, as onnx-simplifier and onnxslim do. Two rules:
//
// conv-add-bias: Add(Conv(x, W, B), c) -> Conv(x, W, B + c) (ConvTranspose alike: paddle2onnx
// writes its bias as an Add), when c is a constant that adds
// the same number to every element of an output channel: a scalar, or [M,1,..,1] aligned
// with the channel axis (rank r-1 or r with a leading 1, r the Conv output's rank). A c
// that varies over the batch or spatial axes (e.g. [M,H,W]), or that would raise the
// output's rank, is refused: the bias would change what the Add broadcasts.
//   Before:  c = Conv(x, W)            y = Add(c, k[2,1,1])
//   After:   y = Conv(x, W, k')        (k' = k flattened to [2])
//
// scale-into-weights: Mul(y, s) or Div(y, s), s a constant, y computed linearly from one
// weight site, becomes y with the site's weights (and bias) scaled by s (1/s for Div):
//   - the site is MatMul(x, W) with W a rank-2 constant (W' = W * s), Add(MatMul(x, W), b)
//     with b constant (b' = b * s too), Gemm(A, B, C) (alpha and beta times s), or
//     Conv(x, W, B) (W' and B' times s);
//   - s is a true scalar (one element, rank not above y's), or, directly on the site,
//     one value per output channel (MatMul/Add: [N] on the last axis; Conv: [M,1,..,1]);
//   - a scalar also passes through ops that commute with it, each read only on the path:
//     Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Identity, and MatMul of two computed
//     operands (Div(MatMul(a, b), s) goes into a's projection), except where the scaled
//     product reaches a Softmax (through an Add, Sub, Where or Cast of a mask): that is an
//     attention's score scale, Softmax(MatMul(q, k^T) / sqrt(d) + mask), and every fused
//     attention onnxruntime's optimizers match reads the Div (or Mul) there.
//   Nor is a scale folded when it is one of an attention score's two split scales:
//   MatMul(Mul(q, s1), Mul(kT, s2)) reaching a Softmax (torch's scaled_dot_product_attention
//   export scales q and k by sqrt(1/sqrt(d)) each). Folded into both projections, the score
//   is left with no scale at all, a form no onnxruntime attention fusion matches (a dev
//   BERT with SDPA attention: 2 Attention and 1 EmbedLayerNormalization from the raw export,
//   0 and 0 after simplify). The third rule joins them instead.
// Refused when a weight is shared with another node (the other reader would change), a
// value on the path has another reader or is a graph output, s is not constant, the
// types are not float, double, float16 or bfloat16 (integer division does not distribute),
// or a float16 weight or bias would pass 65504 (inf) once scaled or summed.
// The new weights are computed in double and rounded once; the folded result differs from
// the original by float rounding only: per output element at most about (K+2) ulp of
// sum_k |x_k w_k s| (K the reduction length), the same order as reordering the layer's
// accumulation, which onnxruntime's own kernels already do between CPUs.
//   Before:  q = Add(MatMul(x, Wq), bq)   t = Transpose(Reshape(q, ...))  p = MatMul(t, kT)
//            y = Div(p, 8)
//   After:   q = Add(MatMul(x, Wq'), bq')  t = Transpose(Reshape(q, ...))  y = MatMul(t, kT)
//
// scores-scale: the split scales of an attention score joined after its MatMul, the form
// eager attention exports and onnxruntime's BERT attention fusion matches
// (Softmax <- Add(mask) <- Mul <- MatMul):
//   Before:  qs = Mul(q, s1)   ks = Mul(kT, s2)   p = MatMul(qs, ks)   ... Softmax(Add(p, m))
//   After:   r = MatMul(q, kT)   p = Mul(r, s1*s2)                    ... Softmax(Add(p, m))
// s1 and s2 scalar float constants (one element, rank 0 or 1; Div by a constant counts as
// Mul by its reciprocal), each Mul read only by the MatMul. Two Muls become one. s1*s2 is
// computed in double and rounded once; (q s1)(kT s2) and (q kT)(s1 s2) differ by float
// rounding only (exactly equal when s1 and s2 are powers of two, as sqrt(1/sqrt(d)) is for
// d = 16, 256, ...).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using Types = onnx::TensorProto;

// True when `v` is read exactly once, by a node (not a graph output).
bool SingleReader(const Value* v) { return v && v->uses().size() == 1 && !v->IsGraphOutput(); }

// The float types whose weights are recomputed in double and rounded back: float, double,
// and float16/bfloat16 (as onnxconverter-common and onnxruntime's float16 conversion leave
// exports).
bool Refoldable(int32_t type) { return IsFloatOrDouble(type) || type == Types::FLOAT16 || type == Types::BFLOAT16; }

// float16's largest finite value: weights scaled past it would become inf.
constexpr double kHalfMax = 65504.0;

// The largest |element| of a constant (0 when it has none or is not numeric).
double MaxAbs(const ConstantData& c) {
  double m = 0;
  if (auto v = c.AsDoubles())
    for (double x : *v) m = std::max(m, std::fabs(x));
  return m;
}

Tensor MakeTensor(const std::vector<double>& values, const std::vector<int64_t>& dims, int32_t type) {
  StatusOr<Tensor> t = Tensor::FromDoubles(type, dims, values);  // cannot fail: a float type, matching count
  return t.ok() ? *std::move(t) : Tensor();
}

// The non-constant operand of a binary node whose other operand is a constant (for Div
// and Sub only the second), with the constant; nullopt otherwise.
struct Split {
  Value* data = nullptr;
  Value* constant = nullptr;
  ConstantData c;
};
std::optional<Split> SplitConstant(Node* n, bool commutative) {
  if (n->num_inputs() != 2 || !n->input(0) || !n->input(1)) return std::nullopt;
  for (int k : {1, 0}) {
    if (k == 0 && !commutative) break;
    if (auto c = GetConstant(n->input(k)); c && !GetConstant(n->input(1 - k)))
      return Split{n->input(1 - k), n->input(k), *std::move(c)};
  }
  return std::nullopt;
}

// Copies `from`'s type onto `to` when `to` has none (a replacement keeps what was known).
void CarryType(const Value* from, Value* to) {
  if (from->has_type() && !to->has_type()) *to->mutable_info()->mutable_type() = *from->type();
}

// Per-channel factors of a constant `c` broadcast against a rank-`rank` output whose
// channel axis is `axis` with `channels` channels: one value, or one per channel.
// Nullopt when c varies along another axis or would raise the rank.
std::optional<std::vector<double>> ChannelValues(const ConstantData& c, size_t rank, size_t axis, int64_t channels,
                                                 std::string* why) {
  auto values = c.AsDoubles();
  if (!values) return Refuse(why, "the constant is not numeric"), std::nullopt;
  if (c.dims.size() > rank) return Refuse(why, "the constant would raise the output's rank"), std::nullopt;
  if (values->size() == 1) return std::vector<double>(static_cast<size_t>(channels), (*values)[0]);
  size_t off = rank - c.dims.size();
  for (size_t i = 0; i < c.dims.size(); ++i) {
    size_t out_axis = off + i;
    if (out_axis == axis ? c.dims[i] != channels && c.dims[i] != 1 : c.dims[i] != 1)
      return Refuse(why, absl::StrCat("the constant's dim ", i, " (", c.dims[i],
                                      ") broadcasts along an axis other than the output channels")),
             std::nullopt;
  }
  if (off > axis) return Refuse(why, "the constant does not reach the channel axis"), std::nullopt;
  return values;
}

// ---- conv-add-bias ---------------------------------------------------------------------
// The Conv to give the Add's constant as its bias, and that bias.
struct ConvBias {
  Node* conv;
  std::vector<double> bias;
  int32_t data_type;
};

class ConvAddBias : public NodeRule<ConvBias> {
 public:
  ConvAddBias() : NodeRule("fold-into-weights/conv-add-bias", "Add") {}

 protected:
  Verdict<ConvBias> Check(Node* add, RewriteFacts&) const override {
    auto split = SplitConstant(add, /*commutative=*/true);
    if (!split) return Refuse("neither operand is a constant beside a computed one");
    Node* conv = split->data->producer();
    if (!conv || !(conv->Is("Conv") || conv->Is("ConvTranspose")) || !CanonicalDomain(conv->domain()).empty() ||
        conv->graph() != add->graph())
      return Refuse("the computed operand is not a Conv or ConvTranspose");
    if (!SingleReader(split->data)) return Refuse("the Conv output has another reader");
    auto w = conv->num_inputs() >= 2 ? GetConstant(conv->input(1)) : std::nullopt;
    if (!w || !Refoldable(w->data_type) || w->dims.size() < 3) return Refuse("the Conv weight is not a float constant");
    if (split->c.data_type != w->data_type) return Refuse("the constant's type differs from the weight's");
    // Output channels: W is [M, C/group, k...] for Conv, [C, M/group, k...] for ConvTranspose.
    const int64_t m = conv->Is("ConvTranspose") ? w->dims[1] * conv->GetInt("group", 1) : w->dims[0];
    std::string why;
    auto add_values = ChannelValues(split->c, w->dims.size(), 1, m, &why);
    if (!add_values) return Refuse(std::move(why));
    std::vector<double> bias(static_cast<size_t>(m), 0.0);
    if (conv->num_inputs() > 2 && conv->input(2)) {
      auto b = GetConstant(conv->input(2));
      auto bv = b ? b->AsDoubles() : std::nullopt;
      if (!bv || b->data_type != w->data_type || static_cast<int64_t>(bv->size()) != m)
        return Refuse("the Conv bias is not a constant of the weight's type");
      bias = *bv;
    }
    for (size_t i = 0; i < bias.size(); ++i) {
      bias[i] += (*add_values)[i];
      if (w->data_type == Types::FLOAT16 && std::fabs(bias[i]) > kHalfMax)
        return Refuse("the summed float16 bias would pass 65504");
    }
    return ConvBias{conv, std::move(bias), w->data_type};
  }

  Status Replace(Node* add, ConvBias plan, Rewriter& rw) const override {
    Node* conv = plan.conv;
    std::vector<onnx::AttributeProto> attributes;
    for (const Attribute& a : conv->attributes()) attributes.push_back(a.proto());
    const int64_t m = static_cast<int64_t>(plan.bias.size());
    OS_ASSIGN_OR_RETURN(Value * b, rw.Constant(MakeTensor(plan.bias, {m}, plan.data_type), "bias"));
    Value* y = rw.Op(conv->op_type(), {conv->input(0), conv->input(1), b}, std::move(attributes));
    CarryType(add->output(0), y);
    OS_RETURN_IF_ERROR(rw.ReplaceNode(add, {y}));
    return rw.EraseNode(conv);
  }
};

// ---- scale-into-weights ----------------------------------------------------------------
// What to scale, found by walking up from the Mul/Div's data operand.
struct Site {
  Node* node = nullptr;     // MatMul, Gemm or Conv holding the weight
  Node* add = nullptr;      // Add(MatMul, b) over it, if any
  std::vector<Node*> path;  // nodes between the site and the Mul (all single-reader)
};

// True when `v` flows into a Softmax, directly or through the ops that apply an attention
// mask to the scores (Add, Sub, Where, Cast), each read once.
bool ReachesSoftmax(const Value* v) {
  for (int depth = 0; depth < 4 && v && v->uses().size() == 1 && !v->IsGraphOutput(); ++depth) {
    const Node* user = v->uses()[0].node;
    if (user->Is("Softmax")) return true;
    if (!(user->Is("Add") || user->Is("Sub") || user->Is("Where") || user->Is("Cast")) || user->num_outputs() != 1)
      return false;
    v = user->output(0);
  }
  return false;
}

// A scalar scale of a computed value: `v` = Mul(x, s) or Div(x, s), s a one-element float
// constant of rank <= 1, read only once.
struct ScalarScale {
  Node* node = nullptr;
  Value* data = nullptr;
  double factor = 1;
  int32_t data_type = 0;
};
std::optional<ScalarScale> ScalarScaleOf(Value* v, const Graph* graph) {
  Node* n = v ? v->producer() : nullptr;
  if (!n || !(n->Is("Mul") || n->Is("Div")) || !CanonicalDomain(n->domain()).empty() || n->graph() != graph ||
      !SingleReader(v))
    return std::nullopt;
  const bool div = n->Is("Div");
  auto split = SplitConstant(n, /*commutative=*/!div);
  if (!split || !Refoldable(split->c.data_type) || split->c.dims.size() > 1) return std::nullopt;
  auto s = split->c.AsDoubles();
  if (!s || s->size() != 1 || !std::isfinite((*s)[0]) || (div && (*s)[0] == 0)) return std::nullopt;
  return ScalarScale{n, split->data, div ? 1.0 / (*s)[0] : (*s)[0], split->c.data_type};
}

// The attention score MatMul(Mul(q, s1), Mul(kT, s2)) that reads `v` (one of the two scaled
// operands), when it reaches a Softmax; nullptr otherwise.
Node* SplitScaledScore(Value* v) {
  if (!SingleReader(v)) return nullptr;
  Node* mm = v->uses()[0].node;
  if (!mm->Is("MatMul") || !CanonicalDomain(mm->domain()).empty() || mm->num_inputs() != 2 || !mm->input(0) ||
      !mm->input(1) || mm->input(0) == mm->input(1))
    return nullptr;
  for (int k : {0, 1})
    if (GetConstant(mm->input(k)) || !ScalarScaleOf(mm->input(k), mm->graph())) return nullptr;
  return ReachesSoftmax(mm->output(0)) ? mm : nullptr;
}

bool PassesScalar(const Node* n) {
  static const char* kOps[] = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
  for (const char* op : kOps)
    if (n->Is(op)) return true;
  return false;
}

// The weight site to scale, by one factor per output channel.
struct Scaling {
  Site site;
  std::vector<double> factors;
  int32_t data_type;
  Value* data;  // the scaled value: what the root's output becomes
};

class ScaleIntoWeights : public NodeRule<Scaling> {
 public:
  explicit ScaleIntoWeights(std::string root) : NodeRule("fold-into-weights/scale-into-weights", std::move(root)) {}

 protected:
  Verdict<Scaling> Check(Node* root, RewriteFacts&) const override {
    const bool div = root->Is("Div");
    auto split = SplitConstant(root, /*commutative=*/!div);
    if (!split)
      return Refuse(div ? "the divisor is not a constant beside a computed dividend"
                        : "neither operand is a constant beside a computed one");
    if (!Refoldable(split->c.data_type)) return Refuse("the scale is not of a float type");
    auto s = split->c.AsDoubles();
    if (!s || s->empty()) return Refuse("the scale is empty");
    for (double& v : *s) {
      if (div) {
        if (v == 0 || !std::isfinite(v)) return Refuse("division by zero or a non-finite divisor");
        v = 1.0 / v;
      } else if (!std::isfinite(v)) {
        return Refuse("the scale is not finite");
      }
    }
    const bool scalar = s->size() == 1;
    if (!SingleReader(split->data)) return Refuse("the scaled value has another reader");
    if (SplitScaledScore(root->output(0)))
      return Refuse("one of an attention score's two split scales (scores-scale joins them after the MatMul)");
    std::string why;
    auto site = FindSite(split->data, root->graph(), scalar, 0, &why);
    if (!site) return Refuse(std::move(why));
    for (const Node* p : site->path)
      if (p->Is("MatMul") && ReachesSoftmax(root->output(0)))
        return Refuse("an attention score scale (the scaled MatMul of two computed values reaches a Softmax)");
    // Mul/Div broadcast the result to the constant's rank: dropping them must not lower
    // it. A site's own output has rank >= 1; a path (Squeeze, Reshape) may end anywhere.
    auto y_shape = ShapeOf(split->data);
    size_t known_rank = y_shape ? y_shape->size() : (site->path.empty() ? 1 : 0);
    if (!split->c.dims.empty() && split->c.dims.size() > known_rank)
      return Refuse("the scale may raise the result's rank");
    // Per-channel factors on the site's channel axis (checked against the weight).
    std::vector<double> factors;
    StatusOr<bool> ok = Factors(*site, split->c, *s, y_shape, factors, &why);
    if (!ok.ok()) return ok.status();
    if (!*ok) return Refuse(std::move(why));
    if (split->c.data_type == Types::FLOAT16 && site->node->num_inputs() > 1) {
      // float16 holds nothing above 65504: the scaled weights (and bias) must stay finite.
      double f = 0;
      for (double x : factors) f = std::max(f, std::fabs(x));
      double w = 0;
      if (auto c = GetConstant(site->node->input(1))) w = MaxAbs(*c);
      if (site->node->num_inputs() > 2 && site->node->input(2))
        if (auto c = GetConstant(site->node->input(2))) w = std::max(w, MaxAbs(*c));
      if (site->add)
        for (size_t i = 0; i < 2; ++i)
          if (auto c = GetConstant(site->add->input(i))) w = std::max(w, MaxAbs(*c));
      if (w * f > kHalfMax) return Refuse("the scaled float16 weights would pass 65504");
    }
    return Scaling{*std::move(site), std::move(factors), split->c.data_type, split->data};
  }

  Status Replace(Node* root, Scaling plan, Rewriter& rw) const override {
    Value* data = plan.data;
    OS_ASSIGN_OR_RETURN(Value * renewed, Apply(plan.site, plan.factors, plan.data_type, rw));
    if (renewed) data = renewed;  // the site node itself was replaced (Gemm): its new output
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(root->output(0), data, GraphOutputs::kKeepNames));
    return rw.EraseNode(root);
  }

 private:
  // The weight site that `v` is computed from, through scalar-commuting ops when
  // `scalar`. Every value on the way must be read once.
  std::optional<Site> FindSite(Value* v, const Graph* graph, bool scalar, int depth, std::string* why) const {
    Node* n = v->producer();
    if (!n || !CanonicalDomain(n->domain()).empty() || n->graph() != graph || depth > 16)
      return Refuse(why, "no weight site above in this graph"), std::nullopt;
    if (n->Is("Gemm")) {
      if (!scalar) return Refuse(why, "a per-channel scale on a Gemm"), std::nullopt;
      return Site{n, nullptr, {}};
    }
    if (n->Is("Conv")) return Site{n, nullptr, {}};
    if (n->Is("MatMul") && n->num_inputs() == 2 && n->input(0) && n->input(1)) {
      if (GetConstant(n->input(1))) return Site{n, nullptr, {}};
      if (!scalar) return Refuse(why, "a per-channel scale on a MatMul of two computed values"), std::nullopt;
      // s (a b) = (s a) b = a (s b): try either operand.
      for (int k : {0, 1}) {
        Value* in = n->input(k);
        if (!SingleReader(in) || GetConstant(in)) continue;
        if (auto site = FindSite(in, graph, scalar, depth + 1, why)) {
          site->path.push_back(n);
          return site;
        }
      }
      return std::nullopt;
    }
    if (n->Is("Add")) {
      auto split = SplitConstant(n, true);
      Node* mm = split ? split->data->producer() : nullptr;
      if (!mm || !mm->Is("MatMul") || !SingleReader(split->data) || mm->num_inputs() != 2 || !GetConstant(mm->input(1)))
        return Refuse(why, "an Add that is not MatMul + constant bias"), std::nullopt;
      return Site{mm, n, {}};
    }
    if (scalar && PassesScalar(n) && n->num_inputs() >= 1 && n->input(0) && SingleReader(n->input(0))) {
      auto site = FindSite(n->input(0), graph, scalar, depth + 1, why);
      if (site) site->path.push_back(n);
      return site;
    }
    return Refuse(why, absl::StrCat(
                           "reached ", n->op_type(), " '", n->name(),
                           "', which is neither a weight site nor commutes with the scale (or has another reader)")),
           std::nullopt;
  }

  // Fills `factors` with one factor per output channel of the site (one for Gemm).
  StatusOr<bool> Factors(const Site& site, const ConstantData& c, const std::vector<double>& s,
                         const std::optional<Shape>& y_shape, std::vector<double>& factors, std::string* why) const {
    const Node& n = *site.node;
    if (n.Is("Gemm")) {
      factors = {s[0]};
      return true;
    }
    auto w = GetConstant(n.input(1));
    if (!w || !Refoldable(w->data_type) || w->data_type != c.data_type)
      return Refuse(why, "the weight is not a constant of the scale's float type");
    if (!SingleReader(n.input(1)) || n.input(1)->IsGraphInput())
      return Refuse(why, "the weight is shared with another node");
    if (n.Is("Conv")) {
      if (w->dims.size() < 3) return Refuse(why, "the Conv weight's rank is below 3");
      if (s.size() == 1) {
        factors.assign(static_cast<size_t>(w->dims[0]), s[0]);
        return true;
      }
      auto v = ChannelValues(c, w->dims.size(), 1, w->dims[0], why);
      if (!v) return false;
      factors = *v;
      return true;
    }
    // MatMul: W [K, N]; a per-channel scale is [N] (or [1,..,N]) on the last axis.
    if (w->dims.size() != 2) return Refuse(why, "the MatMul weight is not rank 2");
    const int64_t cols = w->dims[1];
    if (s.size() == 1) {
      factors.assign(static_cast<size_t>(cols), s[0]);
      return true;
    }
    size_t rank = y_shape ? y_shape->size() : std::max<size_t>(c.dims.size(), 1);
    auto v = ChannelValues(c, rank, rank - 1, cols, why);
    if (!v) return false;
    if (site.add) {
      auto b = GetConstant(site.add->input(GetConstant(site.add->input(1)) ? 1 : 0));
      if (!b || (b->num_elements() != 1 && b->num_elements() != cols))
        return Refuse(why, "the bias varies along more than the output channels");
    }
    factors = *v;
    return true;
  }

  // Result the new node's output when the site node was replaced (Gemm), else null.
  static StatusOr<Value*> Apply(const Site& site, const std::vector<double>& f, int32_t type, Rewriter& rw) {
    Node* n = site.node;
    if (n->Is("Gemm")) {
      std::vector<onnx::AttributeProto> attributes;
      for (const Attribute& a : n->attributes())
        if (a.name() != "alpha" && a.name() != "beta") attributes.push_back(a.proto());
      attributes.push_back(Rewriter::AttrFloat("alpha", static_cast<float>(n->GetFloat("alpha", 1.0f) * f[0])));
      attributes.push_back(Rewriter::AttrFloat("beta", static_cast<float>(n->GetFloat("beta", 1.0f) * f[0])));
      rw.SetInsertionPoint(n);
      Value* y = rw.Op("Gemm", n->inputs(), std::move(attributes));
      CarryType(n->output(0), y);
      OS_RETURN_IF_ERROR(rw.ReplaceNode(n, {y}));
      return y;
    }
    auto w = GetConstant(n->input(1));
    auto wv = w->AsDoubles();
    const size_t channels = f.size();
    if (n->Is("Conv")) {
      const size_t per = wv->size() / channels;
      for (size_t m = 0; m < channels; ++m)
        for (size_t k = 0; k < per; ++k) (*wv)[m * per + k] *= f[m];
    } else {
      for (size_t i = 0; i < wv->size(); ++i) (*wv)[i] *= f[i % channels];
    }
    rw.SetInsertionPoint(n);
    OS_ASSIGN_OR_RETURN(Value * weight, rw.Constant(MakeTensor(*wv, w->dims, type), "weight"));
    rw.SetInput(n, 1, weight);
    // The bias: the Conv's third input, or the Add's constant.
    Node* holder = n->Is("Conv") ? n : site.add;
    if (!holder) return nullptr;
    int k = -1;
    if (n->Is("Conv")) {
      if (n->num_inputs() > 2 && n->input(2)) k = 2;
    } else {
      k = GetConstant(holder->input(1)) ? 1 : 0;
    }
    if (k < 0) return nullptr;
    auto b = GetConstant(holder->input(k));
    auto bv = b ? b->AsDoubles() : std::nullopt;
    if (!bv) return absl::InternalError("fold-into-weights: the bias stopped being a constant");
    std::vector<int64_t> dims = b->dims;
    const bool uniform = std::all_of(f.begin(), f.end(), [&](double x) { return x == f[0]; });
    if (uniform) {
      for (double& x : *bv) x *= f[0];
    } else if (bv->size() == channels) {
      for (size_t i = 0; i < bv->size(); ++i) (*bv)[i] *= f[i];
    } else {
      // One bias for every channel (checked in Factors): one value per channel now, on
      // the same (last) axis, so the Add broadcasts to the same shape.
      double b0 = (*bv)[0];
      bv->assign(channels, b0);
      for (size_t i = 0; i < channels; ++i) (*bv)[i] *= f[i];
      if (dims.empty()) dims = {1};
      dims.back() = static_cast<int64_t>(channels);
    }
    OS_ASSIGN_OR_RETURN(Value * bias, rw.Constant(MakeTensor(*bv, dims, type), "bias"));
    rw.SetInput(holder, static_cast<size_t>(k), bias);
    return nullptr;
  }
};

// ---- scores-scale -----------------------------------------------------------------------
struct ScoreScale {
  Node* scales[2];
  Value* operands[2];
  double factor;
  int32_t data_type;
};

class ScoresScale : public NodeRule<ScoreScale> {
 public:
  ScoresScale() : NodeRule("fold-into-weights/scores-scale", "MatMul") {}

 protected:
  Verdict<ScoreScale> Check(Node* mm, RewriteFacts&) const override {
    if (mm->num_inputs() != 2 || !mm->input(0) || !mm->input(1)) return Refuse("not a MatMul of two operands");
    if (mm->input(0) == mm->input(1)) return Refuse("both operands are one value");
    std::optional<ScalarScale> sc[2];
    for (int k : {0, 1}) {
      if (GetConstant(mm->input(k))) return Refuse("an operand is a constant (a weight, not a score)");
      sc[k] = ScalarScaleOf(mm->input(k), mm->graph());
      if (!sc[k]) return Refuse("an operand is not a computed value scaled by a scalar constant, read once");
    }
    if (sc[0]->data_type != sc[1]->data_type) return Refuse("the two scales' types differ");
    if (!ReachesSoftmax(mm->output(0))) return Refuse("the product does not reach a Softmax (not an attention score)");
    const double f = sc[0]->factor * sc[1]->factor;
    if (!std::isfinite(f)) return Refuse("the joined scale is not finite");
    if (sc[0]->data_type == Types::FLOAT16 && std::fabs(f) > kHalfMax)
      return Refuse("the joined float16 scale would pass 65504");
    return ScoreScale{{sc[0]->node, sc[1]->node}, {sc[0]->data, sc[1]->data}, f, sc[0]->data_type};
  }

  Status Replace(Node* mm, ScoreScale plan, Rewriter& rw) const override {
    Value* r = rw.Op("MatMul", {plan.operands[0], plan.operands[1]});
    OS_ASSIGN_OR_RETURN(Value * s, rw.Constant(MakeTensor({plan.factor}, {}, plan.data_type), "scale"));
    Value* y = rw.Op("Mul", {r, s});
    CarryType(mm->output(0), y);
    OS_RETURN_IF_ERROR(rw.ReplaceNode(mm, {y}));
    for (Node* n : plan.scales)
      if (n->output(0)->uses().empty() && !n->output(0)->IsGraphOutput()) OS_RETURN_IF_ERROR(rw.EraseNode(n));
    return absl::OkStatus();
  }
};

class FoldIntoWeightsPass : public PatternPass {
 public:
  FoldIntoWeightsPass() {
    AddRule(std::make_unique<ScoresScale>());
    AddRule(std::make_unique<ConvAddBias>());
    AddRule(std::make_unique<ScaleIntoWeights>("Mul"));
    AddRule(std::make_unique<ScaleIntoWeights>("Div"));
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFoldIntoWeightsPass(const PassOptions&) {
  return std::make_unique<FoldIntoWeightsPass>();
}

}  // namespace onnxsurgeon::passes

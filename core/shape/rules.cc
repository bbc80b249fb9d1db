#include "core/shape/rules.h"

#include <algorithm>
#include <numeric>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/shape/rules_internal.h"
#include "core/shape/slicing.h"

namespace onnxsurgeon::shape_rules {
namespace {

using onnx::TensorProto;

constexpr std::string_view kUnary[] = {"Abs",        "Acos",        "Acosh",     "Asin",
                                       "Asinh",      "Atan",        "Atanh",     "Ceil",
                                       "Celu",       "Clip",        "Cos",       "Cosh",
                                       "Elu",        "Erf",         "Exp",       "Floor",
                                       "Gelu",       "HardSigmoid", "HardSwish", "Hardmax",
                                       "Identity",   "LeakyRelu",   "Log",       "LogSoftmax",
                                       "Mish",       "Neg",         "Not",       "PRelu",
                                       "Reciprocal", "Relu",        "Round",     "Selu",
                                       "Shrink",     "Sigmoid",     "Sign",      "Sin",
                                       "Sinh",       "Softmax",     "Softplus",  "Softsign",
                                       "Sqrt",       "Tan",         "Tanh",      "ThresholdedRelu"};
constexpr std::string_view kBroadcast[] = {"Add",      "Sub", "Mul", "Div", "Pow", "Mod",
                                           "BitShift", "Max", "Min", "Sum", "Mean"};
constexpr std::string_view kCompare[] = {"Equal",          "Less", "Greater", "LessOrEqual",
                                         "GreaterOrEqual", "And",  "Or",      "Xor"};
constexpr std::string_view kReduce[] = {"ReduceMean",      "ReduceSum",      "ReduceMax", "ReduceMin",
                                        "ReduceProd",      "ReduceL1",       "ReduceL2",  "ReduceLogSum",
                                        "ReduceLogSumExp", "ReduceSumSquare"};

template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view op) {
  return std::find(std::begin(list), std::end(list), op) != std::end(list);
}

Out One(const Node& n, std::optional<TensorType> t) {
  Out out(n.num_outputs());
  if (t && t->elem == 0) t.reset();  // e.g. a Cast without `to`
  if (!out.empty()) out[0] = std::move(t);
  return out;
}

// An axis in [-rank, rank) made non-negative; nullopt when out of range.
std::optional<int64_t> NormAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

// Axes from attribute `name` (opset below `input_since`) or from constant input 1.
// nullopt when they cannot be read; an empty list when absent.
std::optional<std::vector<int64_t>> Axes(const Node& n, int64_t input_since) {
  if (n.graph()->OpsetVersion("") < input_since) {
    const Attribute* a = n.FindAttribute("axes");
    if (!a) return std::vector<int64_t>{};
    if (a->is_ref()) return std::nullopt;
    return a->ints();
  }
  if (!n.input(1)) return std::vector<int64_t>{};
  return ConstantInt64s(n.input(1));
}

std::optional<Shape> MatMulShape(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  Shape l = a.size() == 1 ? Shape{Dim::Static(1), a[0]} : a;
  Shape r = b.size() == 1 ? Shape{b[0], Dim::Static(1)} : b;
  const Dim& k1 = l.back();
  const Dim& k2 = r[r.size() - 2];
  if (k1.is_static() && k2.is_static() && k1.value != k2.value) return std::nullopt;
  Shape pl(l.begin(), l.end() - 2), pr(r.begin(), r.end() - 2);
  auto out = Broadcast({&pl, &pr});
  if (!out) return std::nullopt;
  if (a.size() != 1) out->push_back(l[l.size() - 2]);
  if (b.size() != 1) out->push_back(r.back());
  return out;
}

// onnx's product of dims (Flatten): static product; a lone symbol times 1s stays itself.
Dim Product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  std::vector<const Dim*> other;
  for (size_t i = from; i < to; ++i) {
    if (s[i].is_static()) p *= s[i].value;
    else other.push_back(&s[i]);
  }
  if (other.empty()) return Dim::Static(p);
  if (other.size() == 1 && p == 1) return *other[0];
  return Dim{};
}

std::optional<Shape> ReduceShape(const Node& n, const Shape& in) {
  const int64_t since = n.op_type() == "ReduceSum" ? 13 : 18;
  auto axes = Axes(n, since);
  if (!axes) return std::nullopt;
  const bool keepdims = n.GetInt("keepdims", 1) != 0;
  const int64_t rank = static_cast<int64_t>(in.size());
  if (axes->empty() && n.GetInt("noop_with_empty_axes", 0) != 0) return in;
  absl::flat_hash_set<int64_t> reduced;
  for (int64_t a : *axes) {
    auto axis = NormAxis(a, rank);
    if (!axis) return std::nullopt;
    reduced.insert(*axis);
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!axes->empty() && !reduced.contains(i)) out.push_back(in[i]);
    else if (keepdims) out.push_back(Dim::Static(1));
  }
  return out;
}

std::optional<Shape> UnsqueezeShape(const Node& n, const Shape& in) {
  auto axes = Axes(n, 13);
  if (!axes || axes->empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in.size() + axes->size());
  std::vector<bool> is_new(rank, false);
  for (int64_t a : *axes) {
    auto axis = NormAxis(a, rank);
    if (!axis || is_new[*axis]) return std::nullopt;
    is_new[*axis] = true;
  }
  Shape out;
  size_t j = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(is_new[i] ? Dim::Static(1) : in[j++]);
  return out;
}

std::optional<Shape> SqueezeShape(const Node& n, const Shape& in) {
  auto axes = Axes(n, 13);
  if (!axes) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in.size());
  Shape out;
  if (axes->empty()) {  // every dim of size 1: only decidable when all are static
    for (const Dim& d : in) {
      if (!d.is_static()) return std::nullopt;
      if (d.value != 1) out.push_back(d);
    }
    return out;
  }
  absl::flat_hash_set<int64_t> drop;
  for (int64_t a : *axes) {
    auto axis = NormAxis(a, rank);
    if (!axis || (in[*axis].is_static() && in[*axis].value != 1)) return std::nullopt;
    drop.insert(*axis);
  }
  for (int64_t i = 0; i < rank; ++i)
    if (!drop.contains(i)) out.push_back(in[i]);
  return out;
}

std::optional<Shape> ConcatShape(const Node& n, const std::vector<TensorType>& ins) {
  const int64_t rank = static_cast<int64_t>(ins[0].shape.size());
  const Attribute* a = n.FindAttribute("axis");
  if (!a || a->is_ref()) return std::nullopt;
  auto axis = NormAxis(a->i(), rank);
  if (!axis) return std::nullopt;
  Shape out(rank);
  int64_t length = 0;
  bool length_known = true;
  for (const TensorType& t : ins) {
    if (static_cast<int64_t>(t.shape.size()) != rank) return std::nullopt;
    const Dim& d = t.shape[*axis];
    if (d.is_static()) length += d.value;
    else length_known = false;
  }
  for (int64_t j = 0; j < rank; ++j) {
    if (j == *axis) continue;
    // Every input has this size: a static one wins (onnx fails on two), else one symbol.
    std::optional<Dim> merged;
    for (const TensorType& t : ins) {
      const Dim& d = t.shape[j];
      if (d.is_static()) {
        if (merged && merged->is_static() && merged->value != d.value) return std::nullopt;
        merged = d;
      }
    }
    if (!merged) {
      for (const TensorType& t : ins)
        if (!t.shape[j].is_symbolic() || t.shape[j].symbol != ins[0].shape[j].symbol) return std::nullopt;
      merged = ins[0].shape[j];
    }
    out[j] = *merged;
  }
  out[*axis] = length_known ? Dim::Static(length) : Dim{};
  return out;
}

std::optional<Shape> TransposeShape(const Node& n, const Shape& in) {
  std::vector<int64_t> perm;
  if (const Attribute* a = n.FindAttribute("perm")) {
    if (a->is_ref()) return std::nullopt;
    perm = a->ints();
  } else {
    for (int64_t i = static_cast<int64_t>(in.size()) - 1; i >= 0; --i) perm.push_back(i);
  }
  if (perm.size() != in.size()) return std::nullopt;
  std::vector<bool> seen(in.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p]) return std::nullopt;
    seen[p] = true;
    out.push_back(in[p]);
  }
  return out;
}

std::optional<Shape> GatherShape(const Node& n, const Shape& data, const Shape& indices) {
  const int64_t r = static_cast<int64_t>(data.size());
  if (r < 1) return std::nullopt;
  auto axis = NormAxis(n.GetInt("axis", 0), r);
  if (!axis) return std::nullopt;
  Shape out(data.begin(), data.begin() + *axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + *axis + 1, data.end());
  return out;
}

std::optional<Shape> ShapeOpShape(const Node& n, const Shape& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  auto [start, end] = n.graph()->OpsetVersion("") >= 15 ? ShapeRange(rank, n.GetInt("start", 0), n.GetInt("end", rank))
                                                        : std::pair<int64_t, int64_t>{0, rank};
  return Shape{Dim::Static(end - start)};
}

Out LayerNorm(const Node& n, const TensorType& x) {
  Out out(n.num_outputs());
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return out;
  out[0] = x;
  Shape stats = x.shape;
  for (int64_t d = axis; d < rank; ++d) stats[d] = Dim::Static(1);
  const int32_t stash = static_cast<int32_t>(n.GetInt("stash_type", TensorProto::FLOAT));
  for (size_t i = 1; i < out.size() && i < 3; ++i) out[i] = TensorType{stash, stats};
  return out;
}

Out ConstantOut(const Node& n) {
  if (n.num_outputs() != 1) return One(n, std::nullopt);
  auto c = GetConstant(n.output(0));
  if (!c || c->data_type == 0) return One(n, std::nullopt);
  Shape s;
  for (int64_t d : c->dims) s.push_back(Dim::Static(d));
  return One(n, TensorType{c->data_type, std::move(s)});
}

}  // namespace

std::optional<Shape> ReshapeShape(const Shape& in, const std::vector<int64_t>& target, bool allowzero) {
  Shape out;
  std::vector<bool> unresolved_zero(target.size(), false);
  int64_t out_product = 1;
  std::optional<size_t> minus_one;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == -1) {
      if (minus_one) return std::nullopt;
      minus_one = i;
      out.push_back(Dim{});
    } else if (d == 0 && !allowzero) {
      if (i >= in.size()) return std::nullopt;
      out.push_back(in[i]);
      if (in[i].is_static()) out_product *= in[i].value;
      else unresolved_zero[i] = true;
    } else if (d >= 0) {
      out.push_back(Dim::Static(d));
      out_product *= d;
    } else {
      return std::nullopt;
    }
  }
  if (minus_one) {
    if (out_product == 0) return std::nullopt;
    int64_t in_product = 1;
    bool known = true;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].is_static()) in_product *= in[i].value;
      else if (i >= unresolved_zero.size() || !unresolved_zero[i]) known = false;
    }
    if (known) {
      if (in_product % out_product != 0) return std::nullopt;
      out[*minus_one] = Dim::Static(in_product / out_product);
    }
  }
  return out;
}

std::optional<Shape> Broadcast(const std::vector<const Shape*>& shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t size = 1;                  // the static size other than 1, if any
    std::vector<const Dim*> unknowns;  // dims that are not static
    for (const Shape* s : shapes) {
      if (i + s->size() < rank) continue;  // padded with 1
      const Dim& d = (*s)[i + s->size() - rank];
      if (!d.is_static()) {
        unknowns.push_back(&d);
      } else if (d.value != 1) {
        if (size != 1 && size != d.value) return std::nullopt;
        size = d.value;
      }
    }
    if (size != 1 || unknowns.empty()) {
      out[i] = Dim::Static(size);
    } else if (unknowns.size() == 1) {
      out[i] = *unknowns[0];  // a symbol, or unknown, against 1s
    } else {
      for (const Dim* d : unknowns)
        if (!d->is_symbolic() || d->symbol != unknowns[0]->symbol) return std::nullopt;
      out[i] = *unknowns[0];
    }
  }
  return out;
}

std::vector<std::optional<TensorType>> InferNode(const Node& n, TypeLookup type_of) {
  if (!CanonicalDomain(n.domain()).empty() || n.num_outputs() == 0) return Out(n.num_outputs());
  const std::string& op = n.op_type();
  if (op == "Constant") return ConstantOut(n);
  const int64_t opset = n.graph()->OpsetVersion("");
  // Every present input must be known: rules read all of them.
  std::vector<TensorType> ins;
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    if (!n.input(i)) {
      ins.push_back({});
      continue;
    }
    auto t = type_of(n.input(i));
    if (!t) return Out(n.num_outputs());
    ins.push_back(std::move(*t));
  }
  if (ins.empty() || !n.input(0)) return Out(n.num_outputs());
  const TensorType& x = ins[0];
  auto with_shape = [&](int32_t elem, std::optional<Shape> s) {
    return One(n, s ? std::optional<TensorType>(TensorType{elem, std::move(*s)}) : std::nullopt);
  };

  if (In(kUnary, op)) return One(n, x);
  if (op == "Dropout") {
    Out out = One(n, x);
    if (out.size() > 1 && opset >= 12) out[1] = TensorType{TensorProto::BOOL, x.shape};
    return out;
  }
  if (op == "Cast") return with_shape(static_cast<int32_t>(n.GetInt("to", 0)), x.shape);
  if (op == "CastLike" && ins.size() == 2) return with_shape(ins[1].elem, x.shape);
  if (op == "IsNaN" || op == "IsInf") return with_shape(TensorProto::BOOL, x.shape);
  if (op == "LayerNormalization" && opset >= 17) return LayerNorm(n, x);

  const bool broadcast = In(kBroadcast, op), compare = In(kCompare, op), where = op == "Where";
  if ((broadcast || compare || where) && opset >= 8) {
    if (ins.size() < 2 || (where && ins.size() != 3)) return Out(n.num_outputs());
    std::vector<const Shape*> shapes;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!n.input(i)) return Out(n.num_outputs());
      shapes.push_back(&ins[i].shape);
    }
    int32_t elem = compare ? TensorProto::BOOL : where ? ins[1].elem : x.elem;
    return with_shape(elem, Broadcast(shapes));
  }
  if (op == "MatMul" && ins.size() == 2) return with_shape(x.elem, MatMulShape(x.shape, ins[1].shape));
  if (op == "Gemm" && ins.size() >= 2) {
    if (x.shape.size() != 2 || ins[1].shape.size() != 2) return Out(n.num_outputs());
    const Dim& m = x.shape[n.GetInt("transA", 0) ? 1 : 0];
    const Dim& cols = ins[1].shape[n.GetInt("transB", 0) ? 0 : 1];
    return with_shape(x.elem, Shape{m, cols});
  }
  if (op == "Reshape" && opset >= 5 && ins.size() == 2) {
    // A constant shape, or one computed from static dims (onnx's data propagation), with
    // constants such as -1 joined in by Concat.
    auto target = IntData(n.input(1), type_of);
    if (!target) return Out(n.num_outputs());
    return with_shape(x.elem, ReshapeShape(x.shape, *target, n.GetInt("allowzero", 0) != 0));
  }
  if (op == "Expand" && ins.size() == 2) {
    // A constant shape, or one computed from Shape (onnx's data propagation), symbols kept.
    auto target = ShapeData(n.input(1), type_of);
    if (!target) return Out(n.num_outputs());
    return with_shape(x.elem, Broadcast({&x.shape, &*target}));
  }
  if (op == "Transpose") return with_shape(x.elem, TransposeShape(n, x.shape));
  if (op == "Unsqueeze") return with_shape(x.elem, UnsqueezeShape(n, x.shape));
  if (op == "Squeeze") return with_shape(x.elem, SqueezeShape(n, x.shape));
  if (op == "Concat" && opset >= 4) return with_shape(x.elem, ConcatShape(n, ins));
  if (op == "Flatten") {
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = n.GetInt("axis", 1);
    if (axis < -rank || axis > rank) return Out(n.num_outputs());
    if (axis < 0) axis += rank;
    return with_shape(x.elem, Shape{Product(x.shape, 0, axis), Product(x.shape, axis, rank)});
  }
  if (In(kReduce, op)) return with_shape(x.elem, ReduceShape(n, x.shape));
  if (op == "Gather" && ins.size() == 2) return with_shape(x.elem, GatherShape(n, x.shape, ins[1].shape));
  if (op == "Shape") return with_shape(TensorProto::INT64, ShapeOpShape(n, x.shape));
  if (op == "Size") return with_shape(TensorProto::INT64, Shape{});
  if (auto out = InferNn(n, ins)) return *out;
  if (auto out = InferData(n, ins, type_of)) return *out;
  return Out(n.num_outputs());
}

}  // namespace onnxsurgeon::shape_rules

#include "passes/reshapes/reshape_facts.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/dtypes.h"
#include "core/shape/propagate.h"
#include "core/shape/rules.h"

namespace onnxsurgeon::passes::reshapes {

bool IsOp(const Node* n, std::string_view op) { return n && n->Is(op); }

Shape StaticShape(const std::vector<int64_t>& v) {
  Shape s;
  for (int64_t d : v) s.push_back(Dim::Static(d));
  return s;
}

// The shape input of a Reshape (opset >= 5) as constants, or nullopt.
std::optional<std::vector<int64_t>> ShapeInput(const Node& reshape) {
  if (reshape.num_inputs() < 2 || !reshape.input(1)) return std::nullopt;
  return ConstantInt64s(reshape.input(1));
}

bool AllowZero(const Node& reshape) { return reshape.GetInt("allowzero", 0) != 0; }

// The output shape of Reshape(input shaped `in`, `s`): onnx's rule
// (shape_rules::ReshapeShape), and where that leaves the -1 unknown, the one dim_param left
// after cancelling equal dims of input and output. Nullopt when `s` is invalid for `in`.
std::optional<Shape> ResolveReshape(const Shape& in, const std::vector<int64_t>& s, bool allowzero) {
  auto out = shape_rules::ReshapeShape(in, s, allowzero);
  auto minus_one = std::find(s.begin(), s.end(), -1);
  if (!out || minus_one == s.end() || !(*out)[minus_one - s.begin()].is_unknown()) return out;
  const int infer = static_cast<int>(minus_one - s.begin());
  Shape& shape = *out;
  // Cancel dims of the input against the other output dims; what is left is the -1.
  std::vector<Dim> rest_in(in.begin(), in.end());
  std::vector<Dim> rest_out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int>(i) == infer) continue;
    auto it = std::find_if(rest_in.begin(), rest_in.end(), [&](const Dim& d) { return d.SameAs(shape[i]); });
    if (it != rest_in.end() && !shape[i].is_unknown()) rest_in.erase(it);
    else rest_out.push_back(shape[i]);
  }
  int64_t num = 1, den = 1;
  std::vector<Dim> symbolic;
  for (const Dim& d : rest_in) {
    if (d.is_static()) num *= d.value;
    else symbolic.push_back(d);
  }
  for (const Dim& d : rest_out) {
    if (!d.is_static()) return out;  // unknown -1
    den *= d.value;
  }
  if (symbolic.empty()) {
    if (den > 0 && num % den == 0) shape[infer] = Dim::Static(num / den);
  } else if (symbolic.size() == 1 && num == 1 && den == 1) {
    shape[infer] = symbolic[0];
  }
  return out;
}

std::optional<std::vector<int64_t>> InsertedUnitAxes(const Shape& in, const Shape& out) {
  if (out.size() <= in.size()) return std::nullopt;
  // Greedy: an output dim the same as the next input dim is that dim (taking it never
  // loses a match a later output dim could make, as for any subsequence test).
  std::vector<int64_t> axes;
  size_t i = 0;
  for (size_t j = 0; j < out.size(); ++j) {
    if (i < in.size() && out[j].SameAs(in[i])) {
      ++i;
    } else if (out[j].is_static() && out[j].value == 1) {
      axes.push_back(static_cast<int64_t>(j));
    } else {
      return std::nullopt;
    }
  }
  if (i != in.size()) return std::nullopt;
  return axes;
}

std::optional<ReshapeShapes> KnownReshapeShapes(const Node& reshape, std::string* why) {
  auto fail = [&](std::string text) -> std::optional<ReshapeShapes> {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  const Value* x = reshape.num_inputs() > 0 ? reshape.input(0) : nullptr;
  if (!x || reshape.num_outputs() < 1 || !reshape.output(0)) return fail("no data input or output");
  auto s = ShapeInput(reshape);
  if (!s) return fail("the shape input is not a constant");
  auto in = ShapeOf(x);
  if (!in) return fail(absl::StrCat("the rank of '", x->name(), "' is unknown"));
  auto out = ResolveReshape(*in, *s, AllowZero(reshape));
  if (!out) return fail(absl::StrCat("the shape input is invalid for the input shape ", ShapeToString(*in)));
  if (std::any_of(out->begin(), out->end(), [](const Dim& d) { return d.is_unknown(); }))
    return fail(absl::StrCat("the output shape ", ShapeToString(*out), " is not fully known"));
  return ReshapeShapes{std::move(*in), std::move(*out)};
}

// The shape of `v`: a Reshape's output is derived from its shape input and its input (a
// stale annotation would mislead every rule here); otherwise ShapeOf.
std::optional<Shape> ShapeOfValue(const Value* v) {
  if (!v) return std::nullopt;
  if (Node* p = v->producer(); IsOp(p, "Reshape")) {
    auto s = ShapeInput(*p);
    auto in = ShapeOf(p->input(0));
    if (s && in) {
      auto out = ResolveReshape(*in, *s, AllowZero(*p));
      if (out && std::none_of(out->begin(), out->end(), [](const Dim& d) { return d.is_unknown(); })) return out;
    }
  }
  return ShapeOf(v);
}

std::optional<std::vector<int64_t>> StaticOf(const Value* v) { return StaticDims(ShapeOfValue(v)); }

// Records a type on `v` in memory (not in value_info: nothing is saved that was not there).
void SetType(Value* v, int32_t elem_type, const std::vector<int64_t>& dims) {
  onnx::TypeProto* t = v->mutable_info()->mutable_type();
  t->Clear();
  auto* tt = t->mutable_tensor_type();
  if (elem_type) tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

bool GemmType(int32_t t, int64_t opset) {
  using TP = onnx::TensorProto;
  if (t == TP::FLOAT || t == TP::DOUBLE || t == TP::FLOAT16) return opset >= 7;
  if (t == TP::INT32 || t == TP::INT64 || t == TP::UINT32 || t == TP::UINT64) return opset >= 11;
  if (t == TP::BFLOAT16) return opset >= 13;
  return false;
}

// Why Add(MatMul(A, B), C) cannot become Gemm when A is shaped `a` (empty: it can).
std::string GemmBlocker(const Node& matmul, const Node& add, const std::optional<Shape>& a) {
  Value* b = matmul.input(1);
  Value* c = add.input(0) == matmul.output(0) ? add.input(1) : add.input(0);
  if (!matmul.output(0) || matmul.output(0)->uses().size() != 1 || matmul.output(0)->IsGraphOutput())
    return "the MatMul's output is read by more than the Add";
  if (add.num_inputs() != 2 || !c) return "the Add does not have two inputs";
  if (matmul.num_inputs() != 2 || !matmul.input(0) || !b) return "the MatMul does not have two inputs";
  if (!a || a->size() != 2) return absl::StrCat("A ('", matmul.input(0)->name(), "') is not known to be rank 2");
  auto bs = ShapeOfValue(b);
  if (!bs || bs->size() != 2) return absl::StrCat("B ('", b->name(), "') is not known to be rank 2");
  int64_t opset = add.graph()->OpsetVersion("");
  int32_t t = ElementType(matmul.input(0));
  if (!t) t = ElementType(b);
  if (!GemmType(t, opset)) {
    return absl::StrCat("element type ", t ? DataTypeName(t) : std::string("unknown"),
                        " is not one Gemm takes at opset ", opset);
  }
  auto cs = ShapeOfValue(c);
  if (!cs || cs->size() > 2) return absl::StrCat("the bias '", c->name(), "' is not known to be rank <= 2");
  const Dim target[2] = {(*a)[0], (*bs)[1]};
  for (size_t i = 0; i < cs->size(); ++i) {
    const Dim& d = (*cs)[cs->size() - 1 - i];
    if (d.is_static() && d.value == 1) continue;
    if (!d.SameAs(target[1 - i]))
      return absl::StrCat("the bias ", ShapeToString(*cs), " does not broadcast to [", target[0].ToString(), ",",
                          target[1].ToString(), "]");
  }
  return "";
}

bool IsUnary(const std::string& op) {
  static const absl::flat_hash_set<std::string> kOps = {
      "Relu",       "Tanh",     "Sigmoid",  "Erf",   "Gelu",      "Exp",   "Log",  "Neg",  "Abs",         "Sqrt",
      "Reciprocal", "Softplus", "Softsign", "Cast",  "LeakyRelu", "Elu",   "Selu", "Celu", "HardSigmoid", "HardSwish",
      "Mish",       "Sin",      "Cos",      "Floor", "Ceil",      "Round", "Sign", "Not",  "Identity"};
  return kOps.contains(op);
}
bool IsBinary(const std::string& op) {
  static const absl::flat_hash_set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  return kOps.contains(op);
}

std::optional<std::vector<int64_t>> TransposeAsReshape(const Node& transpose, std::string* why) {
  auto refuse = [why](std::string reason) -> std::optional<std::vector<int64_t>> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const Value* x = transpose.input(0);
  if (!x || !x->type() || !x->type()->has_tensor_type() || !x->type()->tensor_type().has_shape())
    return refuse("the input's shape is unknown");
  const auto& dims = x->type()->tensor_type().shape().dim();
  const int64_t rank = dims.size();
  std::vector<int64_t> perm;
  if (const Attribute* a = transpose.FindAttribute("perm")) {
    perm.assign(a->proto().ints().begin(), a->proto().ints().end());
  } else {  // the default reverses the dims
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) return refuse("perm does not match the input's rank");
  std::vector<int64_t> kept;  // input positions of the dims above size 1, in output order
  std::vector<int64_t> out;
  int dynamic = 0;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank) return refuse("perm is out of range");
    const auto& d = dims[p];
    if (d.has_dim_value() && d.dim_value() == 0) return refuse("a dim of size 0 (a 0 in Reshape's shape copies a dim)");
    if (d.has_dim_value() && d.dim_value() == 1) {
      out.push_back(1);
      continue;
    }
    kept.push_back(p);
    out.push_back(d.has_dim_value() ? d.dim_value() : -1);
    dynamic += !d.has_dim_value();
  }
  if (std::is_sorted(perm.begin(), perm.end())) return refuse("the identity permutation");
  if (!std::is_sorted(kept.begin(), kept.end()))
    return refuse(absl::StrCat("perm [", absl::StrJoin(perm, ","), "] reorders dims above size 1"));
  if (dynamic > 1) return refuse(absl::StrCat(dynamic, " dims of unknown size (a Reshape can leave one to -1)"));
  return out;
}

std::optional<std::vector<int64_t>> FlattenAsReshape(const Node& flatten, std::string* why) {
  const Value* x = flatten.input(0);
  return FlattenAsReshape(flatten, x ? ShapeOfType(x->type()) : std::nullopt, why);
}

std::optional<std::vector<int64_t>> FlattenAsReshape(const Node& flatten, const std::optional<Shape>& x_shape,
                                                     std::string* why) {
  if (!x_shape) {
    *why = "the input's shape is unknown";
    return std::nullopt;
  }
  const Shape& dims = *x_shape;
  const int64_t rank = dims.size();
  int64_t axis = 1;
  if (const Attribute* a = flatten.FindAttribute("axis")) axis = a->proto().i();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) {
    *why = "axis is out of range";
    return std::nullopt;
  }
  std::vector<int64_t> out;
  int dynamic = 0;
  for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, axis}, {axis, rank}}) {
    int64_t size = 1;
    bool known = true;
    for (int64_t i = lo; i < hi; ++i) {
      if (!dims[i].is_static()) {
        known = false;
      } else {
        size *= dims[i].value;
      }
    }
    if (known && size == 0) {
      *why = "a side of size 0 (a 0 in Reshape's shape copies a dim)";
      return std::nullopt;
    }
    dynamic += !known;
    out.push_back(known ? size : -1);
  }
  if (dynamic > 1) {
    *why = "both sides hold dims of unknown size (a Reshape can leave one to -1)";
    return std::nullopt;
  }
  return out;
}

}  // namespace onnxsurgeon::passes::reshapes

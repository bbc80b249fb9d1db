// Elementwise ops: unary ops keep their input's type, binary ones broadcast (numpy), and
// on small integer vectors the symbolic analysis follows their arithmetic element by
// element.
#include <algorithm>
#include <limits>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "core/shape/ops/internal.h"

namespace onnxsurgeon::shape_ops {
namespace {

using onnx::TensorProto;

// ---- shape rules ----------------------------------------------------------------------

Out SameAsInput(const ShapeInput& in) { return in.One(in.x()); }

Out Dropout(const ShapeInput& in) {
  Out out = in.One(in.x());
  if (out.size() > 1 && in.opset >= 12) out[1] = TensorType{TensorProto::BOOL, in.x().shape};
  return out;
}

Out Cast(const ShapeInput& in) { return in.Typed(static_cast<int32_t>(in.node.GetInt("to", 0)), in.x().shape); }

Out CastLike(const ShapeInput& in) { return in.ins.size() == 2 ? in.Typed(in.ins[1].elem, in.x().shape) : in.None(); }

// QuantizeLinear: y's type is output_dtype's (opset 21 on), else the zero point's, else
// uint8; x's shape. DequantizeLinear: output_dtype's (23 on), else the scale's. The same
// for com.microsoft's QuantizeLinear/DequantizeLinear (shape_rules::InferNode).
Out QuantizeLinear(const ShapeInput& in) {
  int32_t elem = static_cast<int32_t>(in.node.GetInt("output_dtype", 0));
  if (elem == 0) elem = in.ins.size() > 2 && in.node.input(2) ? in.ins[2].elem : int32_t{TensorProto::UINT8};
  return in.Typed(elem, in.x().shape);
}

Out DequantizeLinear(const ShapeInput& in) {
  if (in.ins.size() < 2 || !in.node.input(1)) return in.None();
  int32_t elem = static_cast<int32_t>(in.node.GetInt("output_dtype", 0));
  return in.Typed(elem != 0 ? elem : in.ins[1].elem, in.x().shape);
}

Out BoolLikeInput(const ShapeInput& in) { return in.Typed(TensorProto::BOOL, in.x().shape); }

// Multidirectional broadcasting of every input (opset 8 on), output element type `elem`.
Out Broadcasting(const ShapeInput& in, int32_t elem) {
  if (in.opset < 8 || in.ins.size() < 2) return in.None();
  std::vector<const Shape*> shapes;
  for (size_t i = 0; i < in.ins.size(); ++i) {
    if (!in.node.input(i)) return in.None();
    shapes.push_back(&in.ins[i].shape);
  }
  return in.Typed(elem, shape_rules::Broadcast(shapes));
}

Out Arithmetic(const ShapeInput& in) { return Broadcasting(in, in.x().elem); }
Out Comparison(const ShapeInput& in) { return Broadcasting(in, TensorProto::BOOL); }
Out Where(const ShapeInput& in) {
  if (in.ins.size() != 3) return in.None();
  return Broadcasting(in, in.ins[1].elem);
}

// ---- symbolic rules -------------------------------------------------------------------

// A dim of a value's shape narrowed to int32 (TensorFlow computes shapes in int32:
// tf2onnx writes Shape -> Cast(int32) -> ... -> Cast(int64)). It keeps its value for every
// dim below 2^31; a larger one makes the model's own int32 shape arithmetic wrap, and
// the shape it then builds is refused at run time. Expressions of dims are not narrowed.
bool IsDimToInt32(const SymbolicElem& e, int64_t to) {
  return to == TensorProto::INT32 && !e.is_const && (e.key.rfind("s:", 0) == 0 || e.key.rfind("d:", 0) == 0);
}

// Binary elementwise ops on vectors of one length (or one element, broadcast). An element
// `f` cannot decide becomes element i of the output itself.
template <typename F>
std::optional<SymbolicVector> Elementwise(const SymbolicInput& in, F f) {
  Node* n = in.node;
  if (n->num_inputs() != 2) return std::nullopt;
  const SymbolicVector* a = in.In(0);
  const SymbolicVector* b = in.In(1);
  if (!a || !b || a->dtype != b->dtype || !IsIntType(a->dtype)) return std::nullopt;
  if (a->elems.size() != b->elems.size() && a->elems.size() != 1 && b->elems.size() != 1) return std::nullopt;
  size_t len = std::max(a->elems.size(), b->elems.size());
  SymbolicVector v{a->dtype, a->scalar && b->scalar, {}};
  bool any = false;
  for (size_t i = 0; i < len; ++i) {
    auto r = f(a->elems[a->elems.size() == 1 ? 0 : i], b->elems[b->elems.size() == 1 ? 0 : i], a->dtype);
    any |= r.has_value();
    v.elems.push_back(r ? *r : in.facts.OwnElem(n->output(0), i));
  }
  if (!any) return std::nullopt;  // nothing learned: the output is its own leaf
  return v;
}

std::optional<SymbolicVector> IdentityVector(const SymbolicInput& in) {
  const SymbolicVector* x = in.In(0);
  return x ? std::optional<SymbolicVector>(*x) : std::nullopt;
}

std::optional<SymbolicVector> CastVector(const SymbolicInput& in) {
  const SymbolicVector* x = in.In(0);
  int64_t to = in.node->GetInt("to", 0);
  if (!x || !(IsIntType(static_cast<int32_t>(to)) || to == TensorProto::BOOL)) return std::nullopt;
  SymbolicVector v = *x;
  v.dtype = static_cast<int32_t>(to);
  for (SymbolicElem& e : v.elems) {
    if (e.is_const) {
      if (to == TensorProto::BOOL) e = SymbolicElem::Const(e.c != 0);
      else if (!Fits(v.dtype, e.c)) return std::nullopt;
    } else if (!(x->dtype == to || (x->dtype == TensorProto::INT32 && to == TensorProto::INT64) ||
                 IsDimToInt32(e, to))) {
      return std::nullopt;  // narrowing or to bool: the value may change
    }
  }
  return v;
}

std::optional<SymbolicVector> ArithVector(const SymbolicInput& in) {
  const std::string& op = in.node->op_type();
  char c = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
  return Elementwise(in,
                     [c](const SymbolicElem& a, const SymbolicElem& b, int32_t dtype) -> std::optional<SymbolicElem> {
                       auto r = Arith(c, a, b);
                       if (r && r->is_const && !Fits(dtype, r->c)) return std::nullopt;
                       return r;
                     });
}

std::optional<SymbolicVector> EqualVector(const SymbolicInput& in) {
  auto out = Elementwise(in, [](const SymbolicElem& a, const SymbolicElem& b, int32_t) -> std::optional<SymbolicElem> {
    if (a.Same(b)) return SymbolicElem::Const(1);
    if (a.is_const && b.is_const) return SymbolicElem::Const(0);
    if ((a.nonneg && b.is_const && b.c < 0) || (b.nonneg && a.is_const && a.c < 0)) return SymbolicElem::Const(0);
    return std::nullopt;
  });
  if (out) out->dtype = TensorProto::BOOL;
  return out;
}

std::optional<SymbolicVector> NotVector(const SymbolicInput& in) {
  const SymbolicVector* x = in.In(0);
  if (!x || x->dtype != TensorProto::BOOL || !x->AllConst()) return std::nullopt;
  SymbolicVector v = *x;
  for (SymbolicElem& e : v.elems) e = SymbolicElem::Const(e.c == 0);
  return v;
}

std::optional<SymbolicVector> WhereVector(const SymbolicInput& in) {
  const SymbolicVector* c = in.In(0);
  const SymbolicVector* a = in.In(1);
  const SymbolicVector* b = in.In(2);
  if (!c || !a || !b || c->dtype != TensorProto::BOOL || a->dtype != b->dtype) return std::nullopt;
  size_t len = std::max({c->elems.size(), a->elems.size(), b->elems.size()});
  for (const SymbolicVector* x : {c, a, b})
    if (x->elems.size() != len && x->elems.size() != 1) return std::nullopt;
  SymbolicVector v{a->dtype, c->scalar && a->scalar && b->scalar, {}};
  for (size_t i = 0; i < len; ++i) {
    const SymbolicElem& ce = c->elems[c->elems.size() == 1 ? 0 : i];
    if (!ce.is_const) return std::nullopt;
    const SymbolicVector* side = ce.c ? a : b;
    v.elems.push_back(side->elems[side->elems.size() == 1 ? 0 : i]);
  }
  return v;
}

// ---- data rules (shape operands, as onnx's data propagation follows them) -------------

std::optional<Shape> CastData(const DataInput& in) {
  if (in.node.GetInt("to", 0) != TensorProto::INT64) return std::nullopt;
  return in.Operand(0);
}

std::optional<std::vector<int64_t>> CastInts(const IntsInput& in) {
  return in.node.GetInt("to", 0) == TensorProto::INT64 ? in.Operand(0) : in.StaticData();
}

std::optional<Shape> ArithData(const DataInput& in) {
  if (in.node.num_inputs() != 2) return std::nullopt;
  const std::string& op = in.node.op_type();
  // Arithmetic on dims (reshape(b, c * h, w); tf2onnx's Einsum broadcasts batch dims with
  // Max): exact on static dims, numpy broadcasting
  // of a one-element side; a symbolic or unknown operand decides nothing.
  auto a = StaticDims(in.Operand(0));
  auto b = StaticDims(in.Operand(1));
  if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return std::nullopt;
  const size_t size = std::max(a->size(), b->size());
  Shape s;
  for (size_t i = 0; i < size; ++i) {
    const int64_t l = (*a)[a->size() == 1 ? 0 : i], r = (*b)[b->size() == 1 ? 0 : i];
    s.push_back(Dim::Static(op == "Mul"   ? l * r
                            : op == "Add" ? l + r
                            : op == "Sub" ? l - r
                            : op == "Max" ? std::max(l, r)
                                          : std::min(l, r)));
  }
  return s;
}

std::optional<int64_t> CheckedOp(char op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case '+':
      if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
      return r;
    case '-':
      if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
      return r;
    case '*':
      if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
      return r;
    case '/':
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      return a / b;  // truncation, as onnxruntime's integer Div
  }
  return std::nullopt;
}

}  // namespace

bool IsIntType(int32_t t) { return t == TensorProto::INT64 || t == TensorProto::INT32; }

bool Fits(int32_t dtype, int64_t v) {
  if (dtype == TensorProto::INT32)
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  if (dtype == TensorProto::BOOL) return v == 0 || v == 1;
  return true;
}

std::optional<SymbolicElem> Arith(char op, const SymbolicElem& a, const SymbolicElem& b) {
  if (a.is_const && b.is_const) {
    auto r = CheckedOp(op, a.c, b.c);
    if (!r) return std::nullopt;
    return SymbolicElem::Const(*r);
  }
  // Identities of integer arithmetic.
  if ((op == '+' || op == '-') && b.is_const && b.c == 0) return a;
  if (op == '+' && a.is_const && a.c == 0) return b;
  if ((op == '*' || op == '/') && b.is_const && b.c == 1) return a;
  if (op == '*' && a.is_const && a.c == 1) return b;
  if (op == '*' && ((a.is_const && a.c == 0) || (b.is_const && b.c == 0))) return SymbolicElem::Const(0);
  if (op == '/' && b.is_const && b.c == 0) return std::nullopt;
  std::string ka = a.Key(), kb = b.Key();
  if ((op == '+' || op == '*') && kb < ka) std::swap(ka, kb);
  bool nonneg = false;
  if (op == '+' || op == '*') nonneg = a.nonneg && b.nonneg;
  if (op == '/') nonneg = a.nonneg && b.is_const && b.c > 0;
  return SymbolicElem::Sym(absl::StrCat("(", std::string(1, op), " ", ka, " ", kb, ")"), nonneg);
}

void RegisterElementwise(OpTable& table) {
  table.Shape({"Abs",        "Acos",        "Acosh",     "Asin",
               "Asinh",      "Atan",        "Atanh",     "Ceil",
               "Celu",       "Clip",        "Cos",       "Cosh",
               "Elu",        "Erf",         "Exp",       "Floor",
               "Gelu",       "HardSigmoid", "HardSwish", "Hardmax",
               "Identity",   "LeakyRelu",   "Log",       "LogSoftmax",
               "Mish",       "Neg",         "Not",       "PRelu",
               "Reciprocal", "Relu",        "Round",     "Selu",
               "Shrink",     "Sigmoid",     "Sign",      "Sin",
               "Sinh",       "Softmax",     "Softplus",  "Softsign",
               "Sqrt",       "Tan",         "Tanh",      "ThresholdedRelu"},
              SameAsInput);
  table.Shape({"Dropout"}, Dropout);
  table.Shape({"Cast"}, Cast);
  table.Shape({"CastLike"}, CastLike);
  table.Shape({"QuantizeLinear"}, QuantizeLinear);
  table.Shape({"DequantizeLinear"}, DequantizeLinear);
  table.Shape({"IsNaN", "IsInf"}, BoolLikeInput);
  table.Shape({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "Max", "Min", "Sum", "Mean"}, Arithmetic);
  table.Shape({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"}, Comparison);
  table.Shape({"Where"}, Where);

  table.Data({"Cast"}, CastData);
  table.Ints({"Cast"}, CastInts);
  table.Data({"Mul", "Add", "Sub", "Max", "Min"}, ArithData);

  table.Symbolic({"Identity"}, IdentityVector);
  table.Symbolic({"Cast"}, CastVector);
  table.Symbolic({"Add", "Sub", "Mul", "Div"}, ArithVector);
  table.Symbolic({"Equal"}, EqualVector);
  table.Symbolic({"Not"}, NotVector);
  table.Symbolic({"Where"}, WhereVector);
}

}  // namespace onnxsurgeon::shape_ops

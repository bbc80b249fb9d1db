#include "passes/control_flow/run_safety.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/ir/shape.h"

namespace onnxsurgeon::passes::control_flow {
namespace {

// Elementwise ops (and queries of a tensor's shape) that compute a value for every input,
// NaN or inf at worst: nothing in their data makes them raise.
const std::set<std::string, std::less<>>& NeverRaise() {
  static const std::set<std::string, std::less<>> ops = {
      "Abs",         "Acos",       "Acosh",    "Asin",     "Asinh", "Atan",      "Atanh",   "Ceil",           "Celu",
      "Clip",        "Constant",   "Cos",      "Cosh",     "Elu",   "Erf",       "Exp",     "Floor",          "Gelu",
      "HardSigmoid", "HardSwish",  "Identity", "IsInf",    "IsNaN", "LeakyRelu", "Log",     "Mish",           "Neg",
      "Not",         "Reciprocal", "Relu",     "Round",    "Selu",  "Shape",     "Sigmoid", "Sign",           "Sin",
      "Sinh",        "Size",       "Softplus", "Softsign", "Sqrt",  "Tan",       "Tanh",    "ThresholdedRelu"};
  return ops;
}

// Ops that broadcast their inputs: they raise only when the shapes do not broadcast.
const std::set<std::string, std::less<>>& Broadcasting() {
  static const std::set<std::string, std::less<>> ops = {
      "Add",  "And",         "BitShift", "Div",  "Equal", "Greater", "GreaterOrEqual",
      "Less", "LessOrEqual", "Max",      "Mean", "Min",   "Mod",     "Mul",
      "Or",   "Pow",         "PRelu",    "Sub",  "Sum",   "Where",   "Xor"};
  return ops;
}

// Ops that only need the rank their axis or perm attributes index to be known.
const std::set<std::string, std::less<>>& RankOnly() {
  static const std::set<std::string, std::less<>> ops = {
      "Flatten",    "Hardmax",    "LogSoftmax", "ReduceL1",        "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
      "ReduceMean", "ReduceProd", "ReduceSum",  "ReduceSumSquare", "Softmax",  "Transpose",    "Unsqueeze"};
  return ops;
}

bool IsIntegerType(int32_t t) {
  switch (t) {
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64: return true;
    default: return false;
  }
}

std::string Name(const Value* v) { return v ? v->name() : std::string("(omitted)"); }

std::string ShapeText(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) absl::StrAppend(&out, i ? "," : "", s[i].ToString());
  return out + "]";
}

// Numpy broadcast of two proven-compatible shapes (call ProvenToBroadcast first).
Shape Broadcast(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  const size_t off = longer.size() - shorter.size();
  for (size_t i = 0; i < shorter.size(); ++i)
    if (longer[off + i].is_static() && longer[off + i].value == 1) out[off + i] = shorter[i];
  return out;
}

std::string WhyBroadcastUnproven(const Node& n, const TypeFacts& types) {
  std::optional<Shape> acc;
  for (const Value* in : n.inputs()) {
    if (!in) continue;
    std::optional<Shape> s = types.DimsOf(in);
    if (!s) return absl::StrCat("the shape of '", Name(in), "' is unknown");
    if (!acc) {
      acc = *s;
      continue;
    }
    if (!ProvenToBroadcast(*acc, *s))
      return absl::StrCat("shapes ", ShapeText(*acc), " and ", ShapeText(*s), " are not proven to broadcast");
    acc = Broadcast(*acc, *s);
  }
  return "";
}

// An integer Div or Mod raises on a zero divisor: only a constant one without zeros is safe.
std::string WhyIntegerDivisionUnsafe(const Node& n, const TypeFacts& types) {
  if (!IsIntegerType(types.ElemType(n.input(0)))) return "";
  auto divisor = GetConstant(n.input(1));
  auto values = divisor ? divisor->AsInt64s() : std::nullopt;
  if (!values) return "an integer division by a divisor computed at run time (it may be zero)";
  if (std::find(values->begin(), values->end(), 0) != values->end()) return "an integer division by zero";
  return "";
}

// The axes a reduction or Squeeze names (attribute, or constant input 1), nullopt when
// computed at run time; an empty list when it names none.
std::optional<std::vector<int64_t>> Axes(const Node& n) {
  if (const Attribute* a = n.FindAttribute("axes"))
    return std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
  if (n.num_inputs() >= 2 && n.input(1)) return ConstantInt64s(n.input(1));
  return std::vector<int64_t>{};
}

std::string WhySqueezeUnsafe(const Node& n, const TypeFacts& types) {
  auto axes = Axes(n);
  if (!axes) return "its axes are computed at run time";
  if (axes->empty()) return "";  // squeezes whatever is 1
  auto shape = types.DimsOf(n.input(0));
  if (!shape) return absl::StrCat("the shape of '", Name(n.input(0)), "' is unknown");
  for (int64_t a : *axes) {
    int64_t i = a < 0 ? a + static_cast<int64_t>(shape->size()) : a;
    if (i < 0 || i >= static_cast<int64_t>(shape->size()) || !((*shape)[i].is_static() && (*shape)[i].value == 1))
      return absl::StrCat("axis ", a, " of ", ShapeText(*shape), " is not proven to be 1");
  }
  return "";
}

// ArgMax/ArgMin/ReduceMax/ReduceMin have no value for an empty axis: the reduced dims must
// be static and non-zero.
std::string WhyMaxReductionUnsafe(const Node& n, const TypeFacts& types) {
  auto shape = types.DimsOf(n.input(0));
  if (!shape) return absl::StrCat("the shape of '", Name(n.input(0)), "' is unknown");
  std::vector<int64_t> axes;
  if (n.Is("ArgMax") || n.Is("ArgMin")) {
    const Attribute* a = n.FindAttribute("axis");
    axes.push_back(a ? a->proto().i() : 0);
  } else {
    auto named = Axes(n);
    if (!named) return "its axes are computed at run time";
    axes = *named;
    if (axes.empty())
      for (size_t i = 0; i < shape->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (int64_t a : axes) {
    int64_t i = a < 0 ? a + static_cast<int64_t>(shape->size()) : a;
    if (i < 0 || i >= static_cast<int64_t>(shape->size()) || !(*shape)[i].is_static() || (*shape)[i].value == 0)
      return absl::StrCat("the reduced dim ", a, " of ", ShapeText(*shape), " is not proven non-empty");
  }
  return "";
}

std::string WhyMatMulUnsafe(const Node& n, const TypeFacts& types) {
  auto a = types.DimsOf(n.input(0));
  auto b = types.DimsOf(n.input(1));
  if (!a || !b || a->empty() || b->empty()) return "the operands' shapes are unknown";
  const Dim& k_a = a->back();
  const Dim& k_b = b->size() == 1 ? (*b)[0] : (*b)[b->size() - 2];
  if (!k_a.SameAs(k_b))
    return absl::StrCat("inner dims ", k_a.ToString(), " and ", k_b.ToString(), " are not proven equal");
  Shape batch_a(a->begin(), a->end() - std::min<size_t>(a->size(), 2));
  Shape batch_b(b->begin(), b->end() - std::min<size_t>(b->size(), 2));
  if (!ProvenToBroadcast(batch_a, batch_b)) return "batch dims are not proven to broadcast";
  return "";
}

std::string WhyConcatUnsafe(const Node& n, const TypeFacts& types) {
  const Attribute* a = n.FindAttribute("axis");
  std::optional<Shape> first;
  for (const Value* in : n.inputs()) {
    auto s = types.DimsOf(in);
    if (!s) return absl::StrCat("the shape of '", Name(in), "' is unknown");
    if (!first) {
      first = *s;
      continue;
    }
    if (s->size() != first->size()) return "its inputs' ranks differ";
    int64_t axis = a ? a->proto().i() : 0;
    if (axis < 0) axis += static_cast<int64_t>(s->size());
    for (size_t i = 0; i < s->size(); ++i)
      if (static_cast<int64_t>(i) != axis && !(*s)[i].SameAs((*first)[i]))
        return absl::StrCat("shapes ", ShapeText(*first), " and ", ShapeText(*s), " are not proven to concatenate");
  }
  return "";
}

// A Reshape raises unless the element counts match: with a constant shape, the input's
// dims (static numbers and symbols, an unknown dim only where a 0 copies it) must supply
// exactly the output's, the -1 taking what is left.
std::string WhyReshapeUnsafe(const Node& n, const TypeFacts& types) {
  auto target = ConstantInt64s(n.input(1));
  if (!target) return "its shape is computed at run time";
  auto in = types.DimsOf(n.input(0));
  if (!in) return absl::StrCat("the shape of '", Name(n.input(0)), "' is unknown");
  const Attribute* az = n.FindAttribute("allowzero");
  const bool allowzero = az && az->proto().i() != 0;
  std::map<std::string, int> symbols;  // input symbols not yet matched by the output
  int64_t in_static = 1, out_static = 1;
  auto factor = [](const Dim& d, size_t i) { return d.is_symbolic() ? d.symbol : absl::StrCat("#", i); };
  for (size_t i = 0; i < in->size(); ++i) {
    if ((*in)[i].is_static()) in_static *= (*in)[i].value;
    else ++symbols[factor((*in)[i], i)];
  }
  bool infer = false;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t e = (*target)[i];
    if (e == -1) {
      if (infer) return "its shape has two -1";
      infer = true;
    } else if (e == 0 && !allowzero) {
      if (i >= in->size()) return "a 0 copies a dim the input does not have";
      const Dim& d = (*in)[i];
      if (d.is_static()) out_static *= d.value;
      else if (--symbols[factor(d, i)] < 0) return "the element counts are not proven to match";
    } else if (e >= 0) {
      out_static *= e;
    } else {
      return "its shape has a negative dim other than -1";
    }
  }
  bool symbols_left = std::any_of(symbols.begin(), symbols.end(), [](const auto& s) { return s.second != 0; });
  if (!infer) {
    if (symbols_left || in_static != out_static) return "the element counts are not proven to match";
    return "";
  }
  if (out_static == 0 || in_static % out_static != 0) return "the element counts are not proven to match";
  return "";
}

// Gather raises on an index out of range: constant indices within a static dim are safe.
std::string WhyGatherUnsafe(const Node& n, const TypeFacts& types) {
  auto idx = GetConstant(n.input(1));
  auto values = idx ? idx->AsInt64s() : std::nullopt;
  if (!values) return "its indices are computed at run time (one may be out of range)";
  auto shape = types.DimsOf(n.input(0));
  if (!shape) return absl::StrCat("the shape of '", Name(n.input(0)), "' is unknown");
  const Attribute* a = n.FindAttribute("axis");
  int64_t axis = a ? a->proto().i() : 0;
  if (axis < 0) axis += static_cast<int64_t>(shape->size());
  if (axis < 0 || axis >= static_cast<int64_t>(shape->size()) || !(*shape)[axis].is_static())
    return "the dim it indexes is not static";
  const int64_t dim = (*shape)[axis].value;
  for (int64_t v : *values)
    if (v < -dim || v >= dim) return absl::StrCat("index ", v, " is out of range for dim ", dim);
  return "";
}

// Slice clamps starts and ends: it raises only on a zero step or an axis out of range.
std::string WhySliceUnsafe(const Node& n, const TypeFacts& types) {
  if (types.Rank(n.input(0)) < 0) return absl::StrCat("the rank of '", Name(n.input(0)), "' is unknown");
  for (size_t i = 1; i < n.num_inputs(); ++i) {
    if (!n.input(i)) continue;
    auto v = ConstantInt64s(n.input(i));
    if (!v) return "its starts, ends, axes or steps are computed at run time";
    if (i == 4 && std::find(v->begin(), v->end(), 0) != v->end()) return "a step is 0";
  }
  return "";
}

std::string WhyExpandUnsafe(const Node& n, const TypeFacts& types) {
  auto target = ConstantInt64s(n.input(1));
  if (!target) return "its shape is computed at run time";
  auto in = types.DimsOf(n.input(0));
  if (!in) return absl::StrCat("the shape of '", Name(n.input(0)), "' is unknown");
  Shape to;
  for (int64_t d : *target) to.push_back(Dim::Static(d));
  if (!ProvenToBroadcast(*in, to))
    return absl::StrCat("shapes ", ShapeText(*in), " and ", ShapeText(to), " are not proven to broadcast");
  return "";
}

// LayerNormalization raises when its scale or bias does not match the normalized dims
// (X's dims from axis on): they must be proven the same.
std::string WhyLayerNormUnsafe(const Node& n, const TypeFacts& types) {
  auto x = types.DimsOf(n.input(0));
  if (!x) return absl::StrCat("the shape of '", Name(n.input(0)), "' is unknown");
  const Attribute* a = n.FindAttribute("axis");
  int64_t axis = a ? a->proto().i() : -1;
  if (axis < 0) axis += static_cast<int64_t>(x->size());
  if (axis < 0 || axis >= static_cast<int64_t>(x->size())) return "its axis is out of range";
  const Shape normalized(x->begin() + axis, x->end());
  for (size_t i = 1; i < n.num_inputs(); ++i) {
    if (!n.input(i)) continue;
    auto s = types.DimsOf(n.input(i));
    bool same = s && s->size() == normalized.size();
    for (size_t d = 0; same && d < normalized.size(); ++d) same = (*s)[d].SameAs(normalized[d]);
    if (!same)
      return absl::StrCat("'", Name(n.input(i)), "' is not proven to have the normalized shape ",
                          ShapeText(normalized));
  }
  return "";
}

std::string WhyOpUnsafe(const Node& n, const TypeFacts& types) {
  const std::string& op = n.op_type();
  if (op == "Cast") {
    const Attribute* to = n.FindAttribute("to");
    bool strings =
        types.ElemType(n.input(0)) == onnx::TensorProto::STRING || (to && to->proto().i() == onnx::TensorProto::STRING);
    return strings ? "a Cast of strings (parsing may fail)" : "";
  }
  if (NeverRaise().count(op)) return "";
  if (Broadcasting().count(op)) {
    if (std::string why = WhyBroadcastUnproven(n, types); !why.empty()) return why;
    return op == "Div" || op == "Mod" ? WhyIntegerDivisionUnsafe(n, types) : "";
  }
  if (RankOnly().count(op)) {
    if (!n.input(0) || types.Rank(n.input(0)) < 0)
      return absl::StrCat("the rank of '", Name(n.input(0)), "' is unknown");
    if ((op.rfind("Reduce", 0) == 0 || op == "Unsqueeze") && !Axes(n)) return "its axes are computed at run time";
    return "";
  }
  if (op == "ReduceMax" || op == "ReduceMin" || op == "ArgMax" || op == "ArgMin")
    return WhyMaxReductionUnsafe(n, types);
  if (op == "Squeeze") return WhySqueezeUnsafe(n, types);
  if (op == "LayerNormalization") return WhyLayerNormUnsafe(n, types);
  if (op == "MatMul") return WhyMatMulUnsafe(n, types);
  if (op == "Concat") return WhyConcatUnsafe(n, types);
  if (op == "Reshape") return WhyReshapeUnsafe(n, types);
  if (op == "Gather") return WhyGatherUnsafe(n, types);
  if (op == "Slice") return WhySliceUnsafe(n, types);
  if (op == "Expand") return WhyExpandUnsafe(n, types);
  if (op == "ConstantOfShape") return GetConstant(n.input(0)) ? "" : "its shape is computed at run time";
  return "it is not among the ops proven not to raise on their data";
}

}  // namespace

bool ProvenToBroadcast(const Shape& a, const Shape& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 1; i <= n; ++i) {
    const Dim& x = a[a.size() - i];
    const Dim& y = b[b.size() - i];
    bool one = (x.is_static() && x.value == 1) || (y.is_static() && y.value == 1);
    if (!one && !x.SameAs(y)) return false;
  }
  return true;
}

std::string WhyNotSafeToRun(const Node& node, const TypeFacts& types) {
  const std::string what = node.name().empty() ? node.op_type() : absl::StrCat(node.op_type(), " '", node.name(), "'");
  if (!node.domain().empty() && node.domain() != "ai.onnx") return absl::StrCat(what, " is a custom-domain op");
  if (!node.subgraphs().empty()) return absl::StrCat(what, " holds a subgraph (nested control flow converts first)");
  std::string why = WhyOpUnsafe(node, types);
  return why.empty() ? "" : absl::StrCat(what, " may raise on its data: ", why);
}

}  // namespace onnxsurgeon::passes::control_flow

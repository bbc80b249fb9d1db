// Reductions, arg-reductions and softmaxes over axes of static size 1 (see rules.h).
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "passes/reductions/mean.h"
#include "passes/reductions/rules_internal.h"

namespace onnxsurgeon::reductions {

using pattern::Match;
using pattern::OpRef;
using pattern::Pattern;

std::optional<std::vector<int64_t>> WrittenAxes(const Node& reduce) {
  if (reduce.num_inputs() > 1 && reduce.input(1)) return ConstantInt64s(reduce.input(1));
  if (const Attribute* a = reduce.FindAttribute("axes")) return a->ints();
  return std::vector<int64_t>{};
}

namespace {

bool KeepDims(const Node& n) {
  const Attribute* a = n.FindAttribute("keepdims");
  return !a || a->i(1) != 0;
}

// No reduction at all: noop_with_empty_axes=1 and no axes.
bool ReducesNothing(const Node& n) {
  const Attribute* noop = n.FindAttribute("noop_with_empty_axes");
  auto axes = WrittenAxes(n);
  return noop && noop->i(0) != 0 && axes && axes->empty();
}

// True when every dim of `shape` in `axes` is a static 1; else false, naming the axis.
bool AllOnes(const Node& n, const Shape& shape, const std::vector<int64_t>& axes, std::string* why) {
  for (int64_t a : axes) {
    const Dim& d = shape[static_cast<size_t>(a)];
    if (!d.is_static() || d.value != 1) {
      return Refuse(why, absl::StrCat(n.op_type(), " '", n.name(), "' reduces axis ", a, " of size ", d.ToString(),
                                      d.is_static() ? "" : " (not static)", ", not 1"));
    }
  }
  return true;
}

// ---- Reduce* over size-1 axes: x, or Squeeze(x) ---------------------------------------

// The plan: the axes to squeeze (canonical); empty: the result is x itself.
using Axes = std::vector<int64_t>;

Verdict<Axes> CheckReduceOverOnes(const Match& m) {
  const Node& n = *m.root();
  if (ReducesNothing(n)) return Axes{};
  std::optional<Shape> shape = ShapeOf(n.input(0));
  if (!shape) return Refuse(absl::StrCat(n.op_type(), " '", n.name(), "': the input rank is unknown"));
  std::string why;
  auto axes = reductions::ReducedAxes(n, static_cast<int64_t>(shape->size()), &why);
  if (!axes || !AllOnes(n, *shape, *axes, &why)) return Refuse(why);
  if (KeepDims(n)) return Axes{};
  return *axes;
}

StatusOr<std::vector<Value*>> ReplaceReduceOverOnes(const Match& m, Axes squeezed, Rewriter& rw) {
  const Node& n = *m.root();
  Value* x = n.input(0);
  if (squeezed.empty()) return std::vector<Value*>{x};
  if (rw.graph()->OpsetVersion("") >= 13) {
    // The reduction's own axes input when it has one (it may hold negative axes: Squeeze takes them too).
    Value* axes_input = n.num_inputs() > 1 && n.input(1) ? n.input(1) : rw.Int64s(squeezed);
    return std::vector<Value*>{rw.Op("Squeeze", {x, axes_input})};
  }
  return std::vector<Value*>{rw.Op("Squeeze", {x}, {Rewriter::AttrInts("axes", squeezed)})};
}

// ---- ConstantOfShape(static shape, value) --------------------------------------------

// A one-element tensor attribute `value` of `data_type` holding 1 (one=true) or 0.
StatusOr<onnx::AttributeProto> FillValue(int32_t data_type, bool one) {
  switch (data_type) {
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: break;
    default: return absl::InternalError("size-one fold: unexpected element type");
  }
  OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromDoubles(data_type, {1}, {one ? 1.0 : 0.0}));
  onnx::AttributeProto attr;
  attr.set_name("value");
  attr.set_type(onnx::AttributeProto::TENSOR);
  *attr.mutable_t() = t.ToProto("");
  attr.mutable_t()->clear_name();
  return attr;
}

Value* Filled(Rewriter& rw, const std::vector<int64_t>& dims, onnx::AttributeProto value) {
  return rw.Op("ConstantOfShape", {rw.Int64s(dims)}, {std::move(value)});
}

// ---- ArgMax/ArgMin over a size-1 axis: zeros ---------------------------------------------

// The output dims of an arg-reduction over `axis` (static input dims).
std::vector<int64_t> ArgOutputDims(const Node& n, std::vector<int64_t> dims, int64_t axis) {
  if (KeepDims(n)) dims[static_cast<size_t>(axis)] = 1;
  else dims.erase(dims.begin() + axis);
  return dims;
}

std::optional<int64_t> AxisAttr(const Node& n, int64_t rank, int64_t default_axis, std::string* why) {
  const Attribute* a = n.FindAttribute("axis");
  int64_t axis = a ? a->i(default_axis) : default_axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    Refuse(why, absl::StrCat(n.op_type(), " '", n.name(), "' has its axis out of range"));
    return std::nullopt;
  }
  return axis;
}

// The plan of the constant folds: the dims of the result.
using Dims = std::vector<int64_t>;

Verdict<Dims> CheckArgOverOne(const Match& m) {
  const Node& n = *m.root();
  std::optional<Shape> shape = ShapeOf(n.input(0));
  if (!shape) return Refuse(absl::StrCat(n.op_type(), " '", n.name(), "': the input rank is unknown"));
  std::string why;
  auto axis = AxisAttr(n, static_cast<int64_t>(shape->size()), 0, &why);
  if (!axis || !AllOnes(n, *shape, {*axis}, &why)) return Refuse(why);
  std::optional<Dims> dims = StaticDims(shape);
  if (!dims) {
    return Refuse(absl::StrCat(n.op_type(), " '", n.name(), "' has an output shape that is not static ",
                               ShapeToString(*shape), ": zeros of it would take more nodes"));
  }
  return ArgOutputDims(n, *dims, *axis);
}

StatusOr<std::vector<Value*>> ReplaceArgOverOne(const Match& m, Dims dims, Rewriter& rw) {
  OS_ASSIGN_OR_RETURN(onnx::AttributeProto zero, FillValue(onnx::TensorProto::INT64, false));
  return std::vector<Value*>{Filled(rw, dims, std::move(zero))};
}

// ---- Softmax / LogSoftmax over a size-1 axis: ones / zeros (assume_finite) ------------

bool IsFillable(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::DOUBLE || t == onnx::TensorProto::FLOAT16 ||
         t == onnx::TensorProto::BFLOAT16;
}

auto CheckSoftmaxOverOne(bool assume_finite) {
  return [assume_finite](const Match& m) -> Verdict<Dims> {
    const Node& n = *m.root();
    std::optional<Shape> shape = ShapeOf(n.input(0));
    if (!shape) return Refuse(absl::StrCat(n.op_type(), " '", n.name(), "': the input rank is unknown"));
    std::string why;
    const int64_t rank = static_cast<int64_t>(shape->size());
    // From opset 13 one axis (default -1); below, the input is flattened to 2-D at `axis`
    // (default 1) and normalized over every axis from it on.
    bool single_axis = n.graph()->OpsetVersion("") >= 13;
    auto axis = AxisAttr(n, rank, single_axis ? -1 : 1, &why);
    if (!axis) return Refuse(why);
    std::vector<int64_t> axes = {*axis};
    if (!single_axis)
      for (int64_t a = *axis + 1; a < rank; ++a) axes.push_back(a);
    if (!AllOnes(n, *shape, axes, &why)) return Refuse(why);
    if (!IsFillable(ElementType(n.input(0)))) {
      return Refuse(absl::StrCat(n.op_type(), " '", n.name(), "': the element type is unknown or not a float type"));
    }
    if (ElementType(n.input(0)) == onnx::TensorProto::BFLOAT16 && n.graph()->OpsetVersion("") < 20) {
      return Refuse(absl::StrCat(n.op_type(), " '", n.name(),
                                 "' is bfloat16: ConstantOfShape takes a bfloat16 value from opset 20"));
    }
    std::optional<Dims> dims = StaticDims(shape);
    if (!dims) {
      return Refuse(absl::StrCat(n.op_type(), " '", n.name(), "' has a shape that is not static ",
                                 ShapeToString(*shape), ": a constant of it would take more nodes"));
    }
    if (!assume_finite) {
      return Refuse(absl::StrCat(n.op_type(), " '", n.name(), "' is over one element: ", n.Is("Softmax") ? "1" : "0",
                                 " for finite inputs but NaN for NaN or infinite ones; folded only with "
                                 "assume-finite=true"));
    }
    return *dims;
  };
}

StatusOr<std::vector<Value*>> ReplaceSoftmaxOverOne(const Match& m, Dims dims, Rewriter& rw) {
  const Node& n = *m.root();
  OS_ASSIGN_OR_RETURN(onnx::AttributeProto value, FillValue(ElementType(n.input(0)), n.Is("Softmax")));
  return std::vector<Value*>{Filled(rw, dims, std::move(value))};
}

}  // namespace

void AddSizeOneAxisRules(std::vector<std::unique_ptr<RewriteRule>>& rules, bool assume_finite) {
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd"}) {
    Pattern p("reduce-over-ones");
    OpRef root = p.Op(op, {p.Any("x")}).AnyNumberOfInputs();
    rules.push_back(std::make_unique<PatternRule<Axes>>("reduce-over-ones", std::move(p), root.id(),
                                                        CheckReduceOverOnes, ReplaceReduceOverOnes));
  }
  for (const char* op : {"ArgMax", "ArgMin"}) {
    Pattern p("arg-over-one");
    OpRef root = p.Op(op, {p.Any("x")});
    rules.push_back(std::make_unique<PatternRule<Dims>>("arg-over-one", std::move(p), root.id(), CheckArgOverOne,
                                                        ReplaceArgOverOne));
  }
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    Pattern p("softmax-over-one");
    OpRef root = p.Op(op, {p.Any("x")});
    rules.push_back(std::make_unique<PatternRule<Dims>>("softmax-over-one", std::move(p), root.id(),
                                                        CheckSoftmaxOverOne(assume_finite), ReplaceSoftmaxOverOne));
  }
}

}  // namespace onnxsurgeon::reductions

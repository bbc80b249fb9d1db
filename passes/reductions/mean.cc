#include "passes/reductions/mean.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/rewrite/rule.h"

namespace onnxsurgeon::reductions {

using pattern::Pattern;
using pattern::ValueRef;

ValueRef MeanOf(Pattern& p, ValueRef v, std::string capture) {
  ValueRef sum = p.Op("ReduceSum", {v}).AnyNumberOfInputs();
  return p.Or({p.Op("ReduceMean", {v}).AnyNumberOfInputs(), p.Op("GlobalAveragePool", {v}),
               p.Op("Mul", {sum, p.Any()}).Commutative(), p.Op("Div", {sum, p.Any()})},
              std::move(capture));
}

const Node* ReductionOf(const Value* mean) {
  const Node* n = mean ? mean->producer() : nullptr;
  if (!n) return nullptr;
  if (n->Is("ReduceMean") || n->Is("GlobalAveragePool")) return n;
  if (!(n->Is("Mul") || n->Is("Div")) || n->num_inputs() != 2) return nullptr;
  for (size_t i = 0; i < 2; ++i) {
    if (i == 1 && n->Is("Div")) break;  // the sum is the dividend
    const Value* in = n->input(i);
    if (in && in->producer() && in->producer()->Is("ReduceSum")) return in->producer();
  }
  return nullptr;
}

std::optional<std::vector<int64_t>> ReducedAxes(const Node& reduce, int64_t rank, std::string* why) {
  std::vector<int64_t> axes;
  if (reduce.num_inputs() > 1 && reduce.input(1)) {
    std::optional<std::vector<int64_t>> ints = ConstantInt64s(reduce.input(1));
    if (!ints) {
      Refuse(why, absl::StrCat(reduce.op_type(), " '", reduce.name(), "' reduces over axes that are not a constant"));
      return std::nullopt;
    }
    axes = *ints;
  } else if (const Attribute* a = reduce.FindAttribute("axes")) {
    axes = a->ints();
  }
  if (rank < 0) {
    Refuse(why, absl::StrCat(reduce.op_type(), " '", reduce.name(), "': the input rank is unknown"));
    return std::nullopt;
  }
  if (axes.empty()) {
    const Attribute* noop = reduce.FindAttribute("noop_with_empty_axes");
    if (noop && noop->i(0) != 0) {
      Refuse(why, absl::StrCat(reduce.op_type(), " '", reduce.name(), "' reduces nothing (noop_with_empty_axes)"));
      return std::nullopt;
    }
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) {
      Refuse(why, absl::StrCat(reduce.op_type(), " '", reduce.name(), "' has an axis out of range"));
      return std::nullopt;
    }
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::optional<int64_t> ReducedCount(const Node& reduce, const Value* summed, std::string* why) {
  std::optional<Shape> shape = ShapeOf(summed);
  if (!shape) {
    Refuse(why, absl::StrCat("the rank of what ", reduce.op_type(), " '", reduce.name(), "' reduces is unknown"));
    return std::nullopt;
  }
  auto axes = ReducedAxes(reduce, static_cast<int64_t>(shape->size()), why);
  if (!axes) return std::nullopt;
  int64_t n = 1;
  for (int64_t a : *axes) {
    const Dim& d = (*shape)[static_cast<size_t>(a)];
    if (!d.is_static()) {
      Refuse(why, absl::StrCat(reduce.op_type(), " '", reduce.name(), "' sums over axis ", a, " of size ", d.ToString(),
                               ", which is not static: N is unknown"));
      return std::nullopt;
    }
    n *= d.value;
  }
  return n;
}

namespace {

// One unit in the last place, relative, of a float type; 0 for other types.
double RelativeUlp(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT16: return std::ldexp(1.0, -10);
    case onnx::TensorProto::BFLOAT16: return std::ldexp(1.0, -7);
    case onnx::TensorProto::FLOAT: return std::ldexp(1.0, -23);
    case onnx::TensorProto::DOUBLE: return std::ldexp(1.0, -52);
    default: return 0;
  }
}

}  // namespace

bool IsMeanFactor(const Value* factor, int64_t n, bool divides, std::string* why) {
  std::optional<ConstantData> c = GetConstant(factor);
  if (!c) return Refuse(why, absl::StrCat("the factor '", factor->name(), "' of the sum is not a constant"));
  double ulp = RelativeUlp(c->data_type);
  std::optional<double> value = c->is_scalar() ? c->ScalarAsDouble() : std::nullopt;
  if (ulp == 0 || !value) {
    return Refuse(why, absl::StrCat("the factor '", factor->name(), "' of the sum is not a float scalar"));
  }
  double want = divides ? static_cast<double>(n) : 1.0 / static_cast<double>(n);
  if (n <= 0 || std::abs(*value - want) > ulp * want) {
    return Refuse(why, absl::StrCat("the sum is ", divides ? "divided by " : "multiplied by ", *value, ", not ",
                                    divides ? "" : "1/", "N with N = ", n, " (the reduced elements)"));
  }
  return true;
}

bool IsAverage(const Value* mean, const Value* summed, std::string* why) {
  const Node* reduce = ReductionOf(mean);
  if (!reduce) return Refuse(why, absl::StrCat("'", mean->name(), "' is not a mean"));
  if (!reduce->Is("ReduceSum")) return true;
  const Node* scale = mean->producer();
  std::optional<int64_t> n = ReducedCount(*reduce, summed ? summed : reduce->input(0), why);
  if (!n) return false;
  const Value* factor = scale->input(0) == reduce->output(0) ? scale->input(1) : scale->input(0);
  return IsMeanFactor(factor, *n, scale->Is("Div"), why);
}

}  // namespace onnxsurgeon::reductions

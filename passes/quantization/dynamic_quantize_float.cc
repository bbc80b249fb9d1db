#include "passes/quantization/dynamic_quantize_float.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/dtypes.h"
#include "core/ir/shape.h"
#include "core/ir/value.h"

namespace onnxsurgeon::passes {
namespace {

// "MatMulInteger 'fc1'", or "a MatMulInteger" when the node has no name.
std::string Describe(const Node& n) {
  return n.name().empty() ? absl::StrCat("a ", n.op_type()) : absl::StrCat(n.op_type(), " '", n.name(), "'");
}

bool IsEightBit(int32_t t) { return t == onnx::TensorProto::INT8 || t == onnx::TensorProto::UINT8; }

// The consumer's weight as W - w_zero_point in float, or why not.
std::optional<IntegerConsumer> PlanConsumer(Node* n, const Value* zero_point, std::string* why) {
  const bool conv = n->Is("ConvInteger");
  const std::string what = Describe(*n);
  if (n->num_inputs() < 3 || n->input(2) != zero_point) {
    *why = absl::StrCat(what, " does not take the quantizer's zero point as a_zero_point");
    return std::nullopt;
  }
  std::optional<ConstantData> w = n->input(1) ? GetConstant(n->input(1)) : std::nullopt;
  if (!w || !IsEightBit(w->data_type)) {
    *why = absl::StrCat(what, ": its weight is not a constant int8/uint8 tensor");
    return std::nullopt;
  }
  if (conv ? w->dims.size() < 3 : w->dims.size() != 2) {
    *why = absl::StrCat(what, ": its weight has rank ", w->dims.size(), conv ? " (want >= 3)" : " (want 2)");
    return std::nullopt;
  }
  const int64_t outputs = conv ? w->dims[0] : w->dims[1];
  std::vector<double> zp(1, 0.0);
  if (n->num_inputs() > 3 && n->input(3)) {
    std::optional<ConstantData> z = GetConstant(n->input(3));
    if (!z || z->data_type != w->data_type || (z->num_elements() != 1 && z->num_elements() != outputs) ||
        z->dims.size() > 1) {
      *why = absl::StrCat(what, ": its weight zero point is not a constant scalar or one per output of its type");
      return std::nullopt;
    }
    zp = *z->AsDoubles();
  }
  IntegerConsumer c{n, *w->AsDoubles(), w->dims};
  const int64_t per_output = static_cast<int64_t>(c.weight.size()) / std::max<int64_t>(outputs, 1);
  std::vector<double> sums(outputs, 0.0);
  for (size_t i = 0; i < c.weight.size(); ++i) {
    // MatMulInteger: [K, N], output column i % N; ConvInteger: [M, C/g, k...], channel i / per_output.
    const int64_t o = conv ? static_cast<int64_t>(i) / per_output : static_cast<int64_t>(i) % outputs;
    c.weight[i] -= zp.size() == 1 ? zp[0] : zp[o];
    sums[o] += std::fabs(c.weight[i]);
  }
  for (int64_t o = 0; o < outputs; ++o) {
    if (255.0 * sums[o] <= kFloatExactIntegers) continue;
    const auto sum = static_cast<int64_t>(sums[o]);  // integers
    *why = absl::StrCat(what, ": a partial sum may reach 255 * ", sum, " = ", 255 * sum, " (output ", o,
                        "), above 2^24, where float32 stops holding every integer");
    return std::nullopt;
  }
  return c;
}

}  // namespace

std::optional<FloatDynamicQuantPlan> PlanFloatDynamicQuant(const Node& dql, std::string* why) {
  if (dql.num_inputs() != 1 || !dql.input(0) || dql.num_outputs() != 3) {
    *why = "it does not have one input and three outputs";
    return std::nullopt;
  }
  const Value* x = dql.input(0);
  if (ElementType(x) != onnx::TensorProto::FLOAT) {
    *why = ElementType(x) == 0
               ? absl::StrCat("the element type of '", x->name(), "' is unknown")
               : absl::StrCat("'", x->name(), "' has element type ", DataTypeName(ElementType(x)), ", not float");
    return std::nullopt;
  }
  const Value* y = dql.output(0);
  if (y->IsGraphOutput()) {
    *why = absl::StrCat("its quantized output '", y->name(), "' is a graph output");
    return std::nullopt;
  }
  FloatDynamicQuantPlan plan;
  for (const Use& use : y->uses()) {
    Node* n = use.node;
    if (use.input_index != 0 || !n->domain().empty() || !(n->Is("MatMulInteger") || n->Is("ConvInteger"))) {
      *why = absl::StrCat("'", y->name(), "' is read by ", Describe(*n), " (input ", use.input_index,
                          "), not as a MatMulInteger/ConvInteger's input 0");
      return std::nullopt;
    }
    std::optional<IntegerConsumer> c = PlanConsumer(n, dql.output(2), why);
    if (!c) return std::nullopt;
    plan.consumers.push_back(std::move(*c));
  }
  return plan;
}

}  // namespace onnxsurgeon::passes

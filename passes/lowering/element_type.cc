#include "passes/lowering/element_type.h"

#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/dtypes.h"
#include "core/ir/graph.h"

namespace onnxsurgeon::lowering {

int64_t Rank(const Value* v) {
  auto shape = ShapeOf(v);
  return shape ? static_cast<int64_t>(shape->size()) : -1;
}

void InferTypesIfNeeded(Model& model, std::string_view op_type) {
  auto needs = [op_type](const Model& m) {
    for (Node* n : m.graph().AllNodesRecursive())
      if (n->op_type() == op_type && n->domain().empty() && ElementType(n->input(0)) == 0) return true;
    return false;
  };
  TypeRequest request;  // as InferShapes(model, false): recorded in value_info
  request.infer.data_propagation = false;
  request.infer.max_payload_bytes = -1;
  (void)TypeFacts::Ensure(model, needs, request);
}

std::string WhyNotFloat(const Node& node, const Value* value) {
  int32_t t = ElementType(value);
  if (t != 0) return absl::StrCat("'", value->name(), "' has element type ", DataTypeName(t), ", not a float type");
  if (node.graph()->root()->function())
    return absl::StrCat("the element type of '", value->name(),
                        "' is unknown (function parameters are untyped: run inline-functions first)");
  return absl::StrCat("the element type of '", value->name(), "' is unknown (shape inference could not find it)");
}

bool IsFloatType(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::DOUBLE ||
         t == onnx::TensorProto::BFLOAT16;
}

}  // namespace onnxsurgeon::lowering

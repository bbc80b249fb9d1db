#include "passes/lowering/element_type.h"

#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"

namespace onnxsurgeon::lowering {

int32_t ElementType(const Value* value) {
  if (!value) return 0;
  if (value->has_type() && value->type()->has_tensor_type() && value->type()->tensor_type().elem_type() != 0)
    return value->type()->tensor_type().elem_type();
  if (value->initializer()) return value->initializer()->meta().data_type();
  if (auto c = GetConstant(value)) return c->data_type;
  return 0;
}

void InferTypesIfNeeded(Model& model, std::string_view op_type) {
  for (Node* n : model.graph().AllNodesRecursive()) {
    if (n->op_type() == op_type && n->domain().empty() && ElementType(n->input(0)) == 0) {
      (void)InferShapes(model, /*data_propagation=*/false);
      return;
    }
  }
}

bool IsFloatType(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::DOUBLE ||
         t == onnx::TensorProto::BFLOAT16;
}

}  // namespace onnxsurgeon::lowering

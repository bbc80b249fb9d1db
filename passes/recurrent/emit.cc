#include "passes/recurrent/emit.h"

#include "core/ir/tensor.h"

namespace onnxsurgeon::passes::recurrent {

StatusOr<Value*> Emitter::Floats(const std::vector<double>& values, std::vector<int64_t> dims, std::string_view hint) {
  OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromDoubles(type_, std::move(dims), values));
  return rw_.Constant(std::move(t), hint);
}

std::vector<Value*> Emitter::Split(Value* v, int64_t axis, const std::vector<int64_t>& sizes) {
  if (sizes.size() == 1) return {v};
  std::vector<onnx::AttributeProto> attrs = {Rewriter::AttrInt("axis", axis)};
  std::vector<Value*> inputs = {v};
  if (opset_ >= 13) inputs.push_back(rw_.Int64s(sizes));
  else attrs.push_back(Rewriter::AttrInts("split", sizes));
  Node* split = rw_.Create("Split", std::move(inputs), std::move(attrs), static_cast<int>(sizes.size()));
  std::vector<Value*> out;
  for (size_t i = 0; i < sizes.size(); ++i) out.push_back(split->output(i));
  return out;
}

StatusOr<Value*> Emitter::Pick(Value* v, int64_t i, int64_t axis) {
  OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromInt64s(onnx::TensorProto::INT64, {}, {i}));
  OS_ASSIGN_OR_RETURN(Value * index, rw_.Constant(std::move(t), "step"));
  return rw_.Op("Gather", {v, index}, {Rewriter::AttrInt("axis", axis)});
}

Value* Emitter::Reshape(Value* v, const std::vector<int64_t>& shape) {
  return rw_.Op("Reshape", {v, rw_.Int64s(shape)});
}

StatusOr<Value*> Emitter::Clip(Value* v, std::optional<float> clip) {
  if (!clip) return v;
  if (opset_ < 11) return rw_.Op("Clip", {v}, {Rewriter::AttrFloat("min", -*clip), Rewriter::AttrFloat("max", *clip)});
  OS_ASSIGN_OR_RETURN(Value * lo, rw_.ScalarFloat(-*clip, type_));
  OS_ASSIGN_OR_RETURN(Value * hi, rw_.ScalarFloat(*clip, type_));
  return rw_.Op("Clip", {v, lo, hi});
}

StatusOr<Value*> Emitter::Activation(const std::string& name, Value* v, std::optional<float> clip) {
  OS_ASSIGN_OR_RETURN(Value * x, Clip(v, clip));
  return rw_.Op(name, {x});
}

bool IsPlainActivation(const std::string& name) { return name == "Sigmoid" || name == "Tanh" || name == "Relu"; }

}  // namespace onnxsurgeon::passes::recurrent

// What adapters and decompositions share (step.h): small constants seen through
// reshaping ops, and the StepContext helpers that make constants and refuse.
#include <algorithm>

#include "passes/opset/schemas.h"
#include "passes/opset/step.h"

namespace onnxsurgeon::opset {

std::string DescribeNode(const Node& node) {
  return node.name().empty() ? absl::StrCat("<unnamed ", node.op_type(), ">") : node.name();
}

// ---------------------------------------------------------------- constants

namespace {
template <typename T>
std::optional<std::vector<T>> ConstantElements(const Value* v, int depth) {
  if (!v || depth > 8) return std::nullopt;
  if (auto c = GetConstant(v)) {
    if constexpr (std::is_same_v<T, int64_t>) return c->AsInt64s();
    else return c->AsDoubles();
  }
  Node* p = v->producer();
  if (!p || !CanonicalDomain(p->domain()).empty()) return std::nullopt;
  const std::string& op = p->op_type();
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" || op == "Identity")
    return ConstantElements<T>(p->input(0), depth + 1);
  if (op == "Cast") {
    int64_t to = p->GetInt("to", 0);
    bool integral = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32;
    if (!integral &&
        !(std::is_same_v<T, double> && (to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE)))
      return std::nullopt;
    auto inner = ConstantElements<T>(p->input(0), depth + 1);
    if (inner && integral)
      for (auto& x : *inner) x = static_cast<T>(static_cast<int64_t>(x));
    return inner;
  }
  if (op == "Concat") {
    std::vector<T> all;
    for (Value* in : p->inputs()) {
      auto part = ConstantElements<T>(in, depth + 1);
      if (!part) return std::nullopt;
      all.insert(all.end(), part->begin(), part->end());
    }
    return all;
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::vector<int64_t>> ConstantInts(const Value* v) { return ConstantElements<int64_t>(v, 0); }
std::optional<std::vector<double>> ConstantDoubles(const Value* v) { return ConstantElements<double>(v, 0); }

// ---------------------------------------------------------------- step helpers

int64_t StepContext::to_opset() const {
  // The `to` schema is in force from its since_version up to the next version's - 1.
  const auto& versions = Versions().at({domain, node->op_type()});
  auto it = std::upper_bound(versions.begin(), versions.end(), to->since_version());
  return it == versions.end() ? to->since_version() : *it - 1;
}

Status StepContext::Refuse(const std::string& why) const {
  return absl::FailedPreconditionError(absl::StrCat(node->op_type(), "-", from->since_version(), " -> ",
                                                    node->op_type(), "-", to->since_version(), ": ", why));
}

onnx::AttributeProto TensorAttr(const std::string& name, const onnx::TensorProto& t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = t;
  return a;
}

Value* MakeConstant(Rewriter& rewriter, Node* before, onnx::TensorProto tensor, const std::string& hint) {
  Graph* g = before->graph();
  if (g->root()->kind() == GraphKind::kFunctionBody) {
    tensor.clear_name();
    Node* c = rewriter.Create("Constant", {}, {TensorAttr("value", tensor)});
    return c->output(0);
  }
  StatusOr<Value*> c = rewriter.Constant(Tensor::FromProto(std::move(tensor)), hint);
  return c.ok() ? *c : nullptr;  // null like its neighbours: the callers' tensors always have a type
}

Value* StepContext::Int64s(const std::vector<int64_t>& v, bool scalar) {
  std::vector<int64_t> dims;
  if (!scalar) dims.push_back(static_cast<int64_t>(v.size()));
  auto t = Tensor::FromInt64s(onnx::TensorProto::INT64, std::move(dims), v);
  return t.ok() ? MakeConstant(*rewriter, node, t->ToProto(""), "ints") : nullptr;  // (a count mismatch: never)
}

// Null when `data_type` cannot hold the values exactly (a fraction for an integer type)
// or has no numeric elements: the caller refuses.
Value* StepContext::Scalar(double v, int32_t data_type) {
  auto t = Tensor::FromDoubles(data_type, {}, {v});
  return t.ok() ? MakeConstant(*rewriter, node, t->ToProto(""), "scalar") : nullptr;
}

Value* StepContext::Tensor1D(const std::vector<double>& v, int32_t data_type) {
  auto t = Tensor::FromDoubles(data_type, {static_cast<int64_t>(v.size())}, v);
  return t.ok() ? MakeConstant(*rewriter, node, t->ToProto(""), "values") : nullptr;
}

Node* StepContext::Emit(const std::string& op, std::vector<Value*> inputs, std::vector<onnx::AttributeProto> attributes,
                        int num_outputs) {
  Node* n = rewriter->Create(op, std::move(inputs), std::move(attributes), num_outputs, domain);
  emitted->push_back({n, to_opset()});
  return n;
}

}  // namespace onnxsurgeon::opset

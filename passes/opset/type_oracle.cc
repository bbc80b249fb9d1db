// The converter's types: the model's own value infos, onnx shape inference once before
// converting, and per-node inference for what the conversion creates (step.h).
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/ir/shape.h"
#include "onnx/shape_inference/implementation.h"
#include "passes/opset/schemas.h"
#include "passes/opset/step.h"

namespace onnxsurgeon::opset {

void TypeOracle::Build(const Model& model) {
  // Shape inference needs no weights: large initializers go in as metadata only. Where
  // it fails, types stay unknown and the checks that need them refuse.
  InferShapesOptions options;
  auto inferred = InferredCopy(model, options);
  if (inferred.ok()) {
    // Graph inputs first (a Loop body's inferred inputs), then what ForEachType gives.
    std::function<void(const onnx::GraphProto&)> inputs = [&](const onnx::GraphProto& g) {
      for (const auto& vi : g.input())
        if (vi.has_type())
          if (Value* v = inferred->ValueNamed(vi.name())) types_[v] = vi.type();
      for (const auto& n : g.node())
        for (const auto& a : n.attribute()) {
          if (a.has_g()) inputs(a.g());
          for (const auto& sg : a.graphs()) inputs(sg);
        }
    };
    inputs(inferred->proto.graph());
    inferred->ForEachType([&](Value* v, const onnx::TypeProto& t) { types_[v] = t; });
  }
  // Initializers (of every graph): their dims, as inference would give them. (Values
  // with a type of their own, function bodies' included, are answered by it: Find.)
  for (const Graph* g : model.AllGraphs())
    for (const Value* v : g->initializers()) {
      onnx::TypeProto tp;
      auto* tt = tp.mutable_tensor_type();
      tt->set_elem_type(v->initializer()->meta().data_type());
      auto* shape = tt->mutable_shape();
      for (int64_t d : v->initializer()->meta().dims()) shape->add_dim()->set_dim_value(d);
      types_.try_emplace(v, std::move(tp));
    }
}

const onnx::TypeProto* TypeOracle::Find(const Value* v) const {
  if (!v) return nullptr;
  if (v->has_type()) return v->type();
  auto it = types_.find(v);
  return it == types_.end() ? nullptr : &it->second;
}

int32_t TypeOracle::ElemType(const Value* v) const {
  if (v && v->initializer()) return v->initializer()->meta().data_type();
  const onnx::TypeProto* t = Find(v);
  return t && t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
}

std::optional<std::vector<int64_t>> TypeOracle::Dims(const Value* v) const {
  if (v && v->initializer()) {
    const auto& d = v->initializer()->meta().dims();
    return std::vector<int64_t>(d.begin(), d.end());
  }
  auto shape = ShapeOfType(Find(v));
  if (!shape) return std::nullopt;
  return DimsOrMinusOne(*shape);
}

void TypeOracle::Alias(const Value* old, const Value* replacement) {
  if (!old || !replacement || Find(replacement)) return;
  if (const onnx::TypeProto* t = Find(old)) types_[replacement] = *t;
}

void TypeOracle::InferNode(const Node& node, const std::string& domain, int64_t opset) {
  const onnx::OpSchema* s = SchemaAt(domain, node.op_type(), opset);
  if (!s || !s->has_type_and_shape_inference_function() || !node.subgraphs().empty()) return;
  onnx::NodeProto np;
  np.set_op_type(node.op_type());
  np.set_domain(node.domain());
  std::vector<onnx::TypeProto> input_types;
  input_types.reserve(node.num_inputs());
  std::vector<onnx::TensorProto> input_data;
  input_data.reserve(node.num_inputs());
  std::unordered_map<std::string, onnx::TypeProto*> types;
  std::unordered_map<std::string, const onnx::TensorProto*> data;
  for (Value* v : node.inputs()) {
    np.add_input(v ? v->name() : "");
    if (!v) continue;
    if (const onnx::TypeProto* t = Find(v)) {
      input_types.push_back(*t);
      types[v->name()] = &input_types.back();
    } else if (v->initializer()) {
      onnx::TypeProto tp;
      tp.mutable_tensor_type()->set_elem_type(ElemType(v));
      auto* shape = tp.mutable_tensor_type()->mutable_shape();
      for (int64_t d : v->initializer()->meta().dims()) shape->add_dim()->set_dim_value(d);
      input_types.push_back(tp);
      types[v->name()] = &input_types.back();
    }
    if (v->initializer() && v->initializer()->raw_size() <= 4096) {
      input_data.push_back(v->initializer()->ToProto(v->name()));
      data[v->name()] = &input_data.back();
    }
  }
  for (Value* v : node.outputs()) np.add_output(v ? v->name() : "");
  for (const Attribute& a : node.attributes()) *np.add_attribute() = a.proto();
  onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/false);
  onnx::shape_inference::InferenceContextImpl ctx(np, types, data, {}, options);
  try {
    s->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception&) {
    return;
  }
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    Value* v = node.output(i);
    const onnx::TypeProto* t = ctx.getOutputType(i);
    if (v && t && t->value_case() != onnx::TypeProto::VALUE_NOT_SET && !Find(v)) types_[v] = *t;
  }
}

int64_t TypeOracle::Rank(const Value* v) const {
  auto d = Dims(v);
  return d ? static_cast<int64_t>(d->size()) : -1;
}

}  // namespace onnxsurgeon::opset

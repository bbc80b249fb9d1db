#include "passes/inferred_types.h"

#include <exception>

#include "core/io/exporter.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace onnxsurgeon::passes {
namespace {

constexpr size_t kInlineBytes = 4096;  // small tensors (shapes, indices) keep their data

int32_t TensorElemType(const onnx::TypeProto& t) {
  return t.has_tensor_type() ? t.tensor_type().elem_type() : 0;
}

// Walks the IR graph and the inferred proto graph together (same node order).
void Collect(const Graph& g, const onnx::GraphProto& inferred, absl::flat_hash_map<const Value*, int32_t>& out) {
  absl::flat_hash_map<std::string, int32_t> by_name;
  for (const auto& vi : inferred.value_info())
    if (int32_t t = TensorElemType(vi.type())) by_name[vi.name()] = t;
  for (const auto& vi : inferred.output())
    if (int32_t t = TensorElemType(vi.type())) by_name[vi.name()] = t;
  int i = 0;
  for (Node* n : g.nodes()) {
    for (Value* v : n->outputs()) {
      if (!v) continue;
      auto it = by_name.find(v->name());
      if (it != by_name.end()) out[v] = it->second;
    }
    if (i >= inferred.node_size()) continue;
    const onnx::NodeProto& np = inferred.node(i++);
    auto subs = n->subgraphs();
    size_t k = 0;
    for (const auto& ap : np.attribute()) {
      if (ap.has_g() && k < subs.size()) Collect(*subs[k++], ap.g(), out);
      for (const auto& sg : ap.graphs())
        if (k < subs.size()) Collect(*subs[k++], sg, out);
    }
  }
}

}  // namespace

void InferredTypes::Infer() const {
  inferred_once_ = true;
  if (!model_ || !model_->has_graph()) return;
  const Model& model = *model_;
  ExportOptions options;
  options.main_initializer_writer = [](const Value& v, const Tensor& t, onnx::TensorProto* out) {
    if (!t.has_raw_bytes() || t.raw_bytes().size() <= kInlineBytes) {
      *out = t.ToProto(v.name());
      return;
    }
    // Metadata only, marked external so inference knows the data is not here.
    *out = t.meta();
    out->set_name(v.name());
    out->clear_external_data();
    out->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = out->add_external_data();
    location->set_key("location");
    location->set_value("onnxsurgeon-types-only");
  };
  onnx::ModelProto proto = ExportModel(model, options);
  try {
    onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), inference);
  } catch (const std::exception&) {
    return;  // unknown types: passes that need them change nothing
  }
  Collect(model.graph(), proto.graph(), inferred_);
}

int32_t InferredTypes::ElemType(const Value* v) const {
  if (!v) return 0;
  if (const onnx::TypeProto* t = v->type())
    if (int32_t e = TensorElemType(*t)) return e;
  if (const Tensor* t = v->initializer()) return t->meta().data_type();
  if (Node* p = v->producer()) {
    if (p->Is("Cast")) return static_cast<int32_t>(p->GetInt("to", 0));
    if (p->Is("CastLike")) return ElemType(p->input(1));
  }
  if (!inferred_once_) Infer();
  auto it = inferred_.find(v);
  return it == inferred_.end() ? 0 : it->second;
}

}  // namespace onnxsurgeon::passes

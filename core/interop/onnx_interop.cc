#include "core/interop/onnx_interop.h"

#include <exception>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "core/io/exporter.h"
#include "core/io/importer.h"
#include "core/ir/shape.h"
#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/printer.h"
#include "onnx/shape_inference/implementation.h"

namespace onnxsurgeon {

StatusOr<std::unique_ptr<Model>> ParseModelText(std::string_view text) {
  onnx::ModelProto proto;
  std::string owned(text);
  onnx::Common::Status status;
  try {  // onnx's parser throws on some malformed numbers ("1e-") instead of returning
    status = onnx::OnnxParser::Parse(proto, owned.c_str());
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("ONNX text: ", e.what()));
  }
  if (!status.IsOK()) return absl::InvalidArgumentError(absl::StrCat("ONNX text: ", status.ErrorMessage()));
  return ImportModel(std::move(proto));
}

std::string PrintModelText(const Model& model) { return onnx::ProtoToString(ExportModel(model)); }

Status CheckModel(const Model& model, bool full_check) { return CheckModelProto(ExportModel(model), full_check); }

namespace {
// One line: shape inference lists one error per line.
Status CheckerError(const std::exception& e) {
  std::string what = absl::StrReplaceAll(absl::StripTrailingAsciiWhitespace(e.what()), {{"\n", "; "}});
  return absl::InvalidArgumentError(absl::StrCat("onnx checker: ", what));
}
}  // namespace

Status CheckModelProto(const onnx::ModelProto& proto, bool full_check) {
  try {
    onnx::checker::check_model(proto, full_check);
  } catch (const std::exception& e) {
    return CheckerError(e);
  }
  return absl::OkStatus();
}

Status CheckModelProto(onnx::ModelProto&& proto, bool full_check) {
  try {
    onnx::checker::check_model(proto, /*full_check=*/false);
    if (full_check) {
      // What check_model's full_check runs, without its copy: strict, no data propagation.
      onnx::ShapeInferenceOptions options{/*check_type=*/true, /*error_mode=*/1, /*enable_data_propagation=*/false};
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
    }
  } catch (const std::exception& e) {
    return CheckerError(e);
  }
  return absl::OkStatus();
}

namespace {
// A tensor type without a shape (rank unknown) is what inference gives up with; the
// checker refuses such value_info entries, so they are not adopted.
bool Useful(const onnx::TypeProto& t) { return !t.has_tensor_type() || t.tensor_type().has_shape(); }

void ClearValueInfo(onnx::GraphProto& g) {
  g.clear_value_info();
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) ClearValueInfo(*a.mutable_g());
      for (auto& sg : *a.mutable_graphs()) ClearValueInfo(sg);
    }
  }
}

}  // namespace

// onnx's data propagation holds a Size's value as that many entries, and any 1-D input
// of known length N that an op with a propagation function reads (a Cast of a graph input
// declared float[2^31]) as N unknown entries: time and memory linear in N (23 GB, then the
// OOM killer). It runs only when every such count is below kMaxSizeData or unknown; other
// propagated values are bounded by ranks and by the inline payloads (max_payload_bytes).
// A 1-D value whose length only onnx's inference finds is not covered: it is bounded by
// the sizes the IR knows, which a hostile model can only grow through inputs it declares.
constexpr int64_t kMaxSizeData = int64_t{1} << 20;

static bool CountIsBounded(const std::optional<Shape>& shape) {
  auto dims = StaticDims(shape);
  if (!dims) return true;
  int64_t count = 1;
  for (int64_t d : *dims)
    if (d > 0 && __builtin_mul_overflow(count, d, &count)) return false;
  return count < kMaxSizeData;
}

static bool HasDataPropagation(const Model& model, const Node& n) {
  const int64_t version = model.OpsetVersion(n.domain());
  if (version <= 0) return false;
  const auto* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(version), n.domain());
  return schema != nullptr && schema->has_data_propagation_function();
}

static bool DataPropagationIsBounded(const Model& model) {
  for (const Graph* g : model.AllGraphs()) {
    for (const Node* n : g->nodes()) {
      if (n->Is("Size")) {
        if (!CountIsBounded(ShapeOf(n->input(0)))) return false;
        continue;
      }
      bool reads_long_vector = false;
      for (const Value* v : n->inputs()) {
        if (!v) continue;
        const std::optional<Shape> shape = ShapeOf(v);
        if (shape && shape->size() == 1 && !CountIsBounded(shape)) reads_long_vector = true;
      }
      if (reads_long_vector && HasDataPropagation(model, *n)) return false;
    }
  }
  return true;
}

namespace {

// `old` with the static sizes `found` knows where `old` has an unknown or symbolic dim,
// and with `found`'s symbol where that is a graph input's dim (`roots`) and `old` has
// another one or none, when `found` is a tensor type of the same element type and rank
// that agrees with every static size of `old` and adds at least one; else nullopt.
// A dim computed from a graph input's is that dim, whatever the declaration names it:
// onnx's inference without data propagation names each dim it cannot relate afresh (a
// model saved through it says unk__13 for its input's batch unk__106).
std::optional<onnx::TypeProto> Refined(const onnx::TypeProto& old, const onnx::TypeProto& found,
                                       const absl::flat_hash_set<std::string>* roots) {
  if (!old.has_tensor_type() || !found.has_tensor_type() || !old.tensor_type().has_shape() ||
      !found.tensor_type().has_shape() || old.tensor_type().elem_type() != found.tensor_type().elem_type())
    return std::nullopt;
  const auto& a = old.tensor_type().shape();
  const auto& b = found.tensor_type().shape();
  if (a.dim_size() != b.dim_size()) return std::nullopt;
  onnx::TypeProto out = old;
  bool added = false;
  for (int i = 0; i < a.dim_size(); ++i) {
    const bool a_static = a.dim(i).has_dim_value() && a.dim(i).dim_value() >= 0;
    const bool b_static = b.dim(i).has_dim_value() && b.dim(i).dim_value() >= 0;
    if (a_static && b_static && a.dim(i).dim_value() != b.dim(i).dim_value()) return std::nullopt;
    if (!a_static && b_static) {
      auto* d = out.mutable_tensor_type()->mutable_shape()->mutable_dim(i);
      d->clear_dim_param();
      d->set_dim_value(b.dim(i).dim_value());
      added = true;
    } else if (!a_static && roots && b.dim(i).has_dim_param() && roots->contains(b.dim(i).dim_param()) &&
               a.dim(i).dim_param() != b.dim(i).dim_param()) {
      out.mutable_tensor_type()->mutable_shape()->mutable_dim(i)->set_dim_param(b.dim(i).dim_param());
      added = true;
    }
  }
  if (!added) return std::nullopt;
  return out;
}

}  // namespace

bool AdoptType(Value* v, const onnx::TypeProto& type, const InferShapesOptions& options) {
  // Untyped values take the type, or (replace_types) every one that is not a graph input
  // or initializer, whose types are the model's own.
  // A tensor type without a shape counts as none: onnx writes one where it gives up on the
  // shape (a Reshape to a computed shape), and the local rules may still find the shape.
  if (!v) return false;
  const bool typed = v->has_type() && Useful(v->info()->type());
  if (options.refine_types && typed && !options.replace_types) {
    if (v->IsGraphInput() || v->IsInitializer()) return false;
    auto refined = Refined(v->info()->type(), type, options.root_symbols);
    if (!refined) {
      // A declaration the graph contradicts is stale (fix-declared-shapes' rule): what the
      // graph computes replaces it, else a later fold makes onnx's checker refuse the model.
      if (!Useful(type) || type.tensor_type().elem_type() != v->info()->type().tensor_type().elem_type() ||
          !ShapesContradict(v->info()->type(), type))
        return false;
      refined = type;
    }
    *v->mutable_info()->mutable_type() = *std::move(refined);
    return true;  // already listed (value_info or output), or typed in memory only
  }
  if (options.replace_types ? (v->IsGraphInput() || v->IsInitializer()) : (typed || !Useful(type))) return false;
  *v->mutable_info()->mutable_type() = type;
  if (options.record_value_info && !v->IsGraphOutput()) v->graph()->AddValueInfo(v);
  return true;
}

Value* InferredModel::ValueNamed(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : it->second;
}

StatusOr<InferredModel> InferredCopy(const Model& model, const InferShapesOptions& options) {
  ExportOptions export_options;
  const int64_t max_bytes = options.max_payload_bytes;
  export_options.main_initializer_writer = [max_bytes](const Value& v, const Tensor& t, onnx::TensorProto* out) {
    int64_t payload =
        t.has_raw_bytes() ? static_cast<int64_t>(t.raw_size()) : static_cast<int64_t>(t.meta().ByteSizeLong());
    if (max_bytes < 0 || payload <= max_bytes) {
      *out = t.ToProto(v.name());
      return;
    }
    // Type and dims only, marked external so inference knows the data is elsewhere
    // (an inline tensor without data would read as malformed).
    out->set_name(v.name());
    out->set_data_type(t.meta().data_type());
    *out->mutable_dims() = t.meta().dims();
    out->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = out->add_external_data();
    location->set_key("location");
    location->set_value("onnxsurgeon-types-only");
  };
  const ValueNames renamed = ScopeUniqueNames(model);
  if (!renamed.empty()) export_options.renamed = &renamed;
  export_options.input_symbols_as_analysed = true;
  InferredModel inferred;
  inferred.proto = ExportModel(model, export_options);
  if (options.drop_value_info) ClearValueInfo(*inferred.proto.mutable_graph());
  if (options.drop_output_shapes)
    for (auto& out : *inferred.proto.mutable_graph()->mutable_output())
      if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  try {
    onnx::ShapeInferenceOptions infer(/*check_type=*/false, /*strict_mode=*/0,
                                      options.data_propagation && DataPropagationIsBounded(model));
    onnx::shape_inference::InferShapes(inferred.proto, onnx::OpSchemaRegistry::Instance(), infer);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("shape inference: ", e.what()));
  }
  if (model.has_graph()) {
    for (const Graph* g : model.graph().SelfAndSubgraphs()) {
      auto define = [&](Value* v) {
        auto it = renamed.find(v);
        inferred.values.emplace(it == renamed.end() ? v->name() : it->second, v);
      };
      for (Value* v : g->inputs()) define(v);
      for (Value* v : g->initializers()) define(v);  // an input's initializer: the same value again
      for (const Node* n : g->nodes())
        for (Value* v : n->outputs())
          if (v) define(v);
    }
  }
  return inferred;
}

StatusOr<int> InferShapes(Model& model, const InferShapesOptions& options) {
  OS_ASSIGN_OR_RETURN(InferredModel inferred, InferredCopy(model, options));
  int gained = 0;
  inferred.ForEachType([&](Value* v, const onnx::TypeProto& type) { gained += AdoptType(v, type, options); });
  return gained;
}

StatusOr<int> InferShapes(Model& model, bool data_propagation) {
  InferShapesOptions options;
  options.data_propagation = data_propagation;
  options.max_payload_bytes = -1;
  return InferShapes(model, options);
}

}  // namespace onnxsurgeon

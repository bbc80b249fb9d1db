#include "core/pass/validate.h"

#include "onnx/shape_inference/implementation.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/eval/array.h"
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/io/model_io.h"
#include "core/io/validate.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace onnxsurgeon {
namespace {

// "node 'name' (Op)", or for an unnamed node "the Op node making 'y'".
std::string NodeName(const Node& n) {
  std::string op = absl::StrCat(n.domain().empty() ? "" : n.domain() + "::", n.op_type());
  if (!n.name().empty()) return absl::StrCat("node '", n.name(), "' (", op, ")");
  for (const Value* out : n.outputs())
    if (out) return absl::StrCat("the ", op, " node making '", out->name(), "'");
  return absl::StrCat("an unnamed ", op, " node");
}

std::string GraphName(const Graph& g) {
  if (g.function()) return absl::StrCat("function '", g.function()->name(), "'");
  if (g.parent_node()) return absl::StrCat("subgraph '", g.name(), "' of ", NodeName(*g.parent_node()));
  return absl::StrCat("graph '", g.name(), "'");
}

// The elem_type of a tensor-like type must be set: onnx refuses UNDEFINED.
Status CheckType(const Value& v, const Graph& g) {
  const onnx::TypeProto* t = v.type();
  if (!t) return absl::OkStatus();
  int32_t elem = -1;
  if (t->has_tensor_type()) elem = t->tensor_type().elem_type();
  else if (t->has_sparse_tensor_type()) elem = t->sparse_tensor_type().elem_type();
  if (elem == onnx::TensorProto::UNDEFINED)
    return absl::InvalidArgumentError(
        absl::StrCat(GraphName(g), ": value '", v.name(), "' has a tensor type without an element type"));
  return absl::OkStatus();
}

Status CheckInitializer(const Value& v, const Graph& g) {
  const Tensor& t = *v.initializer();
  const int32_t dtype = t.meta().data_type();
  if (dtype == onnx::TensorProto::UNDEFINED || !onnx::TensorProto_DataType_IsValid(dtype))
    return absl::InvalidArgumentError(
        absl::StrCat(GraphName(g), ": initializer '", v.name(), "' has data type ", dtype));
  std::vector<int64_t> dims(t.meta().dims().begin(), t.meta().dims().end());
  auto n = eval::NumElements(dims);
  if (!n.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(GraphName(g), ": initializer '", v.name(), "': ", n.status().message()));
  const size_t es = eval::ElementSize(dtype);
  if ((t.storage() == TensorStorage::kRaw || t.storage() == TensorStorage::kDeferred) && es &&
      t.raw_size() != static_cast<uint64_t>(*n) * es)
    return absl::InvalidArgumentError(absl::StrCat(GraphName(g), ": initializer '", v.name(), "' holds ", t.raw_size(),
                                                   " bytes, its dims need ", static_cast<uint64_t>(*n) * es));
  return absl::OkStatus();
}

const onnx::OpSchema* SchemaOf(const Node& n, int64_t version) {
  if (version <= 0) return nullptr;
  return onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(version),
                                        std::string(CanonicalDomain(n.domain())));
}

// What passes rely on when they read a node: its input and output counts (the loader's
// rule, CheckOperandCount) and its attribute types agree with the schema (when onnx knows
// the op).
Status CheckOperands(const Node& n, const onnx::OpSchema* schema) {
  if (!schema) return absl::OkStatus();
  Status inputs =
      CheckOperandCount(*schema, "input", static_cast<int>(n.num_inputs()), [&](int i) { return !n.input(i); });
  if (!inputs.ok()) return absl::InvalidArgumentError(absl::StrCat(NodeName(n), " ", inputs.message()));
  Status outputs =
      CheckOperandCount(*schema, "output", static_cast<int>(n.num_outputs()), [&](int i) { return !n.output(i); });
  if (!outputs.ok()) return absl::InvalidArgumentError(absl::StrCat(NodeName(n), " ", outputs.message()));
  const auto& specs = schema->attributes();
  for (const Attribute& a : n.attributes()) {
    const auto& proto = a.proto();
    if (!proto.ref_attr_name().empty()) continue;  // resolved when the function is inlined
    auto it = specs.find(proto.name());
    if (it == specs.end()) continue;  // an unknown attribute is the checker's business
    if (proto.type() != static_cast<int>(it->second.type))
      return absl::InvalidArgumentError(absl::StrCat(
          NodeName(n), ": attribute '", proto.name(), "' is ", onnx::AttributeProto::AttributeType_Name(proto.type()),
          ", the schema wants ",
          onnx::AttributeProto::AttributeType_Name(static_cast<onnx::AttributeProto::AttributeType>(it->second.type))));
  }
  return absl::OkStatus();
}

// CheckOperands, and every required attribute present.
Status CheckSchema(const Node& n, const onnx::OpSchema* schema) {
  if (!schema) return absl::OkStatus();
  OS_RETURN_IF_ERROR(CheckOperands(n, schema));
  for (const auto& [name, spec] : schema->attributes()) {
    if (spec.required && !n.FindAttribute(name))
      return absl::InvalidArgumentError(absl::StrCat(NodeName(n), " lacks its required attribute '", name, "'"));
  }
  return absl::OkStatus();
}

// What a graph may read: its own values and those of its enclosing graphs. Node order is
// not required (the loader accepts unsorted graphs and toposort fixes them; onnx's checker
// judges the order of an output).
struct Scope {
  const Graph* graph;
  const absl::flat_hash_set<const Value*>* defined;
  const Scope* outer;
  bool Defines(const Value* v) const {
    for (const Scope* s = this; s; s = s->outer)
      if (s->graph == v->graph()) return s->defined->contains(v);
    return false;
  }
};

Status CheckGraph(const Graph& g, const Scope* outer) {
  absl::flat_hash_set<const Value*> defined;
  const Scope scope{&g, &defined, outer};
  for (Value* v : g.inputs()) {
    defined.insert(v);
    if (Status s = CheckType(*v, g); !s.ok()) return s;
  }
  for (Value* v : g.initializers()) {
    defined.insert(v);
    if (Status s = CheckInitializer(*v, g); !s.ok()) return s;
  }
  for (Value* v : g.sparse_initializers()) defined.insert(v);
  for (Node* n : g.nodes()) {
    for (Value* out : n->outputs()) {
      if (!out) continue;
      if (!defined.insert(out).second)
        return absl::InvalidArgumentError(absl::StrCat(GraphName(g), ": '", out->name(), "' is defined twice"));
      if (Status s = CheckType(*out, g); !s.ok()) return s;
    }
  }
  for (Node* n : g.nodes()) {
    for (Value* in : n->inputs()) {
      if (in && !scope.Defines(in))
        return absl::InvalidArgumentError(absl::StrCat(GraphName(g), ": ", NodeName(*n), " reads '", in->name(),
                                                       "', which nothing in its scope defines"));
    }
    const int64_t version = g.OpsetVersion(n->domain());
    if (version < 0)
      return absl::InvalidArgumentError(absl::StrCat(GraphName(g), ": ", NodeName(*n), " is in domain '", n->domain(),
                                                     "', which has no opset import"));
    if (version > 0)
      if (Status s = CheckSchema(*n, SchemaOf(*n, version)); !s.ok())
        return absl::InvalidArgumentError(absl::StrCat(GraphName(g), ": ", s.message()));
    for (const Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(CheckGraph(*sub, &scope));
  }
  absl::flat_hash_set<const Value*> outputs;
  for (Value* v : g.outputs()) {
    if (!scope.Defines(v))
      return absl::InvalidArgumentError(absl::StrCat(GraphName(g), ": graph output '", v->name(), "' is not defined"));
    if (!outputs.insert(v).second)
      return absl::InvalidArgumentError(absl::StrCat(GraphName(g), ": '", v->name(), "' is a graph output twice"));
  }
  return absl::OkStatus();
}

}  // namespace

Status ValidateStructure(const Model& model) {
  if (!model.has_graph()) return absl::OkStatus();
  OS_RETURN_IF_ERROR(CheckGraph(model.graph(), nullptr));
  for (const auto& f : model.functions()) OS_RETURN_IF_ERROR(CheckGraph(f->body(), nullptr));
  return absl::OkStatus();
}

Status CheckModelWithOnnx(const Model& model) {
  ExportOptions options;
  options.main_initializer_writer = [](const Value& v, const Tensor& t, onnx::TensorProto* out) {
    constexpr size_t kInlineBytes = 4096;  // small payloads stay: shape inference reads them
    const size_t es = eval::ElementSize(t.meta().data_type());
    std::vector<int64_t> dims(t.meta().dims().begin(), t.meta().dims().end());
    auto n = eval::NumElements(dims);
    if (!t.has_raw_bytes() || t.raw_size() <= kInlineBytes || !es || !n.ok() ||
        t.raw_size() != static_cast<uint64_t>(*n) * es) {
      *out = t.ToProto(v.name());
      return;
    }
    *out = t.meta();
    out->set_name(v.name());
    out->clear_external_data();
    out->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = out->add_external_data();
    location->set_key("location");
    location->set_value("#onnxsurgeon-in-memory");
  };
  return CheckModelProto(ExportModel(model, options), /*full_check=*/true);
}

Status CheckShapesAcrossScopes(const Model& model) {
  bool nested = false;
  for (const Node* n : model.graph().nodes()) nested = nested || !n->subgraphs().empty();
  if (!nested) return absl::OkStatus();
  InferShapesOptions options;                // data propagation, small payloads
  auto copy = InferredCopy(model, options);  // scope-unique names, non-strict: no verdict yet
  if (!copy.ok()) return copy.status();
  try {
    onnx::ShapeInferenceOptions strict(/*check_type=*/true, /*error_mode=*/1, /*enable_data_propagation=*/true);
    onnx::shape_inference::InferShapes(copy->proto, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("shape inference across If/Loop bodies: ", e.what()));
  }
  return absl::OkStatus();
}

Status CheckModelFile(const std::string& path) {
  auto model = LoadModel(path);
  if (!model.ok()) return model.status();
  return CheckModelWithOnnx(**model);
}

}  // namespace onnxsurgeon

#include "core/inspect/inspect.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/inspect/declared_shapes.h"
#include "core/inspect/json.h"
#include "core/ir/dtypes.h"
#include "onnx/defs/schema.h"

namespace onnxsurgeon {
namespace {

std::string OpKey(const Node& n) { return QualifiedOpName(n.domain(), n.op_type()); }

std::string ShapeToString(const onnx::TensorShapeProto& shape) {
  std::vector<std::string> dims;
  for (const auto& d : shape.dim()) {
    if (d.has_dim_value()) dims.push_back(std::to_string(d.dim_value()));
    else if (d.has_dim_param()) dims.push_back(d.dim_param());
    else dims.push_back("?");
  }
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// Whether onnx's schema registry defines the domain's ops (the standard domains and the
// training ones): the nodes the report checks against a schema. Not IsStandardDomain
// (core/ir/domains.h), which leaves the training domains out.
bool OnnxHasSchemasFor(std::string_view domain) {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  return known.count(std::string(CanonicalDomain(domain))) > 0;
}

}  // namespace

std::string TypeToString(const onnx::TypeProto* type) {
  if (!type) return "?";
  switch (type->value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& t = type->tensor_type();
      return DataTypeNameLower(t.elem_type()) + (t.has_shape() ? ShapeToString(t.shape()) : "");
    }
    case onnx::TypeProto::kSparseTensorType:
      return "sparse " + DataTypeNameLower(type->sparse_tensor_type().elem_type());
    case onnx::TypeProto::kSequenceType: return "seq(" + TypeToString(&type->sequence_type().elem_type()) + ")";
    case onnx::TypeProto::kOptionalType: return "optional(" + TypeToString(&type->optional_type().elem_type()) + ")";
    case onnx::TypeProto::kMapType:
      return "map(" + DataTypeNameLower(type->map_type().key_type()) + "," +
             TypeToString(&type->map_type().value_type()) + ")";
    default: return "?";
  }
}

InspectReport Inspect(const Model& model, bool check_schemas) {
  InspectReport r;
  const onnx::ModelProto& p = model.proto();
  r.ir_version = p.ir_version();
  r.producer =
      p.producer_version().empty() ? p.producer_name() : absl::StrCat(p.producer_name(), " ", p.producer_version());
  for (const auto& op : p.opset_import())
    r.opsets.emplace_back(std::string(CanonicalDomain(op.domain())), op.version());

  const Graph& g = model.graph();
  r.node_count = static_cast<int64_t>(g.num_nodes());
  for (Value* v : g.inputs()) {
    r.inputs.push_back({v->name(), TypeToString(v->type())});
    if (v->IsInitializer()) r.initializers_as_inputs.push_back(v->name());
  }
  for (Value* v : g.outputs()) r.outputs.push_back({v->name(), TypeToString(v->type())});

  std::map<std::string, InspectReport::ExternalFile> external;
  std::map<std::string, InspectReport::Problem> problems;
  for (Graph* graph : model.AllGraphs()) {
    if (graph->kind() == GraphKind::kSubgraph) ++r.subgraph_count;
    for (Value* v : graph->initializers()) {
      const Tensor* t = v->initializer();
      ++r.initializer_count;
      r.initializer_bytes += t->raw_size();
      if (t->meta().data_location() == onnx::TensorProto::EXTERNAL) {
        std::string location = "?";
        for (const auto& kv : t->meta().external_data())
          if (kv.key() == "location") location = kv.value();
        auto& f = external[location];
        f.location = location;
        ++f.tensors;
        f.bytes += t->raw_size();
      }
    }
    const Function* fn_owner = nullptr;
    if (graph->kind() == GraphKind::kFunctionBody) {
      for (const auto& f : model.functions())
        if (&f->body() == graph) fn_owner = f.get();
    }
    for (Node* n : graph->nodes()) {
      ++r.total_node_count;
      if (graph->kind() != GraphKind::kFunctionBody) ++r.op_histogram[OpKey(*n)];
      if (!check_schemas) continue;  // the counts only (the CLI's run summary)
      std::string key = OpKey(*n);
      if (model.FindFunction(n->domain(), n->op_type(), n->proto().overload())) continue;
      if (!OnnxHasSchemasFor(n->domain())) {
        if (graph->kind() != GraphKind::kFunctionBody) ++r.custom_domain_ops[key];
        continue;
      }
      int64_t version = fn_owner ? fn_owner->OpsetVersion(n->domain()) : model.OpsetVersion(n->domain());
      if (version < 0) version = model.OpsetVersion(n->domain());
      std::string why;
      if (version < 0) {
        why = absl::StrCat("domain '", n->domain().empty() ? "ai.onnx" : n->domain(), "' is not imported");
      } else if (!onnx::OpSchemaRegistry::Schema(n->op_type(), static_cast<int>(version),
                                                 std::string(CanonicalDomain(n->domain())))) {
        std::string domain(CanonicalDomain(n->domain()));
        const auto* newest = onnx::OpSchemaRegistry::Schema(n->op_type(), domain);
        if (!newest) {
          why = absl::StrCat("no schema at opset ", version, " (unknown operator)");
        } else {
          // Walk down from the newest schema to the version that introduced the op.
          int first = newest->since_version();
          while (first > 1) {
            const auto* older = onnx::OpSchemaRegistry::Schema(n->op_type(), first - 1, domain);
            if (!older) break;
            first = older->since_version();
          }
          why = absl::StrCat("no schema at opset ", version, " (the op exists from opset ", first, ")");
        }
      }
      if (!why.empty()) {
        auto& prob = problems[key + "|" + why];
        prob.op = key;
        prob.why = why;
        ++prob.count;
      }
    }
  }
  for (const auto& f : model.functions())
    r.functions.push_back(absl::StrCat(f->domain(), "::", f->name(), " (", f->body().num_nodes(), " nodes)"));
  for (auto& [_, f] : external) r.external_data.push_back(f);
  for (auto& [_, prob] : problems) r.ops_without_schema.push_back(prob);
  r.quantization = CountQuantization(model);
  if (!check_schemas) return r;  // the counts only
  for (const DeclaredShapeConflict& c : DeclaredShapeConflicts(model)) {
    r.declared_shape_conflicts.push_back({c.value, c.graph_output ? "graph output" : "value_info",
                                          TypeToString(&c.declared), TypeToString(&c.inferred)});
  }
  return r;
}

std::string FormatInspectText(const InspectReport& r) {
  std::string out;
  absl::StrAppend(&out, "ir_version: ", r.ir_version, "\n");
  if (!r.producer.empty()) absl::StrAppend(&out, "producer:   ", r.producer, "\n");
  absl::StrAppend(&out, "opsets:     ");
  for (size_t i = 0; i < r.opsets.size(); ++i)
    absl::StrAppend(&out, i ? ", " : "", r.opsets[i].first.empty() ? "ai.onnx" : r.opsets[i].first, "=",
                    r.opsets[i].second);
  absl::StrAppend(&out, "\nnodes:      ", r.node_count, " in the main graph, ", r.total_node_count,
                  " with subgraphs and functions (", r.subgraph_count, " subgraphs)\n");
  absl::StrAppend(&out, "inputs:\n");
  for (const auto& io : r.inputs) absl::StrAppend(&out, "  ", io.name, ": ", io.type, "\n");
  absl::StrAppend(&out, "outputs:\n");
  for (const auto& io : r.outputs) absl::StrAppend(&out, "  ", io.name, ": ", io.type, "\n");
  absl::StrAppend(&out, "initializers: ", r.initializer_count, " (", r.initializer_bytes, " bytes)\n");
  if (!r.initializers_as_inputs.empty()) {
    absl::StrAppend(
        &out, "initializers also listed as graph inputs: ", r.initializers_as_inputs.size(), " (",
        absl::StrJoin(r.initializers_as_inputs.begin(),
                      r.initializers_as_inputs.begin() + std::min<size_t>(5, r.initializers_as_inputs.size()), ", "),
        r.initializers_as_inputs.size() > 5 ? ", ..." : "", ")\n");
  }
  if (r.quantization.any()) {
    absl::StrAppend(&out, "quantization: ", r.quantization.q, " QuantizeLinear, ", r.quantization.dq,
                    " DequantizeLinear, ", r.quantization.qoperator, " QOperator nodes, ", r.quantization.weight_bytes,
                    " bytes of quantized weights\n");
  }
  absl::StrAppend(&out, "op histogram:\n");
  std::vector<std::pair<std::string, int64_t>> ops(r.op_histogram.begin(), r.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, n] : ops) absl::StrAppend(&out, "  ", n, "\t", op, "\n");
  if (!r.custom_domain_ops.empty()) {
    absl::StrAppend(&out, "custom-domain ops:\n");
    for (const auto& [op, n] : r.custom_domain_ops) absl::StrAppend(&out, "  ", n, "\t", op, "\n");
  }
  if (!r.functions.empty()) {
    absl::StrAppend(&out, "local functions:\n");
    for (const auto& f : r.functions) absl::StrAppend(&out, "  ", f, "\n");
  }
  if (!r.external_data.empty()) {
    absl::StrAppend(&out, "external data:\n");
    for (const auto& f : r.external_data)
      absl::StrAppend(&out, "  ", f.location, ": ", f.tensors, " tensors, ", f.bytes, " bytes\n");
  }
  if (!r.ops_without_schema.empty()) {
    absl::StrAppend(&out, "ops with no schema at the model's opset:\n");
    for (const auto& p : r.ops_without_schema) absl::StrAppend(&out, "  ", p.count, "\t", p.op, ": ", p.why, "\n");
  }
  if (!r.declared_shape_conflicts.empty()) {
    absl::StrAppend(&out,
                    "declared shapes that contradict the computation (the checker rejects the model once its "
                    "inference proves it; repair with --pass ",
                    InspectReport::kShapeConflictFix, "):\n");
    for (const auto& c : r.declared_shape_conflicts)
      absl::StrAppend(&out, "  ", c.where, " '", c.value, "': declared ", c.declared, ", computed ", c.inferred, "\n");
  }
  return out;
}

std::string FormatInspectJson(const InspectReport& r) {
  Json opsets = Json::object();
  for (const auto& [d, v] : r.opsets) opsets[d.empty() ? "ai.onnx" : d] = v;
  auto ios = [](const std::vector<InspectReport::Io>& list) {
    Json out = Json::array();
    for (const auto& io : list) out.push_back({{"name", io.name}, {"type", io.type}});
    return out;
  };
  Json external = Json::array();
  for (const auto& f : r.external_data)
    external.push_back({{"location", f.location}, {"tensors", f.tensors}, {"bytes", f.bytes}});
  Json no_schema = Json::array();
  for (const auto& p : r.ops_without_schema) no_schema.push_back({{"op", p.op}, {"why", p.why}, {"count", p.count}});
  Json j;
  j["ir_version"] = r.ir_version;
  j["producer"] = r.producer;
  j["opsets"] = opsets;
  j["node_count"] = r.node_count;
  j["total_node_count"] = r.total_node_count;
  j["subgraph_count"] = r.subgraph_count;
  j["op_histogram"] = Json(r.op_histogram);
  j["inputs"] = ios(r.inputs);
  j["outputs"] = ios(r.outputs);
  j["initializer_count"] = r.initializer_count;
  j["initializer_bytes"] = r.initializer_bytes;
  j["initializers_as_inputs"] = r.initializers_as_inputs;
  j["custom_domain_ops"] = Json(r.custom_domain_ops);
  j["functions"] = r.functions;
  j["external_data"] = external;
  j["ops_without_schema"] = no_schema;
  j["quantization"] = {{"quantize_linear", r.quantization.q},
                       {"dequantize_linear", r.quantization.dq},
                       {"qoperator", r.quantization.qoperator},
                       {"quantized_weight_bytes", r.quantization.weight_bytes}};
  Json conflicts = Json::array();
  for (const auto& c : r.declared_shape_conflicts) {
    conflicts.push_back({{"value", c.value},
                         {"where", c.where},
                         {"declared", c.declared},
                         {"computed", c.inferred},
                         {"fix", InspectReport::kShapeConflictFix}});
  }
  j["declared_shape_conflicts"] = conflicts;
  return DumpJson(j);
}

}  // namespace onnxsurgeon

#include "core/inspect/declared_shapes.h"

#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/io/importer.h"
#include "core/ir/shape.h"

namespace onnxsurgeon {
namespace {}  // namespace

std::vector<DeclaredShapeConflict> DeclaredShapeConflicts(const Model& model) {
  // A copy without the declarations: graph outputs and main-graph value_info lose their
  // types; the local shape rules and onnx inference then say what is computed.
  onnx::ModelProto proto = ExportModel(model);
  std::map<std::string, onnx::TypeProto> declared_outputs, declared_infos;
  for (auto& out : *proto.mutable_graph()->mutable_output()) {
    if (out.type().has_tensor_type() && out.type().tensor_type().has_shape()) {
      declared_outputs[out.name()] = out.type();
      out.clear_type();  // untyped: the local rules only type values that have no type
    }
  }
  for (const auto& info : proto.graph().value_info()) {
    if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
      declared_infos[info.name()] = info.type();
  }
  proto.mutable_graph()->clear_value_info();
  std::vector<DeclaredShapeConflict> conflicts;
  if (declared_outputs.empty() && declared_infos.empty()) return conflicts;
  auto copy = ImportModel(std::move(proto));
  if (!copy.ok()) return conflicts;
  TypeRequest request;  // the local rules, then onnx inference for what they leave
  request.infer.record_value_info = false;
  (void)TypeFacts::Ensure(**copy, TypeFacts::AnyMissing,
                          request);  // a model inference cannot go through has no verdict here
  const Graph& g = (*copy)->graph();
  auto check = [&](const Value* v, const std::map<std::string, onnx::TypeProto>& declared, bool output) {
    auto it = v ? declared.find(v->name()) : declared.end();
    if (it == declared.end() || !v->type() || !ShapesContradict(it->second, *v->type())) return;
    conflicts.push_back({v->name(), output, it->second, *v->type()});
  };
  for (const Value* v : g.outputs()) check(v, declared_outputs, true);
  for (const Node* n : g.nodes())
    for (const Value* v : n->outputs()) check(v, declared_infos, false);
  return conflicts;
}

std::vector<DeclaredShapeConflict> RepairDeclaredShapes(Model& model) {
  std::vector<DeclaredShapeConflict> repaired;
  for (DeclaredShapeConflict& c : DeclaredShapeConflicts(model)) {
    Value* v = model.graph().FindValue(c.value);
    if (!v) continue;
    *v->mutable_info()->mutable_type() = c.inferred;
    repaired.push_back(std::move(c));
  }
  return repaired;
}

}  // namespace onnxsurgeon

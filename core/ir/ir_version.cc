#include "core/ir/ir_version.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "core/ir/dtypes.h"
#include "core/ir/function.h"
#include "core/ir/graph.h"
#include "core/ir/node.h"
#include "core/ir/value.h"

namespace onnxsurgeon {
namespace {

// onnx.helper.VERSION_TABLE (onnx 1.23): IR version, ai.onnx, ai.onnx.ml, ai.onnx.training.
struct VersionRow {
  int64_t ir, onnx, ml, training;
};
constexpr VersionRow kVersionTable[] = {
    {3, 1, 1, 0},   {3, 5, 1, 0},   {3, 6, 1, 0},   {3, 7, 1, 0},   {3, 8, 1, 0},   {4, 9, 1, 0},   {5, 10, 1, 0},
    {6, 11, 2, 0},  {7, 12, 2, 1},  {7, 13, 2, 1},  {7, 14, 2, 1},  {8, 15, 2, 1},  {8, 16, 3, 1},  {8, 17, 3, 1},
    {8, 18, 3, 1},  {9, 19, 3, 1},  {9, 20, 4, 1},  {10, 21, 5, 1}, {10, 22, 5, 1}, {11, 23, 5, 1}, {12, 24, 5, 1},
    {13, 25, 5, 1}, {13, 26, 5, 1}, {13, 27, 5, 1}, {14, 28, 5, 1},
};

// IR version that introduced an element type (onnx.in.proto's IR history); 3 for the rest.
int64_t TypeFloor(int32_t elem_type) {
  switch (elem_type) {
    case 16: return 4;  // BFLOAT16
    case 17:
    case 18:
    case 19:
    case 20: return 9;  // FLOAT8*
    case 21:
    case 22: return 10;  // UINT4, INT4
    case 23: return 11;  // FLOAT4E2M1
    case 24: return 12;  // FLOAT8E8M0
    case 25:
    case 26: return 13;  // UINT2, INT2
    case 27:
    case 28: return 14;  // FLOAT6*
    default: return 3;
  }
}

class FloorFinder {
 public:
  void Raise(int64_t ir, const std::string& why) {
    if (ir > floor_.ir) floor_ = {ir, why};
  }
  void ElemType(int32_t t, const std::string& where) {
    int64_t f = TypeFloor(t);
    if (f > floor_.ir) Raise(f, absl::StrCat(DataTypeName(t), " element type (", where, ")"));
  }
  void Type(const onnx::TypeProto& type, const std::string& where) {
    if (type.has_tensor_type()) ElemType(type.tensor_type().elem_type(), where);
    if (type.has_sequence_type()) Type(type.sequence_type().elem_type(), where);
    if (type.has_map_type()) Type(type.map_type().value_type(), where);
    if (type.has_optional_type()) {
      Raise(8, absl::StrCat("an Optional type (", where, ")"));
      Type(type.optional_type().elem_type(), where);
    }
    if (type.has_sparse_tensor_type()) {
      Raise(8, absl::StrCat("a SparseTensor type (", where, ")"));
      ElemType(type.sparse_tensor_type().elem_type(), where);
    }
  }
  void Attribute(const onnx::AttributeProto& a, const std::string& where) {
    if (a.has_t()) ElemType(a.t().data_type(), where);
    for (const auto& t : a.tensors()) ElemType(t.data_type(), where);
    if (a.has_sparse_tensor() || a.sparse_tensors_size() > 0)
      Raise(6, absl::StrCat("a sparse tensor attribute (", where, ")"));
    if (a.has_tp()) Type(a.tp(), where);
    // Cast's `to`, and the dtype attributes of generators, name element types too.
    if (a.type() == onnx::AttributeProto::INT &&
        (a.name() == "to" || a.name() == "dtype" || a.name() == "output_dtype"))
      ElemType(static_cast<int32_t>(a.i()), where);
  }
  void Graph(const onnxsurgeon::Graph& g, bool main) {
    const std::string gname = main ? "main graph" : absl::StrCat("graph '", g.name(), "'");
    if (g.proto().quantization_annotation_size() > 0) Raise(5, absl::StrCat("quantization annotations (", gname, ")"));
    if (!g.sparse_initializers().empty()) Raise(6, absl::StrCat("sparse initializers (", gname, ")"));
    for (Value* v : g.initializers()) {
      if (main && !v->IsGraphInput())
        Raise(4, absl::StrCat("initializers that are not graph inputs ('", v->name(), "')"));
      if (v->initializer())
        ElemType(v->initializer()->meta().data_type(), absl::StrCat("initializer '", v->name(), "'"));
    }
    auto value = [&](const Value* v) {
      if (v && v->type()) Type(*v->type(), absl::StrCat("value '", v->name(), "'"));
    };
    for (Value* v : g.inputs()) value(v);
    for (Value* v : g.outputs()) value(v);
    for (const auto& e : g.value_info()) value(e.value);
    for (Node* n : g.nodes()) {
      std::string where = absl::StrCat(n->op_type(), " node '", n->name(), "'");
      if (!n->proto().overload().empty()) Raise(10, absl::StrCat("a call of a function overload (", where, ")"));
      if (n->proto().device_configurations_size() > 0)
        Raise(11, absl::StrCat("multi-device configuration (", where, ")"));
      for (const auto& a : n->attributes()) Attribute(a.proto(), where);
      for (Value* v : n->outputs()) value(v);
    }
  }
  IrFloor result() const { return floor_; }

 private:
  IrFloor floor_;
};

}  // namespace

int64_t MinIrVersionForOpset(const std::string& domain_in, int64_t version) {
  std::string domain(CanonicalDomain(domain_in));
  for (const VersionRow& row : kVersionTable) {
    int64_t v = domain.empty() || domain == "ai.onnx.preview"                          ? row.onnx
                : domain == "ai.onnx.ml"                                               ? row.ml
                : domain == "ai.onnx.training" || domain == "ai.onnx.preview.training" ? row.training
                                                                                       : -1;
    if (v < 0) return -1;
    if (v >= version) return row.ir;
  }
  return kVersionTable[std::size(kVersionTable) - 1].ir;  // newer than onnx knows: the newest
}

IrFloor MinIrVersion(const Model& model) {
  FloorFinder f;
  for (const auto& imp : model.proto().opset_import()) {
    int64_t ir = MinIrVersionForOpset(imp.domain(), imp.version());
    if (ir > 0)
      f.Raise(ir, absl::StrCat("opset import ", imp.domain().empty() ? "ai.onnx" : imp.domain(), " ", imp.version()));
  }
  if (model.proto().training_info_size() > 0) f.Raise(7, "training_info");
  if (model.proto().configuration_size() > 0) f.Raise(11, "multi-device configurations");
  f.Graph(model.graph(), /*main=*/true);
  for (Graph* g : model.AllGraphs()) {
    if (g != &model.graph()) f.Graph(*g, /*main=*/false);
  }
  for (const auto& fn : model.functions()) {
    std::string name = absl::StrCat("function ", fn->domain(), "::", fn->name());
    f.Raise(8, absl::StrCat("model-local functions (", name, ")"));
    for (const auto& imp : fn->proto().opset_import()) {
      int64_t ir = MinIrVersionForOpset(imp.domain(), imp.version());
      if (ir > 0)
        f.Raise(ir, absl::StrCat("opset import ", imp.domain().empty() ? "ai.onnx" : imp.domain(), " ", imp.version(),
                                 " of ", name));
    }
    if (fn->proto().attribute_proto_size() > 0) f.Raise(9, absl::StrCat("attribute defaults (", name, ")"));
    if (!fn->proto().overload().empty()) f.Raise(10, absl::StrCat("an overload (", name, ")"));
    if (fn->proto().value_info_size() > 0) f.Raise(10, absl::StrCat("value_info (", name, ")"));
  }
  return f.result();
}

StatusOr<int64_t> LowerIrVersion(Model& model, int64_t max_ir) {
  IrFloor floor = MinIrVersion(model);
  if (max_ir >= 0 && floor.ir > max_ir) {
    return absl::FailedPreconditionError(absl::StrCat("the target reads IR version <= ", max_ir,
                                                      ", and the model needs ", floor.ir, " for ", floor.why));
  }
  model.mutable_proto().set_ir_version(floor.ir);
  return floor.ir;
}

std::vector<std::string> RemoveUnusedOpsetImports(Model& model) {
  auto prune = [](google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>* imports,
                  const std::set<std::string>& used, std::vector<std::string>* removed) {
    for (int i = imports->size() - 1; i >= 0; --i) {
      std::string domain(CanonicalDomain(imports->Get(i).domain()));
      if (domain.empty() || used.count(domain)) continue;
      if (removed) removed->push_back(domain);
      imports->DeleteSubrange(i, 1);
    }
  };
  std::set<std::string> used = NodeDomains(model.graph());
  for (auto& fn : model.mutable_functions()) {
    std::set<std::string> fn_used = NodeDomains(fn->body());
    // A call of another function needs that function's domain imported in this body.
    prune(fn->mutable_proto().mutable_opset_import(), fn_used, nullptr);
  }
  // A function's domain stays imported while the function is defined and called; the
  // calls are nodes, counted above. The bodies' own ops count as uses too.
  for (const auto& fn : model.functions()) used.merge(NodeDomains(fn->body()));
  std::vector<std::string> removed;
  prune(model.mutable_proto().mutable_opset_import(), used, &removed);
  return removed;
}

}  // namespace onnxsurgeon

// extract-constants: Constant nodes become initializers (to=initializer, the default), or
// initializers become Constant nodes (to=constant), for targets that prefer one or the other.
// Names are kept: the initializer is named like the Constant's output, and back.
//
// to=initializer handles every attribute form of Constant (value, value_float(s),
// value_int(s), value_string(s)); it leaves Constants whose output is a graph output (some
// runtimes reject an initializer as an output), sparse_value and attribute references
// (function bodies, which cannot hold initializers, are skipped anyway), and models with
// ir_version < 4 (initializers there must be graph inputs). Constants inside If/Loop/Scan
// bodies become initializers of that body.
// to=constant turns every initializer that is not a graph input (overridable) into a
// Constant node at the start of its graph; sparse initializers stay.
//
// keep-skip-operands=true (simplify's) leaves a Constant that is the skip operand of a
// residual Add before a LayerNormalization (passes/fold/skip_operand.h): onnxruntime's
// SkipLayerNormalization fusion refuses an initializer there.
//
// Options:
//   to=initializer|constant    the direction (default initializer)
//   keep-skip-operands         leave skip-operand Constants (default false)
//
// Before (to=initializer):  k = Constant<value_ints=[1, -1]>(); Y = Reshape(X, k)
// After:                    <int64[2] k = {1, -1}> Y = Reshape(X, k)
#include <optional>

#include "core/rewrite/rewriter.h"
#include "passes/fold/skip_operand.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using T = onnx::TensorProto;

// The Constant node's tensor, or nullopt for the forms left alone.
std::optional<onnx::TensorProto> ConstantTensor(const Node& n) {
  if (n.attributes().size() != 1) return std::nullopt;
  const Attribute& a = n.attributes().front();
  if (a.is_ref()) return std::nullopt;
  const onnx::AttributeProto& p = a.proto();
  // The attribute's type must be the one its name says (a `value` holding a GRAPH is not
  // a tensor); the schema check refuses such nodes, this keeps the pass safe without it.
  static const std::pair<std::string_view, onnx::AttributeProto::AttributeType> kForms[] = {
      {"value", onnx::AttributeProto::TENSOR},         {"value_float", onnx::AttributeProto::FLOAT},
      {"value_floats", onnx::AttributeProto::FLOATS},  {"value_int", onnx::AttributeProto::INT},
      {"value_ints", onnx::AttributeProto::INTS},      {"value_string", onnx::AttributeProto::STRING},
      {"value_strings", onnx::AttributeProto::STRINGS}};
  bool typed = false;
  for (const auto& [name, type] : kForms) typed |= a.name() == name && p.type() == type;
  if (!typed) return std::nullopt;
  onnx::TensorProto t;
  if (a.name() == "value") {
    t = p.t();
    if (t.data_location() == T::EXTERNAL) return std::nullopt;
    t.clear_name();
  } else if (a.name() == "value_float") {
    t.set_data_type(T::FLOAT);
    t.add_float_data(p.f());
  } else if (a.name() == "value_floats") {
    t.set_data_type(T::FLOAT);
    t.add_dims(p.floats_size());
    *t.mutable_float_data() = p.floats();
  } else if (a.name() == "value_int") {
    t.set_data_type(T::INT64);
    t.add_int64_data(p.i());
  } else if (a.name() == "value_ints") {
    t.set_data_type(T::INT64);
    t.add_dims(p.ints_size());
    *t.mutable_int64_data() = p.ints();
  } else if (a.name() == "value_string") {
    t.set_data_type(T::STRING);
    t.add_string_data(p.s());
  } else if (a.name() == "value_strings") {
    t.set_data_type(T::STRING);
    t.add_dims(p.strings_size());
    *t.mutable_string_data() = p.strings();
  } else {
    return std::nullopt;  // sparse_value
  }
  return t;
}

// Given a Constant node. Execute replaces it by an initializer of the same name.
Status ConstantToInitializer(Graph& g, Node* n, onnx::TensorProto tensor) {
  Value* out = n->output(0);
  std::string name = out->name();
  Rewriter rw;
  rw.SetRule("extract-constants");
  OS_ASSIGN_OR_RETURN(Value * init, rw.AddInitializer(&g, g.UniqueName(name), Tensor::FromProto(std::move(tensor))));
  OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(out, init, GraphOutputs::kRefuse));
  OS_RETURN_IF_ERROR(rw.EraseNode(n));
  return init->SetName(name);
}

// Given an initializer and a node of its graph (null: the end). Execute replaces the
// initializer by a Constant node of the same name, placed before that node.
Status InitializerToConstant(Graph& g, Value* init, Node* before) {
  std::string name = init->name();
  onnx::AttributeProto value;
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  *value.mutable_t() = init->initializer()->ToProto("");
  value.mutable_t()->clear_name();
  Rewriter rw;
  rw.SetRule("extract-constants");
  if (before) rw.SetInsertionPoint(before);
  else rw.SetInsertionPointAtEnd(&g);
  // Named after the initializer it replaces, stamped with the pass (kProvenanceKey).
  Value* out = rw.Create("Constant", {}, {std::move(value)}, 1, "", name)->output(0);
  // A graph output moves to `out` with its name; other readers are rewired.
  OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(init, out, GraphOutputs::kTakeValue));
  OS_RETURN_IF_ERROR(rw.RemoveInitializer(init));
  if (out->name() != name) OS_RETURN_IF_ERROR(out->SetName(name));
  return absl::OkStatus();
}

class ExtractConstantsPass : public Pass {
 public:
  ExtractConstantsPass(bool to_initializer, bool keep_skip_operands)
      : to_initializer_(to_initializer), keep_skip_operands_(keep_skip_operands) {}

  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    if (!model.has_graph()) return result;
    if (to_initializer_ && model.proto().ir_version() < 4) {
      result.counts["skipped: ir_version < 4 needs initializers listed as inputs"] = 1;  // not a change
      return result;
    }
    // Function bodies are skipped (they cannot hold initializers).
    OS_RETURN_IF_ERROR(RunOnGraph(model.graph(), result));
    return result;
  }

 private:
  // The graph, then the subgraphs of the nodes that remain: erasing a Constant frees any
  // subgraph it owns, so no list of graphs is computed ahead.
  Status RunOnGraph(Graph& g, PassResult& result) {
    if (to_initializer_) {
      for (Node* n = g.first_node(); n;) {
        Node* next = n->next();
        if (n->Is("Constant") && n->num_outputs() == 1 && n->output(0) && !n->output(0)->IsGraphOutput()) {
          if (keep_skip_operands_ && IsSkipNormOperand(n->output(0))) {
            n = next;
            continue;
          }
          if (auto tensor = ConstantTensor(*n)) {
            OS_RETURN_IF_ERROR(ConstantToInitializer(g, n, std::move(*tensor)));
            result.Count("constants-to-initializers");
          }
        }
        n = next;
      }
    } else {
      std::vector<Value*> initializers = g.initializers();  // copy: the list shrinks
      Node* first = g.first_node();                         // Constants go before it, in initializer order
      for (Value* v : initializers) {
        if (v->IsGraphInput()) continue;
        OS_RETURN_IF_ERROR(InitializerToConstant(g, v, first));
        result.Count("initializers-to-constants");
      }
    }
    for (Node* n : g.nodes())
      for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(RunOnGraph(*sub, result));
    return absl::OkStatus();
  }

  bool to_initializer_;
  bool keep_skip_operands_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateExtractConstantsPass(const PassOptions& o) {
  return std::make_unique<ExtractConstantsPass>(o.String("to") == "initializer", o.Bool("keep-skip-operands"));
}

}  // namespace onnxsurgeon::passes

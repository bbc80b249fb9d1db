#include "core/io/exporter.h"

namespace onnxsurgeon {

class GraphExporter {
 public:
  static void ExportGraph(const Graph& g, onnx::GraphProto* out, const TensorWriter* writer) {
    const_cast<Graph&>(g).Compact();
    *out = g.proto_;
    out->mutable_input()->Reserve(static_cast<int>(g.inputs_.size()));
    for (Value* v : g.inputs_) WriteInfo(*v, nullptr, out->add_input());
    for (Value* v : g.initializers_) {
      onnx::TensorProto* tp = out->add_initializer();
      if (writer && *writer) {
        (*writer)(*v, *v->initializer_, tp);
      } else {
        *tp = v->initializer_->ToProto(v->name_);
      }
    }
    for (Value* v : g.sparse_initializers_) {
      onnx::SparseTensorProto* sp = out->add_sparse_initializer();
      *sp = *v->sparse_initializer_;
      sp->mutable_values()->set_name(v->name_);
    }
    out->mutable_node()->Reserve(static_cast<int>(g.num_nodes_));
    for (Node* n : g.nodes()) ExportNode(*n, out->add_node());
    for (size_t i = 0; i < g.outputs_.size(); ++i)
      WriteInfo(*g.outputs_[i], g.output_info_[i].get(), out->add_output());
    for (const Graph::ValueInfoEntry& e : g.value_info_) {
      onnx::ValueInfoProto* vi = out->add_value_info();
      if (e.value) {
        WriteInfo(*e.value, e.proto.get(), vi);
      } else {
        *vi = *e.proto;
      }
    }
  }

  static void ExportFunction(const Function& f, onnx::FunctionProto* out) {
    const Graph& g = f.body();
    const_cast<Graph&>(g).Compact();
    *out = f.proto_;
    for (Value* v : g.inputs_) out->add_input(v->name_);
    for (Node* n : g.nodes()) ExportNode(*n, out->add_node());
    for (Value* v : g.outputs_) out->add_output(v->name_);
    for (const Graph::ValueInfoEntry& e : g.value_info_) {
      onnx::ValueInfoProto* vi = out->add_value_info();
      if (e.value) {
        WriteInfo(*e.value, e.proto.get(), vi);
      } else {
        *vi = *e.proto;
      }
    }
  }

 private:
  static void WriteInfo(const Value& v, const onnx::ValueInfoProto* override_info, onnx::ValueInfoProto* out) {
    if (override_info) {
      *out = *override_info;
    } else if (v.info_) {
      *out = *v.info_;
    }
    out->set_name(v.name_);
  }

  static void ExportNode(const Node& n, onnx::NodeProto* out) {
    *out = n.proto_;
    out->mutable_input()->Reserve(static_cast<int>(n.inputs_.size()));
    for (Value* v : n.inputs_) out->add_input(v ? v->name_ : std::string());
    for (Value* v : n.outputs_) out->add_output(v ? v->name_ : std::string());
    for (const Attribute& a : n.attributes_) {
      onnx::AttributeProto* ap = out->add_attribute();
      *ap = a.proto();
      const auto& graphs = a.graphs();
      if (graphs.empty()) continue;
      size_t first = 0;
      if (a.first_graph_in_g()) ExportGraph(*graphs[first++], ap->mutable_g(), nullptr);
      for (size_t i = first; i < graphs.size(); ++i) ExportGraph(*graphs[i], ap->add_graphs(), nullptr);
    }
  }
};

onnx::ModelProto ExportModel(const Model& model, const ExportOptions& options) {
  onnx::ModelProto out = model.proto();
  if (model.has_graph()) {
    const TensorWriter* writer = options.main_initializer_writer ? &options.main_initializer_writer : nullptr;
    GraphExporter::ExportGraph(model.graph(), out.mutable_graph(), writer);
  }
  for (const auto& f : model.functions()) GraphExporter::ExportFunction(*f, out.add_functions());
  return out;
}

onnx::GraphProto ExportGraph(const Graph& graph) {
  onnx::GraphProto out;
  GraphExporter::ExportGraph(graph, &out, nullptr);
  return out;
}

}  // namespace onnxsurgeon

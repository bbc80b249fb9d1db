#include "core/io/importer.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "google/protobuf/util/message_differencer.h"

namespace onnxsurgeon {
namespace {

bool SameProto(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

std::string Describe(const Graph* g) {
  switch (g->kind()) {
    case GraphKind::kMain: return absl::StrCat("main graph '", g->name(), "'");
    case GraphKind::kFunctionBody: return absl::StrCat("function '", g->name(), "'");
    case GraphKind::kSubgraph:
      return absl::StrCat("subgraph '", g->name(), "' of node '", g->parent_node()->name(), "' (",
                          g->parent_node()->op_type(), ")");
  }
  return "graph";
}

std::string DescribeNode(const Node* n) {
  return absl::StrCat("node '", n->name(), "' (", n->domain().empty() ? "" : n->domain() + "::", n->op_type(), ")");
}

}  // namespace

class GraphImporter {
 public:
  GraphImporter(Model* model, ImportOptions options) : model_(model), options_(std::move(options)) {}

  Status ImportMain(onnx::GraphProto proto) {
    const std::vector<std::optional<std::string_view>>* raw =
        options_.main_initializer_raw.empty() ? nullptr : &options_.main_initializer_raw;
    return ImportGraph(std::move(proto), &model_->graph(), raw);
  }

  Status ImportFunction(onnx::FunctionProto proto, Function* fn) {
    Graph* g = fn->body_.get();
    auto inputs = std::move(*proto.mutable_input());
    auto outputs = std::move(*proto.mutable_output());
    auto nodes = std::move(*proto.mutable_node());
    auto value_info = std::move(*proto.mutable_value_info());
    proto.clear_input();
    proto.clear_output();
    proto.clear_node();
    proto.clear_value_info();
    fn->proto_ = std::move(proto);
    DropRepeatedImports(*fn->proto_.mutable_opset_import());
    g->proto_.set_name(fn->proto_.name());  // for messages; never exported
    for (std::string& name : inputs) {
      if (g->FindValue(name)) {
        return absl::InvalidArgumentError(absl::StrCat(Describe(g), " lists input '", name, "' twice"));
      }
      Value* v = g->NewValue(std::move(name));
      v->is_graph_input_ = true;
      g->inputs_.push_back(v);
    }
    OS_RETURN_IF_ERROR(ImportNodes(g, std::move(nodes)));
    for (std::string& name : outputs) {
      Value* v = g->FindValue(name);
      if (!v) {
        return absl::InvalidArgumentError(absl::StrCat(Describe(g), " output '", name, "' is not defined in its body"));
      }
      g->AddOutput(MutationKey(), v);
    }
    ImportValueInfo(g, std::move(value_info));
    return g->CheckAcyclic();
  }

  static StatusOr<std::unique_ptr<Model>> Run(onnx::ModelProto proto, ImportOptions options) {
    auto model = std::make_unique<Model>();
    GraphImporter importer(model.get(), std::move(options));
    bool had_graph = proto.has_graph();
    onnx::GraphProto graph = std::move(*proto.mutable_graph());
    auto functions = std::move(*proto.mutable_functions());
    proto.clear_graph();
    proto.clear_functions();
    model->proto_ = std::move(proto);
    DropRepeatedImports(*model->proto_.mutable_opset_import());
    model->had_graph_ = had_graph;
    for (onnx::FunctionProto& fp : functions) {
      auto fn = std::make_unique<Function>(model.get());
      Function* raw = fn.get();
      model->functions_.push_back(std::move(fn));
      OS_RETURN_IF_ERROR(importer.ImportFunction(std::move(fp), raw));
    }
    OS_RETURN_IF_ERROR(importer.ImportMain(std::move(graph)));
    return model;
  }

 private:
  // An opset import repeated for the same domain ("" and "ai.onnx" are one) keeps its
  // first entry: skl2onnx writes agreeing duplicates, which onnx's checker and onnxruntime
  // accept; the model is saved with one. (Load-time validation refuses ones that disagree.)
  static void DropRepeatedImports(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
    absl::flat_hash_set<std::string> seen;
    int kept = 0;
    for (int i = 0; i < imports.size(); ++i) {
      std::string domain(CanonicalDomain(imports[i].domain()));
      if (!seen.insert(domain).second) continue;
      if (kept != i) imports.SwapElements(kept, i);
      ++kept;
    }
    while (imports.size() > kept) imports.RemoveLast();
  }

  Status ImportGraph(onnx::GraphProto proto, Graph* g, const std::vector<std::optional<std::string_view>>* raw) {
    auto inputs = std::move(*proto.mutable_input());
    auto outputs = std::move(*proto.mutable_output());
    auto initializers = std::move(*proto.mutable_initializer());
    auto sparse = std::move(*proto.mutable_sparse_initializer());
    auto nodes = std::move(*proto.mutable_node());
    auto value_info = std::move(*proto.mutable_value_info());
    proto.clear_input();
    proto.clear_output();
    proto.clear_initializer();
    proto.clear_sparse_initializer();
    proto.clear_node();
    proto.clear_value_info();
    g->proto_ = std::move(proto);

    for (onnx::ValueInfoProto& vi : inputs) {
      if (g->FindValue(vi.name())) {
        return absl::InvalidArgumentError(absl::StrCat(Describe(g), " lists input '", vi.name(), "' twice"));
      }
      Value* v = g->NewValue(vi.name());
      v->is_graph_input_ = true;
      vi.clear_name();
      v->info_ = std::make_unique<onnx::ValueInfoProto>(std::move(vi));
      g->inputs_.push_back(v);
    }

    for (int i = 0; i < initializers.size(); ++i) {
      onnx::TensorProto& tp = initializers[i];
      Value* v = g->FindValue(tp.name());
      if (v && (v->initializer_ || v->sparse_initializer_)) {
        return absl::InvalidArgumentError(absl::StrCat(Describe(g), " defines initializer '", tp.name(), "' twice"));
      }
      if (!v) v = g->NewValue(tp.name());
      tp.clear_name();
      Tensor tensor;
      const auto& deferred = options_.main_initializer_deferred;
      if (raw == &options_.main_initializer_raw && static_cast<size_t>(i) < deferred.size() && deferred[i]) {
        tensor = Tensor(std::move(tp));
        tensor.AttachDeferredBytes(deferred[i]);
      } else if (raw && static_cast<size_t>(i) < raw->size() && (*raw)[i]) {
        tensor = Tensor(std::move(tp));
        const auto& owners = options_.main_initializer_owner;
        bool own = raw == &options_.main_initializer_raw && static_cast<size_t>(i) < owners.size() && owners[i];
        tensor.AttachLoadedBytes(own ? owners[i] : options_.raw_owner, *(*raw)[i], TensorStorage::kRaw);
      } else {
        tensor = Tensor::FromProto(std::move(tp));
      }
      v->initializer_ = std::make_unique<Tensor>(std::move(tensor));
      g->initializers_.push_back(v);
    }

    for (onnx::SparseTensorProto& sp : sparse) {
      const std::string& name = sp.values().name();
      Value* v = g->FindValue(name);
      if (v && (v->initializer_ || v->sparse_initializer_)) {
        return absl::InvalidArgumentError(absl::StrCat(Describe(g), " defines initializer '", name, "' twice"));
      }
      if (!v) v = g->NewValue(name);
      v->sparse_initializer_ = std::make_unique<onnx::SparseTensorProto>(std::move(sp));
      g->sparse_initializers_.push_back(v);
    }

    OS_RETURN_IF_ERROR(ImportNodes(g, std::move(nodes)));

    absl::flat_hash_set<const Value*> listed;
    for (int i = 0; i < outputs.size(); ++i) {
      onnx::ValueInfoProto& vi = outputs[i];
      Value* v = g->LookupValue(vi.name());
      if (!v) {
        return absl::InvalidArgumentError(
            absl::StrCat(Describe(g), " output '", vi.name(), "' is not defined by any node, input or initializer"));
      }
      // A subgraph output listed again (Loop bodies do: one value carried and scanned).
      // Outputs bind by position there, so the second listing gets a copy of its own, and
      // the IR keeps one graph output per value. (Load validation refuses it in the main
      // graph and in functions.)
      if (!listed.insert(v).second) v = OutputCopy(g, v);
      g->AddOutput(MutationKey(), v);
      std::string name = vi.name();
      vi.clear_name();
      if (!v->info_) {
        v->info_ = std::make_unique<onnx::ValueInfoProto>(std::move(vi));
      } else if (!SameProto(*v->info_, vi) || v->graph_ != g) {
        g->output_info_.back() = std::make_unique<onnx::ValueInfoProto>(std::move(vi));
        g->output_info_.back()->set_name(name);
        v->info_overridden_ = true;
      }
    }
    ImportValueInfo(g, std::move(value_info));
    return g->CheckAcyclic();
  }

  // Given:  subgraph outputs (%t, %t)
  // Result: %t_1 = Identity(%t), outputs (%t, %t_1)
  Value* OutputCopy(Graph* g, Value* v) {
    Value* src[] = {v};
    Node* copy = g->CreateNode(MutationKey(), "Identity", src, 1, "", nullptr, v->name() + "_copy");
    Value* out = copy->output(0);
    g->RenameValue(out, model_->UniqueName(v->name())).IgnoreError();  // a fresh name: cannot clash
    return out;
  }

  void ImportValueInfo(Graph* g, google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> value_info) {
    for (onnx::ValueInfoProto& vi : value_info) {
      Value* v = g->FindValue(vi.name());
      Graph::ValueInfoEntry entry;
      if (v && !v->in_value_info_) {
        entry.value = v;
        v->in_value_info_ = true;
        std::string name = vi.name();
        vi.clear_name();
        if (!v->info_) {
          v->info_ = std::make_unique<onnx::ValueInfoProto>(std::move(vi));
        } else if (!SameProto(*v->info_, vi)) {
          entry.proto = std::make_unique<onnx::ValueInfoProto>(std::move(vi));
          entry.proto->set_name(name);
          v->info_overridden_ = true;
        }
      } else {
        entry.proto = std::make_unique<onnx::ValueInfoProto>(std::move(vi));
      }
      g->value_info_.push_back(std::move(entry));
    }
  }

  Status ImportNodes(Graph* g, google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes) {
    // Pass 1: create nodes and their outputs, so inputs can name values defined later
    // (ONNX requires topological order, but the check for it belongs to CheckAcyclic).
    struct Pending {
      Node* node;
      google::protobuf::RepeatedPtrField<std::string> inputs;
      google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
    };
    std::vector<Pending> pending;
    pending.reserve(nodes.size());
    for (onnx::NodeProto& np : nodes) {
      Node* node = new Node(g);
      g->LinkBefore(node, nullptr);
      Pending p{node, std::move(*np.mutable_input()), std::move(*np.mutable_attribute())};
      auto outputs = std::move(*np.mutable_output());
      np.clear_input();
      np.clear_attribute();
      np.clear_output();
      node->proto_ = std::move(np);
      if (!node->proto_.name().empty()) model_->ReserveName(node->proto_.name());
      for (std::string& name : outputs) {
        if (name.empty()) {
          node->outputs_.push_back(nullptr);
          continue;
        }
        if (Value* existing = g->FindValue(name)) {
          std::string other = existing->producer_         ? DescribeNode(existing->producer_)
                              : existing->is_graph_input_ ? "a graph input"
                                                          : "an initializer";
          return absl::InvalidArgumentError(absl::StrCat(Describe(g), ": value '", name, "' is defined twice: by ",
                                                         other, " and by ", DescribeNode(node)));
        }
        Value* v = g->NewValue(std::move(name));
        v->producer_ = node;
        v->producer_output_index_ = static_cast<int>(node->outputs_.size());
        node->outputs_.push_back(v);
      }
      pending.push_back(std::move(p));
    }
    // Pass 2: resolve inputs (this graph, then enclosing graphs) and lift subgraphs.
    for (Pending& p : pending) {
      Node* node = p.node;
      for (int i = 0; i < p.inputs.size(); ++i) {
        const std::string& name = p.inputs[i];
        if (name.empty()) {
          node->AddInput(MutationKey(), nullptr);
          continue;
        }
        Value* v = g->LookupValue(name);
        if (!v) {
          return absl::InvalidArgumentError(absl::StrCat(Describe(g), ": ", DescribeNode(node), " input ", i,
                                                         " names '", name,
                                                         "', which no node, graph input or initializer defines"));
        }
        node->AddInput(MutationKey(), v);
      }
      for (onnx::AttributeProto& ap : p.attributes) {
        bool has_graphs = ap.has_g() || ap.graphs_size() > 0;
        if (!has_graphs) {
          node->attributes_.emplace_back(std::move(ap));
          continue;
        }
        std::vector<onnx::GraphProto> bodies;
        if (ap.has_g()) bodies.push_back(std::move(*ap.mutable_g()));
        for (onnx::GraphProto& body : *ap.mutable_graphs()) bodies.push_back(std::move(body));
        bool single = ap.has_g();
        ap.clear_g();
        ap.clear_graphs();
        Attribute attr(std::move(ap));
        for (onnx::GraphProto& body : bodies) {
          auto sub = std::make_unique<Graph>(model_, GraphKind::kSubgraph);
          sub->parent_node_ = node;
          Graph* raw = sub.get();
          attr.mutable_graphs().push_back(std::move(sub));
          OS_RETURN_IF_ERROR(ImportGraph(std::move(body), raw, nullptr));
        }
        attr.set_first_graph_in_g(single);
        node->attributes_.push_back(std::move(attr));
      }
    }
    return absl::OkStatus();
  }

  Model* model_;
  ImportOptions options_;
};

StatusOr<std::unique_ptr<Model>> ImportModel(onnx::ModelProto proto, ImportOptions options) {
  return GraphImporter::Run(std::move(proto), std::move(options));
}

}  // namespace onnxsurgeon

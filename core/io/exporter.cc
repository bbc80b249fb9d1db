#include "core/io/exporter.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/ir/shape.h"

namespace onnxsurgeon {

class GraphExporter {
 public:
  // `renamed`: ExportOptions::renamed (null: every value under its own name).
  // `declared`: analysed symbol -> declared dim_param, applied to value_info and outputs.
  static void ExportGraph(const Graph& g, onnx::GraphProto* out, const TensorWriter* writer, const ValueNames* renamed,
                          bool input_symbols_as_analysed = false, const SymbolNames* declared = nullptr) {
    const_cast<Graph&>(g).Compact();
    *out = g.proto_;
    out->mutable_input()->Reserve(static_cast<int>(g.inputs_.size()));
    for (Value* v : g.inputs_) {
      onnx::ValueInfoProto* info = out->add_input();
      WriteInfo(*v, nullptr, info, renamed);
      if (input_symbols_as_analysed) AnalysedSymbols(*v, *info);
    }
    for (Value* v : g.initializers_) {
      onnx::TensorProto* tp = out->add_initializer();
      if (writer && *writer) {
        (*writer)(*v, *v->initializer_, tp);
      } else {
        *tp = v->initializer_->ToProto(v->name_);
      }
      if (renamed) tp->set_name(NameOf(*v, renamed));
    }
    for (Value* v : g.sparse_initializers_) {
      onnx::SparseTensorProto* sp = out->add_sparse_initializer();
      *sp = *v->sparse_initializer_;
      sp->mutable_values()->set_name(NameOf(*v, renamed));
    }
    out->mutable_node()->Reserve(static_cast<int>(g.num_nodes_));
    for (Node* n : g.nodes()) ExportNode(*n, out->add_node(), renamed, declared);
    for (size_t i = 0; i < g.outputs_.size(); ++i) {
      onnx::ValueInfoProto* info = out->add_output();
      WriteInfo(*g.outputs_[i], g.output_info_[i].get(), info, renamed);
      if (declared) DeclaredSymbols(*declared, info->mutable_type());
    }
    for (const Graph::ValueInfoEntry& e : g.value_info_) {
      onnx::ValueInfoProto* vi = out->add_value_info();
      if (e.value) {
        WriteInfo(*e.value, e.proto.get(), vi, renamed);
        if (declared) DeclaredSymbols(*declared, vi->mutable_type());
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
    for (Node* n : g.nodes()) ExportNode(*n, out->add_node(), nullptr);
    for (Value* v : g.outputs_) out->add_output(v->name_);
    for (const Graph::ValueInfoEntry& e : g.value_info_) {
      onnx::ValueInfoProto* vi = out->add_value_info();
      if (e.value) {
        WriteInfo(*e.value, e.proto.get(), vi, nullptr);
      } else {
        *vi = *e.proto;
      }
    }
  }

 private:
  static void AnalysedSymbols(const Value& v, onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
    for (auto& d : *info.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_param() && !d.dim_param().empty()) d.set_dim_param(InputSymbol(&v, d.dim_param()));
  }

  static const std::string& NameOf(const Value& v, const ValueNames* renamed) {
    if (renamed)
      if (auto it = renamed->find(&v); it != renamed->end()) return it->second;
    return v.name_;
  }

  static void WriteInfo(const Value& v, const onnx::ValueInfoProto* override_info, onnx::ValueInfoProto* out,
                        const ValueNames* renamed) {
    if (override_info) {
      *out = *override_info;
    } else if (v.info_) {
      *out = *v.info_;
    }
    out->set_name(NameOf(v, renamed));
  }

  // Types inferred from the inputs carry InputSymbol's `<dim_param>@<input>`; saved
  // models say what the inputs declare.
  static void DeclaredSymbols(const SymbolNames& declared, onnx::TypeProto* type) {
    if (type->has_tensor_type() && type->tensor_type().has_shape()) {
      for (auto& d : *type->mutable_tensor_type()->mutable_shape()->mutable_dim())
        if (d.has_dim_param())
          if (auto it = declared.find(d.dim_param()); it != declared.end()) d.set_dim_param(it->second);
    }
    if (type->has_sequence_type()) DeclaredSymbols(declared, type->mutable_sequence_type()->mutable_elem_type());
    if (type->has_optional_type()) DeclaredSymbols(declared, type->mutable_optional_type()->mutable_elem_type());
    if (type->has_map_type()) DeclaredSymbols(declared, type->mutable_map_type()->mutable_value_type());
  }

  static void ExportNode(const Node& n, onnx::NodeProto* out, const ValueNames* renamed,
                         const SymbolNames* declared = nullptr) {
    *out = n.proto_;
    out->mutable_input()->Reserve(static_cast<int>(n.inputs_.size()));
    for (Value* v : n.inputs_) out->add_input(v ? NameOf(*v, renamed) : std::string());
    for (Value* v : n.outputs_) out->add_output(v ? NameOf(*v, renamed) : std::string());
    for (const Attribute& a : n.attributes_) {
      onnx::AttributeProto* ap = out->add_attribute();
      *ap = a.proto();
      const auto& graphs = a.graphs();
      if (graphs.empty()) continue;
      size_t first = 0;
      if (a.first_graph_in_g()) ExportGraph(*graphs[first++], ap->mutable_g(), nullptr, renamed, false, declared);
      for (size_t i = first; i < graphs.size(); ++i)
        ExportGraph(*graphs[i], ap->add_graphs(), nullptr, renamed, false, declared);
    }
  }
};

namespace {

// The values `g` defines, each once: inputs, initializers (an initializer that is also an
// input is one value), then node outputs.
template <typename F>
void ForEachDefined(const Graph& g, F f) {
  for (Value* v : g.inputs()) f(v);
  for (const auto* list : {&g.initializers(), &g.sparse_initializers()})
    for (Value* v : *list)
      if (!v->IsGraphInput()) f(v);
  for (const Node* n : g.nodes())
    for (Value* v : n->outputs())
      if (v) f(v);
}

// Fresh names: `<name>__<k>`, unused by any value or value_info entry of the model's
// graphs. The set of used names is gathered on the first request.
class FreshNames {
 public:
  explicit FreshNames(const std::vector<Graph*>& graphs) : graphs_(graphs) {}
  std::string For(const std::string& name) {
    if (!gathered_) Gather();
    std::string fresh;
    int k = 0;
    do {
      fresh = absl::StrCat(name, "__", ++k);
    } while (used_.contains(fresh));
    used_.insert(fresh);
    return fresh;
  }

 private:
  void Gather() {
    gathered_ = true;
    for (const Graph* g : graphs_) {
      ForEachDefined(*g, [&](Value* v) { used_.insert(v->name()); });
      for (const Graph::ValueInfoEntry& e : g->value_info())
        if (!e.value) used_.insert(e.proto->name());
    }
  }
  const std::vector<Graph*>& graphs_;
  bool gathered_ = false;
  absl::flat_hash_set<std::string> used_;
};

// onnx's lexical scoping: a value a subgraph defines may not take a name visible where
// the subgraph's node stands (the enclosing graphs' inputs and initializers, and the
// outputs of the nodes before it). A valid model keeps that rule, and a rewrite can break
// it without changing what anything computes: folding a value defined after a Loop into
// an initializer makes its name visible inside the Loop's body, which may define the same
// name. onnxruntime is stricter: a body that reads a value an enclosing node makes may
// not define a name that an enclosing graph defines anywhere, after its node too ("not in
// SSA form"), except the outputs of the node that holds it; a rewrite that makes such a
// body read a new outer node (a Cast, a hoisted constant) breaks it. Either way the
// subgraph's value is written under a fresh name.
class ShadowedNames {
 public:
  ShadowedNames(const std::vector<Graph*>& graphs, ValueNames& renamed) : fresh_(graphs), renamed_(renamed) {}

  // Given a graph; the names visible where it starts are those added so far (its
  // enclosing graphs'), and `owners` the nodes that hold it and its enclosing subgraphs.
  // Execute renames what `g` (a subgraph when `owners` is not empty) and its own
  // subgraphs define under a visible name or one an enclosing graph defines elsewhere.
  void Walk(const Graph& g, std::vector<const Node*>& owners) {
    const size_t mark = added_.size();
    auto define = [&](Value* v) {
      if (v->name().empty()) return;
      if (!owners.empty() && (count_.contains(v->name()) || DefinedAbove(v->name(), owners))) {
        Add(renamed_.emplace(v, fresh_.For(v->name())).first->second);
      } else {
        Add(v->name());
      }
    };
    for (Value* v : g.inputs()) define(v);
    for (const auto* list : {&g.initializers(), &g.sparse_initializers()})
      for (Value* v : *list)
        if (!v->IsGraphInput()) define(v);
    for (const Node* n : g.nodes()) {
      owners.push_back(n);
      enclosing_.push_back(&g);
      for (const Graph* sub : n->subgraphs()) Walk(*sub, owners);
      enclosing_.pop_back();
      owners.pop_back();
      for (Value* v : n->outputs())
        if (v) define(v);
    }
    while (added_.size() > mark) {  // leaving `g`: its names are not visible to its siblings
      auto it = count_.find(added_.back());
      if (--it->second == 0) count_.erase(it);
      added_.pop_back();
    }
  }

 private:
  void Add(const std::string& name) {
    ++count_[name];
    added_.push_back(name);
  }

  // Whether an enclosing graph defines `name` (anywhere) other than as an output of one
  // of the nodes that hold the subgraph being walked.
  bool DefinedAbove(const std::string& name, const std::vector<const Node*>& owners) {
    for (const Node* owner : owners)
      for (const Value* v : owner->outputs())
        if (v && v->name() == name) return false;
    for (const Graph* up : enclosing_)
      if (DefinedIn(*up).contains(name)) return true;
    return false;
  }

  const absl::flat_hash_set<std::string>& DefinedIn(const Graph& g) {
    auto [it, added] = defined_.try_emplace(&g);
    if (added) ForEachDefined(g, [&](Value* v) { it->second.insert(v->name()); });
    return it->second;
  }

  FreshNames fresh_;
  ValueNames& renamed_;
  absl::flat_hash_map<std::string, int> count_;  // visible names, with how often each is defined
  std::vector<std::string> added_;
  std::vector<const Graph*> enclosing_;  // the graphs around the subgraph being walked
  absl::flat_hash_map<const Graph*, absl::flat_hash_set<std::string>> defined_;
};

}  // namespace

ValueNames ScopeUniqueNames(const Model& model) {
  ValueNames renamed;
  if (!model.has_graph()) return renamed;
  std::vector<Graph*> graphs = model.graph().SelfAndSubgraphs();
  if (graphs.size() == 1) return renamed;  // one graph: names are unique already
  FreshNames fresh(graphs);
  absl::flat_hash_set<std::string> defined;
  for (const Graph* g : graphs)
    ForEachDefined(*g, [&](Value* v) {
      if (!v->name().empty() && !defined.insert(v->name()).second) renamed.emplace(v, fresh.For(v->name()));
    });
  return renamed;
}

SymbolNames AnalysedInputSymbols(const Graph& main) {
  SymbolNames out;
  for (const Value* v : main.inputs()) {
    const onnx::TypeProto* t = v->type();
    if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) continue;
    for (const auto& d : t->tensor_type().shape().dim()) {
      if (!d.has_dim_param() || d.dim_param().empty()) continue;
      std::string analysed = InputSymbol(v, d.dim_param());
      if (analysed != d.dim_param()) out.emplace(std::move(analysed), d.dim_param());
    }
  }
  return out;
}

ValueNames ShadowFreeNames(const Model& model) {
  ValueNames renamed;
  if (!model.has_graph()) return renamed;
  std::vector<Graph*> graphs = model.graph().SelfAndSubgraphs();
  if (graphs.size() == 1) return renamed;
  std::vector<const Node*> owners;
  ShadowedNames(graphs, renamed).Walk(model.graph(), owners);
  return renamed;
}

onnx::ModelProto ExportModel(const Model& model, const ExportOptions& options) {
  onnx::ModelProto out = model.proto();
  if (model.has_graph()) {
    const TensorWriter* writer = options.main_initializer_writer ? &options.main_initializer_writer : nullptr;
    // Names unique model-wide shadow nothing; otherwise rename what a rewrite made shadow.
    ValueNames shadow_free;
    const ValueNames* renamed = options.renamed;
    if (!renamed) {
      shadow_free = ShadowFreeNames(model);
      if (!shadow_free.empty()) renamed = &shadow_free;
    }
    // Saved types say what the inputs declare; inference copies keep the analysed symbols.
    SymbolNames declared;
    if (!options.input_symbols_as_analysed) declared = AnalysedInputSymbols(model.graph());
    GraphExporter::ExportGraph(model.graph(), out.mutable_graph(), writer, renamed, options.input_symbols_as_analysed,
                               declared.empty() ? nullptr : &declared);
  }
  for (const auto& f : model.functions()) GraphExporter::ExportFunction(*f, out.add_functions());
  return out;
}

onnx::FunctionProto ExportFunction(const Function& function) {
  onnx::FunctionProto out;
  GraphExporter::ExportFunction(function, &out);
  return out;
}

onnx::GraphProto ExportGraph(const Graph& graph, const ValueNames* renamed) {
  onnx::GraphProto out;
  GraphExporter::ExportGraph(graph, &out, nullptr, renamed);
  return out;
}

}  // namespace onnxsurgeon

// extract: cuts the subgraph that computes `outputs` from `inputs` out of the main graph,
// as onnx.utils.extract_model and onnxslim --inputs/--outputs do.
//
// The result's graph inputs are `inputs` in the order given (any value of the main graph:
// a graph input, an intermediate value the caller will feed, or an initializer to feed
// instead), its outputs are `outputs` in the order given, and it keeps only the nodes and
// initializers those outputs need (nodes whose If/Loop/Scan bodies read an outer value
// need that value too). A value that becomes an input or output without a type annotation
// gets the type onnx shape inference gives it; one it cannot type is an error, since a
// graph input must have one.
//
// Errors, with nothing changed: a name that is no value of the main graph (or is listed
// twice); an output that needs a graph input `inputs` does not list; an input whose
// producer is still needed for another value (feeding it would leave two definitions of
// one name); a value whose type cannot be inferred.
//
// Options:
//   outputs=    values to compute, ';'-separated (default: the graph outputs)
//   inputs=     values to feed, ';'-separated (default: the graph inputs the outputs need)
//
// Before (extract(inputs=h, outputs=y)):
//   g (float[N,4] X) => (float[N,4] Z) { h = Relu(X)  y = Neg(h)  Z = Exp(y) }
// After:
//   g (float[N,4] h) => (float[N,4] y) { y = Neg(h) }
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "core/interop/onnx_interop.h"
#include "core/rewrite/rewriter.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

constexpr int64_t kInlineBytes = 4096;  // types need no weights, only small shape tensors

// Given the main graph and names. Result their values, or an error naming the first
// unknown or repeated one.
StatusOr<std::vector<Value*>> LookUp(const Graph& g, const std::vector<std::string>& names, const char* option) {
  std::vector<Value*> values;
  absl::flat_hash_set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat(option, "= lists '", name, "' twice"));
    }
    Value* v = g.FindValue(name);
    if (!v) {
      return absl::InvalidArgumentError(absl::StrCat(option, "=: no value named '", name, "' in the main graph"));
    }
    values.push_back(v);
  }
  return values;
}

// Main-graph values a node reads: its inputs, and the outer values its subgraphs read.
std::vector<Value*> Reads(const Node& n, const Graph& main) {
  std::vector<Value*> reads;
  for (Value* v : n.inputs())
    if (v) reads.push_back(v);
  for (Graph* sub : n.subgraphs())
    for (Node* inner : sub->AllNodesRecursive())
      for (Value* v : inner->inputs())
        if (v && v->graph() == &main) reads.push_back(v);
  // A subgraph may also return an outer value directly.
  for (Graph* sub : n.subgraphs())
    for (Value* v : sub->outputs())
      if (v->graph() == &main) reads.push_back(v);
  return reads;
}

// What the outputs need, walking back from them and stopping at the fed values.
struct Cut {
  absl::flat_hash_set<const Node*> nodes;
  absl::flat_hash_set<const Value*> initializers;
  std::vector<Value*> graph_inputs;  // original graph inputs needed, in graph order
  std::string missing_input;         // why the cut is impossible: an unlisted graph input
};

Cut Walk(const Graph& g, const std::vector<Value*>& outputs, const absl::flat_hash_set<const Value*>& fed,
         bool inputs_given) {
  Cut cut;
  absl::flat_hash_set<const Value*> visited;
  absl::flat_hash_map<const Value*, const Node*> first_reader;  // to name a path in errors
  std::vector<Value*> stack(outputs.begin(), outputs.end());
  absl::flat_hash_set<const Value*> needed_inputs;
  while (!stack.empty()) {
    Value* v = stack.back();
    stack.pop_back();
    if (!visited.insert(v).second || fed.contains(v)) continue;
    if (Node* p = v->producer()) {
      if (cut.nodes.insert(p).second) {
        for (Value* r : Reads(*p, g)) {
          first_reader.try_emplace(r, p);
          stack.push_back(r);
        }
      }
    } else if (v->IsGraphInput()) {
      if (v->IsInitializer() && !inputs_given) {
        cut.initializers.insert(v);  // an overridable initializer stays what it was
      } else if (!v->IsInitializer() && inputs_given) {
        if (cut.missing_input.empty()) {
          auto reader = first_reader.find(v);
          cut.missing_input = absl::StrCat(
              "the outputs need graph input '", v->name(), "'",
              reader != first_reader.end() ? absl::StrCat(" (read by node '", reader->second->name(), "')") : "",
              ", which inputs= does not list");
        }
      } else if (v->IsInitializer()) {
        cut.initializers.insert(v);
      }
      needed_inputs.insert(v);
    } else if (v->IsInitializer() || v->IsSparseInitializer()) {
      cut.initializers.insert(v);
    }
  }
  for (Value* v : g.inputs())
    if (needed_inputs.contains(v) && (!inputs_given || v->IsInitializer())) cut.graph_inputs.push_back(v);
  return cut;
}

// The tensor type of an initializer.
onnx::TypeProto InitializerType(const Tensor& t) {
  onnx::TypeProto type;
  auto* tt = type.mutable_tensor_type();
  tt->set_elem_type(t.meta().data_type());
  auto* shape = tt->mutable_shape();
  for (int64_t d : t.meta().dims()) shape->add_dim()->set_dim_value(d);
  return type;
}

class ExtractPass : public Pass {
 public:
  ExtractPass(std::vector<std::string> inputs, std::vector<std::string> outputs)
      : input_names_(std::move(inputs)), output_names_(std::move(outputs)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    Graph& g = model.graph();
    // ---- decide everything before changing anything ---------------------------------
    std::vector<Value*> outputs = g.outputs();
    if (!output_names_.empty()) {
      OS_ASSIGN_OR_RETURN(outputs, LookUp(g, output_names_, "outputs"));
    }
    const bool inputs_given = !input_names_.empty();
    OS_ASSIGN_OR_RETURN(std::vector<Value*> fed, LookUp(g, input_names_, "inputs"));
    absl::flat_hash_set<const Value*> fed_set(fed.begin(), fed.end());
    Cut cut = Walk(g, outputs, fed_set, inputs_given);
    if (!inputs_given) {
      for (Value* v : cut.graph_inputs)
        if (!v->IsInitializer()) fed.push_back(v);
    }
    for (Value* v : fed) {
      Node* p = v->producer();
      if (p && cut.nodes.contains(p)) {
        return absl::InvalidArgumentError(absl::StrCat("input '", v->name(), "' is computed by node '", p->name(),
                                                       "', which the outputs also need through another of its outputs;"
                                                       " list that node's inputs instead"));
      }
    }
    if (!cut.missing_input.empty()) return absl::InvalidArgumentError(cut.missing_input);
    // Types for values that become inputs or outputs without one.
    absl::flat_hash_map<const Value*, onnx::TypeProto> types;
    std::vector<const Value*> untyped;
    // A graph input or output needs an element type and a rank (onnx's checker requires the
    // shape field there), so a declared type without a shape counts as untyped.
    auto io_typed = [](const onnx::TypeProto& t) {
      return !t.has_tensor_type() || (t.tensor_type().elem_type() && t.tensor_type().has_shape());
    };
    auto need_type = [&](Value* v) {
      if ((v->has_type() && io_typed(*v->type())) || types.contains(v)) return;
      if (const Tensor* t = v->initializer()) {
        types[v] = InitializerType(*t);
      } else {
        untyped.push_back(v);
      }
    };
    for (Value* v : fed) need_type(v);
    for (Value* v : outputs) need_type(v);
    if (!untyped.empty()) {
      InferShapesOptions options;
      options.max_payload_bytes = kInlineBytes;
      auto inferred = InferredCopy(model, options);
      absl::flat_hash_map<const Value*, const onnx::TypeProto*> found;
      if (inferred.ok()) inferred->ForEachType([&](Value* v, const onnx::TypeProto& t) { found[v] = &t; });
      for (const Value* v : untyped) {
        auto it = found.find(v);
        if (it == found.end() || !it->second->has_tensor_type() || !io_typed(*it->second)) {
          return absl::InvalidArgumentError(
              absl::StrCat("cannot infer the type and rank of '", v->name(), "'",
                           inferred.ok() ? "" : absl::StrCat(" (", inferred.status().message(), ")"),
                           "; annotate it, or run set-input-shape first"));
        }
        types[v] = *it->second;
      }
    }

    // ---- apply ------------------------------------------------------------------------
    auto set_type = [&](Value* v) {
      if (auto it = types.find(v); it != types.end()) *v->mutable_info()->mutable_type() = it->second;
    };
    Rewriter rw;
    rw.SetRule("extract");
    // Outputs first: a fed value that is also an output hands its slot to the new input.
    for (size_t i = g.outputs().size(); i-- > 0;) rw.RemoveGraphOutput(&g, i);
    for (Value* v : outputs) {
      set_type(v);
      rw.AddGraphOutput(&g, v);
    }
    result.Count("outputs", static_cast<int64_t>(outputs.size()));
    // Every input becomes a fresh graph input, in the order given; each takes over the
    // uses of the value it replaces, and its name once that value is gone.
    std::vector<std::pair<Value*, std::string>> renames;
    std::vector<Value*> old_inputs = g.inputs();
    for (Value* v : fed) {
      onnx::ValueInfoProto info = v->info() ? *v->info() : onnx::ValueInfoProto();
      if (auto it = types.find(v); it != types.end()) *info.mutable_type() = it->second;
      info.clear_name();
      OS_ASSIGN_OR_RETURN(Value * input, rw.AddGraphInput(&g, g.UniqueName(v->name()), std::move(info)));
      // The outputs were set above: an output slot returning v returns the new input.
      OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(v, input, GraphOutputs::kTakeValue));
      renames.emplace_back(input, v->name());
    }
    result.Count("inputs", static_cast<int64_t>(fed.size()));
    // Nodes the outputs do not need, last first (their readers are unneeded too).
    for (Node* n = g.last_node(); n;) {
      Node* prev = n->prev();
      if (!cut.nodes.contains(n)) {
        OS_RETURN_IF_ERROR(rw.EraseNodeLeavingUses(n));
        result.Count("nodes-removed");
      }
      n = prev;
    }
    // Old graph inputs stay only as overridable initializers the outputs read.
    absl::flat_hash_set<const Value*> replaced(fed.begin(), fed.end());
    for (Value* v : old_inputs) {
      bool kept = !replaced.contains(v) &&
                  std::find(cut.graph_inputs.begin(), cut.graph_inputs.end(), v) != cut.graph_inputs.end();
      if (!kept) OS_RETURN_IF_ERROR(rw.RemoveGraphInput(v));
    }
    std::vector<Value*> unused;
    for (Value* v : g.initializers())
      if (!v->HasUsers() && !v->IsGraphInput()) unused.push_back(v);
    for (Value* v : unused) {
      OS_RETURN_IF_ERROR(rw.RemoveInitializer(v));
      result.Count("initializers-removed");
    }
    for (auto& [input, name] : renames) {
      Value* old = g.FindValue(name);
      if (old && old != input) {
        if (old->IsInitializer()) OS_RETURN_IF_ERROR(rw.RemoveInitializer(old));
        if (g.FindValue(name) == old) OS_RETURN_IF_ERROR(rw.EraseValue(old));
      }
      OS_RETURN_IF_ERROR(input->SetName(name));
    }
    g.RemoveOrphanValueInfo();
    return result;
  }

 private:
  std::vector<std::string> input_names_;
  std::vector<std::string> output_names_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateExtractPass(const PassOptions& o) {
  return std::make_unique<ExtractPass>(o.List("inputs"), o.List("outputs"));
}

}  // namespace onnxsurgeon::passes

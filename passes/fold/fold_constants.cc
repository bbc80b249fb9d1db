// fold-constants: evaluates every node whose inputs are all constant and replaces its
// outputs by initializers.
//
// Constant means: an initializer that is not a graph input, a Constant node's output (any
// attribute form but sparse_value), or a value folded earlier in the same walk. The walk
// visits each graph once in topological order, so whole chains fold in one run. Kernels
// are the project's own (core/eval), following onnxruntime's CPU results.
//
// Also:
// - Shape/Size of a value whose dims are static (after onnx shape inference, which the
//   pass runs when some Shape/Size input lacks a static shape) fold; Gather and Slice of a
//   partly static shape fold when the dims they pick are static.
// - If with a constant condition becomes the taken branch: its nodes move into the
//   enclosing graph (renamed "<if name>/..." where needed), the branch's outputs replace
//   the If's outputs, and the walk folds on through them.
// - Subgraphs (If/Loop/Scan bodies) are folded too; constant outer values count as
//   constant inside them.
// - Graph output names never change: a folded output becomes an initializer of that name.
// - Constant nodes are sources, not folded themselves: they stay unless folding leaves
//   them unused (then they go, as do initializers folding left unused).
//
// Left alone, and reported in the pass counts as left/<reason>: non-deterministic ops
// (RandomNormal*, RandomUniform*, Bernoulli, Multinomial), custom-domain ops, ops without
// a kernel, outputs over the size budget, and kernel refusals (e.g. integer division by
// zero, a float Cast out of the integer range).
//
// Options:
//   max-size      bytes a folded output may take (default 1048576 = 1 MiB); a large
//                 Expand/Tile/ConstantOfShape is never materialised
//   infer-shapes  run onnx shape inference to fold Shape of static dims (default true)
//
// Before:  s = Shape(W)  n = Gather(s, zero)  u = Unsqueeze(n, zero)  Y = Reshape(X, u)
//          (W a [6,4] initializer, zero = 0)
// After:   Y = Reshape(X, u)   with u = {6} an initializer
#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/analysis/type_facts.h"
#include "core/eval/kernel.h"
#include "core/eval/slicing.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/clone.h"
#include "core/ir/shape.h"
#include "core/rewrite/rewriter.h"
#include "core/shape/contradictions.h"
#include "passes/fold/skip_operand.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using eval::Array;

bool IsNonDeterministic(const Node& n) {
  static const absl::flat_hash_set<std::string> kOps = {"RandomNormal",      "RandomNormalLike", "RandomUniform",
                                                        "RandomUniformLike", "Bernoulli",        "Multinomial"};
  return kOps.contains(n.op_type());
}

// Dims of a value's declared type; nullopt for unknown ones (or no rank at all).
std::optional<std::vector<std::optional<int64_t>>> DeclaredDims(const Value* v) {
  auto shape = ShapeOfType(v ? v->type() : nullptr);
  if (!shape) return std::nullopt;
  std::vector<std::optional<int64_t>> dims;
  for (const Dim& d : *shape) dims.push_back(d.is_static() ? std::optional<int64_t>(d.value) : std::nullopt);
  return dims;
}

bool FullyStatic(const std::vector<std::optional<int64_t>>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](const auto& d) { return d.has_value(); });
}

std::string ReasonOf(const Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kResourceExhausted: return "left/over-max-size";
    case absl::StatusCode::kUnimplemented: return "left/unsupported";
    default: return "left/kernel-refused";
  }
}

class Folder {
 public:
  Folder(Model& model, int64_t max_size, PassResult& result, RewriteBudget* budget)
      : model_(model), max_size_(max_size), result_(result), budget_(budget) {}

  Status Run() {
    OS_RETURN_IF_ERROR(FoldGraph(model_.graph()));
    KeepSubgraphsConsistent();
    return Commit();
  }

 private:
  // ---- what is known -------------------------------------------------------------------
  // False when Known(v) is surely null, found without reading a tensor: v is neither known
  // nor an initializer (not a graph input) nor a Constant node's output.
  bool MaybeKnown(Value* v) const {
    if (known_.contains(v)) return true;
    if (not_constant_.contains(v)) return false;
    if (v->IsInitializer()) return !v->IsGraphInput();
    const Node* p = v->producer();
    return p && p->Is("Constant") && p->num_outputs() == 1;
  }

  const Array* Known(Value* v) {
    if (!v) return nullptr;
    if (auto it = known_.find(v); it != known_.end()) return it->second.get();
    if (not_constant_.contains(v)) return nullptr;
    std::optional<Array> a;
    if (v->IsInitializer() && !v->IsGraphInput()) {
      auto r = eval::ArrayFromTensor(*v->initializer());
      if (r.ok()) {
        a = *std::move(r);
      } else {
        unreadable_.insert(v);  // constant, but of a type (or layout) kernels do not read
      }
    } else if (Node* p = v->producer(); p && p->Is("Constant") && p->num_outputs() == 1) {
      auto r = eval::Evaluate(*p, {}, p->graph()->OpsetVersion(""), std::numeric_limits<int64_t>::max());
      if (r.ok()) {
        a = std::move((*r)[0]);
      } else {
        unreadable_.insert(v);  // e.g. sparse_value
      }
    }
    if (!a) {
      not_constant_.insert(v);
      return nullptr;
    }
    return known_.emplace(v, std::make_unique<Array>(*std::move(a))).first->second.get();
  }

  // Records why a node whose inputs are constant stays; not a change, so `changed` stays.
  void Left(const std::string& reason) { result_.counts[reason] += 1; }
  Status Leave(const std::string& reason) {
    Left(reason);
    return absl::OkStatus();
  }

  // ---- the walk ------------------------------------------------------------------------
  Status FoldGraph(Graph& g) {
    if (!g.IsTopologicallySorted()) OS_RETURN_IF_ERROR(g.TopologicalSort());
    for (Node* n = g.first_node(); n;) {
      Node* next = n->next();
      OS_RETURN_IF_ERROR(VisitNode(n, next));
      n = next;
    }
    return absl::OkStatus();
  }

  Status VisitNode(Node* n, Node*& next) {
    if (budget_ && budget_->exhausted()) return absl::OkStatus();  // bisect: stop after N folds
    if (!n->subgraphs().empty()) {
      if (n->Is("If")) {
        const Array* cond = Known(n->input(0));
        if (cond && cond->numel() == 1 && !cond->is_string() && eval::ElementSize(cond->dtype) == 1) {
          return InlineIf(n, cond->bytes[0] != 0, next);
        }
      }
      for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(FoldGraph(*sub));
      bool all_constant =
          std::all_of(n->inputs().begin(), n->inputs().end(), [&](Value* in) { return !in || Known(in); });
      if (all_constant) Left("left/no-kernel");  // Loop/Scan/If bodies are not evaluated
      return absl::OkStatus();
    }
    if (n->Is("Constant")) return absl::OkStatus();  // a source; see Known()

    // An input plainly not constant (computed, not folded) ends it before any weight is read:
    // Gather(weight, ids) reads no weight (a deferred one, on Python's ModelProto path, is
    // not fetched). The loop below stops at the first input that is not constant.
    for (Value* in : n->inputs())
      if (in && !MaybeKnown(in)) return FoldFromShapes(n);
    std::vector<const Array*> inputs;
    for (Value* in : n->inputs()) {
      const Array* a = in ? Known(in) : nullptr;
      if (in && !a) {
        if (!unreadable_.contains(in)) return FoldFromShapes(n);
        bool rest_constant =
            std::all_of(n->inputs().begin() + static_cast<std::ptrdiff_t>(inputs.size()) + 1, n->inputs().end(),
                        [&](Value* v) { return !v || Known(v) || unreadable_.contains(v); });
        return rest_constant ? Leave("left/unsupported") : FoldFromShapes(n);
      }
      inputs.push_back(a);
    }

    if (!CanonicalDomain(n->domain()).empty()) return Leave("left/custom-domain");
    if (IsNonDeterministic(*n)) return Leave("left/non-deterministic");
    int64_t opset = n->graph()->OpsetVersion("");
    if (!eval::FindKernel(n->op_type(), n->domain(), opset)) return Leave("left/no-kernel");
    auto outs = eval::Evaluate(*n, inputs, opset, max_size_);
    if (!outs.ok()) return Leave(ReasonOf(outs.status()));
    Record(n, *std::move(outs));
    return absl::OkStatus();
  }

  void Record(Node* n, std::vector<Array> outs) {
    for (size_t i = 0; i < n->num_outputs(); ++i)
      if (Value* v = n->output(i)) known_.insert_or_assign(v, std::make_unique<Array>(std::move(outs[i])));
    folded_.push_back(n);
    folded_set_.insert(n);
    if (budget_) budget_->Spend(RewriteStep{"fold-constants", n->name(), {n->name()}, {FirstOutputName(*n)}});
  }

  // Shape/Size of static dims, and Gather/Slice picking static dims of a partial Shape.
  Status FoldFromShapes(Node* n) {
    if (!CanonicalDomain(n->domain()).empty()) return absl::OkStatus();
    int64_t opset = n->graph()->OpsetVersion("");
    if ((n->Is("Shape") || n->Is("Size")) && n->num_inputs() == 1) {
      auto dims = DeclaredDims(n->input(0));
      if (!dims) return absl::OkStatus();
      if (n->Is("Size")) {
        if (!FullyStatic(*dims)) return absl::OkStatus();
        int64_t count = 1;
        for (const auto& d : *dims) count *= *d;
        result_.Count("shape-folded");
        Record(n, {eval::Int64Array({}, {count})});
        return absl::OkStatus();
      }
      // Shape's start/end (opset 15) pick a clamped range of dims.
      int64_t rank = static_cast<int64_t>(dims->size());
      auto [start, end] = opset >= 15 ? ShapeRange(rank, n->GetInt("start", 0), n->GetInt("end", rank))
                                      : std::pair<int64_t, int64_t>{0, rank};
      std::vector<std::optional<int64_t>> picked(dims->begin() + start, dims->begin() + end);
      return RecordShape(n, picked);
    }
    if ((n->Is("Gather") || n->Is("Slice")) && n->num_inputs() >= 2) {
      auto it = partial_shapes_.find(n->input(0));
      if (it == partial_shapes_.end()) return absl::OkStatus();
      std::vector<const Array*> inputs = {nullptr};  // input 0 is the partial shape
      for (size_t i = 1; i < n->num_inputs(); ++i) {
        inputs.push_back(Known(n->input(i)));
        if (n->input(i) && !inputs[i]) return absl::OkStatus();
      }
      // Run the kernel on positions 0..n-1 instead of the unknown values: the result says
      // which entries it picks.
      const auto& partial = it->second;
      std::vector<int64_t> positions(partial.size());
      for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int64_t>(i);
      Array pos = eval::Int64Array({static_cast<int64_t>(positions.size())}, positions);
      std::vector<const Array*> probe_in = inputs;
      probe_in[0] = &pos;
      auto outs = eval::Evaluate(*n, probe_in, opset, max_size_);
      if (!outs.ok()) return absl::OkStatus();
      const Array& picked_pos = (*outs)[0];
      std::vector<std::optional<int64_t>> picked;
      for (int64_t i = 0; i < picked_pos.numel(); ++i) picked.push_back(partial[picked_pos.at<int64_t>(i)]);
      if (!FullyStatic(picked)) {
        if (picked_pos.dims.size() == 1) partial_shapes_[n->output(0)] = picked;
        return absl::OkStatus();
      }
      std::vector<int64_t> values;
      for (const auto& d : picked) values.push_back(*d);
      result_.Count("shape-folded");
      Record(n, {eval::Int64Array(picked_pos.dims, values)});
    }
    return absl::OkStatus();
  }

  Status RecordShape(Node* n, const std::vector<std::optional<int64_t>>& dims) {
    if (!FullyStatic(dims)) {
      partial_shapes_[n->output(0)] = dims;
      return absl::OkStatus();
    }
    std::vector<int64_t> values;
    for (const auto& d : dims) values.push_back(*d);
    result_.Count("shape-folded");
    Record(n, {eval::Int64Array({static_cast<int64_t>(values.size())}, values)});
    return absl::OkStatus();
  }

  // Given an If whose condition is known.
  // Execute clones the taken branch's nodes before it (outer values stay as they are,
  // branch initializers become initializers here), points the If's users at the branch's
  // outputs (graph outputs keep their names through an Identity where needed), erases it.
  // Result `resume` is the first node that came from the branch (or what followed the If).
  Status InlineIf(Node* n, bool cond, Node*& resume) {
    Graph& g = *n->graph();
    const Attribute* attr = n->FindAttribute(cond ? "then_branch" : "else_branch");
    if (!attr || attr->graphs().size() != 1) return absl::OkStatus();
    Graph* branch = attr->graphs()[0].get();
    if (branch->outputs().size() != n->num_outputs() || !branch->inputs().empty()) return absl::OkStatus();
    std::string prefix = (n->name().empty() ? std::string("If") : n->name()) + "/";
    Node* before = n->prev();
    rw_.SetInsertionPoint(n);
    ValueMap map;
    OS_ASSIGN_OR_RETURN(std::vector<Value*> inlined, rw_.Inline(*branch, map, prefix));
    for (size_t j = 0; j < n->num_outputs(); ++j) {
      Value* out = n->output(j);
      if (!out) continue;
      Value* inner = inlined[j];
      if (!inner)
        return absl::InvalidArgumentError(absl::StrCat("If '", n->name(), "' branch output ", j, " is undefined"));
      if (out->info() && !inner->has_type()) *inner->mutable_info() = *out->info();
      // A branch output that cannot take the If output's name (a graph input, an outer
      // value) reaches a graph output through an Identity.
      Rewriter rw;
      rw.SetRule("fold-constants/if-inlined");
      rw.SetInsertionPoint(n);
      OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(out, inner, GraphOutputs::kKeepNames));
    }
    Value* condition = n->input(0);
    OS_RETURN_IF_ERROR(rw_.EraseNode(n));
    inlined_conditions_.push_back(condition);
    result_.Count("if-inlined");
    resume = before ? before->next() : g.first_node();
    return absl::OkStatus();
  }

  // ---- committing ----------------------------------------------------------------------
  // Given the folded nodes and their outputs.
  // Execute turns every output something unfolded still reads into an initializer (of the
  // same name), erases the folded nodes, then the Constant nodes and initializers that
  // only they read.
  // Result the graph computes the same with fewer nodes.
  // Drops the folds inside a subgraph of the main graph (an If branch, a Loop body, with
  // what is nested in it) that would make it contradict itself: a branch that fails
  // whenever it runs for the shapes the model has keeps hiding that behind shapes computed
  // at run time (core/shape/contradictions.h).
  void KeepSubgraphsConsistent() {
    std::vector<const Graph*> tops;
    absl::flat_hash_map<const Graph*, std::vector<Node*>> folded_in;
    for (Node* n : folded_) {
      const Graph* top = n->graph();
      while (top->parent_graph() && top->parent_graph()->parent_graph()) top = top->parent_graph();
      if (!top->parent_graph()) continue;  // the main graph
      auto& nodes = folded_in[top];
      if (nodes.empty()) tops.push_back(top);
      nodes.push_back(n);
    }
    for (const Graph* top : tops) {
      absl::flat_hash_map<const Value*, Tensor> constants;
      for (Node* n : folded_in[top])
        for (Value* v : n->outputs())
          if (v) constants.emplace(v, eval::ArrayToTensor(*known_.at(v)));
      if (!FoldingContradicts(model_, *top, constants)) continue;
      for (Node* n : folded_in[top]) folded_set_.erase(n);
      folded_.erase(std::remove_if(folded_.begin(), folded_.end(), [&](Node* n) { return !folded_set_.contains(n); }),
                    folded_.end());
      // Left as they were: not a change (Left).
      result_.counts["left/subgraph-fails-for-these-shapes"] += static_cast<int64_t>(folded_in[top].size());
    }
  }

  Status Commit() {
    // Values folding may leave unused: inputs of folded nodes (not folded themselves) and
    // the conditions of inlined Ifs. Each once: a source's node is erased at most once.
    std::vector<Value*> sources;
    absl::flat_hash_set<Value*> seen;
    auto add_source = [&](Value* v) {
      if (v && !(v->producer() && folded_set_.contains(v->producer())) && seen.insert(v).second) sources.push_back(v);
    };
    for (Value* c : inlined_conditions_) add_source(c);
    for (Node* n : folded_)
      for (Value* in : n->inputs()) add_source(in);
    for (Node* n : folded_) {
      for (Value* v : n->outputs()) {
        if (!v) continue;
        bool needed = v->IsGraphOutput() || std::any_of(v->uses().begin(), v->uses().end(),
                                                        [&](const Use& u) { return !folded_set_.contains(u.node); });
        if (needed) OS_RETURN_IF_ERROR(Materialize(v, *known_.at(v)));
      }
    }
    for (auto it = folded_.rbegin(); it != folded_.rend(); ++it) {
      Status s = rw_.EraseNode(*it);
      if (!s.ok()) return absl::InternalError(absl::StrCat("fold-constants: ", s.message()));
    }
    result_.Count("nodes-folded", static_cast<int64_t>(folded_.size()));
    for (Value* v : sources) {
      if (v->HasUsers()) continue;
      Node* p = v->producer();
      if (p && (p->Is("Constant") || p->Is("Shape") || p->Is("Size")) && p->num_outputs() == 1) {
        if (rw_.EraseNode(p).ok()) result_.Count("sources-removed");
      } else if (!p && v->IsInitializer() && !v->IsGraphInput()) {
        if (rw_.RemoveInitializer(v).ok()) result_.Count("initializers-removed");
      }
    }
    return absl::OkStatus();
  }

  // Given a folded value and its array. Execute adds an initializer that takes over the
  // value's name and uses (graph output slots included); a skip operand of a residual Add
  // before a LayerNormalization becomes a Constant node instead (skip_operand.h: onnxruntime
  // fuses it into SkipLayerNormalization only so). Result the value is unused.
  Status Materialize(Value* v, const Array& a) {
    Graph& g = *v->graph();
    std::string name = v->name();
    if (IsSkipNormOperand(v, a.dims)) return MaterializeAsConstant(v, a);
    OS_RETURN_IF_ERROR(v->SetName(g.UniqueName(name)));
    OS_ASSIGN_OR_RETURN(Value * c, rw_.AddInitializer(&g, name, eval::ArrayToTensor(a)));
    if (v->IsGraphOutput()) {
      onnx::ValueInfoProto* info = c->mutable_info();
      if (v->info()) *info = *v->info();
      if (!info->has_type()) {
        auto* tensor_type = info->mutable_type()->mutable_tensor_type();
        tensor_type->set_elem_type(a.dtype);
        auto* shape = tensor_type->mutable_shape();
        for (int64_t d : a.dims) shape->add_dim()->set_dim_value(d);
      }
      info->set_name(name);
    }
    // The initializer has the output's name already: graph outputs return it as it is.
    OS_RETURN_IF_ERROR(rw_.ReplaceAllUsesWith(v, c, GraphOutputs::kTakeValue));
    result_.Count("initializers-created");
    return absl::OkStatus();
  }

  // Given a folded value (no graph output) and its array. Execute adds a Constant node
  // before the value's producer that takes over its name and uses.
  Status MaterializeAsConstant(Value* v, const Array& a) {
    Graph& g = *v->graph();
    std::string name = v->name();
    OS_RETURN_IF_ERROR(v->SetName(g.UniqueName(name)));
    onnx::AttributeProto value;
    value.set_name("value");
    value.set_type(onnx::AttributeProto::TENSOR);
    *value.mutable_t() = eval::ArrayToTensor(a).ToProto("");
    Rewriter rw;
    rw.SetRule("fold-constants");
    if (v->producer()) rw.SetInsertionPoint(v->producer());
    else rw.SetInsertionPointAtEnd(&g);
    Value* c = rw.Create("Constant", {}, {std::move(value)}, 1, "", name)->output(0);
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(v, c, GraphOutputs::kRefuse));
    if (c->name() != name) OS_RETURN_IF_ERROR(c->SetName(name));
    result_.Count("skip-operands-as-constant-nodes");
    return absl::OkStatus();
  }

  Model& model_;
  int64_t max_size_;
  PassResult& result_;
  RewriteBudget* budget_;  // bisect's bound on folds (null: none)
  // Every change goes through it (folded values become initializers of their own names,
  // an inlined If's branch nodes are clones keeping their metadata).
  Rewriter rw_ = [] {
    Rewriter rw;
    rw.SetRule("fold-constants");
    return rw;
  }();
  // Arrays behind pointers: inputs gathered for one node stay valid while others are added.
  absl::flat_hash_map<const Value*, std::unique_ptr<Array>> known_;
  absl::flat_hash_set<const Value*> not_constant_;
  absl::flat_hash_set<const Value*> unreadable_;
  absl::flat_hash_map<const Value*, std::vector<std::optional<int64_t>>> partial_shapes_;
  std::vector<Node*> folded_;
  absl::flat_hash_set<const Node*> folded_set_;
  std::vector<Value*> inlined_conditions_;
};

// True when some Shape/Size node reads a value without a declared shape. Inference only
// fills in missing types, so a typed value with symbolic dims (a graph input's batch)
// would stay as it is: asking for it would build onnx's schema registry for nothing.
bool NeedsShapeInference(const Model& model) {
  for (Node* n : model.graph().AllNodesRecursive()) {
    if (!(n->Is("Shape") || n->Is("Size")) || n->num_inputs() != 1) continue;
    Value* in = n->input(0);
    if (!in || in->IsInitializer() || (in->producer() && in->producer()->Is("Constant"))) continue;
    if (!DeclaredDims(in)) return true;
  }
  return false;
}

class FoldConstantsPass : public Pass {
 public:
  FoldConstantsPass(int64_t max_size, bool infer_shapes) : max_size_(max_size), infer_shapes_(infer_shapes) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    PassResult result;
    if (infer_shapes_) {
      // Local rules first, onnx inference if a Shape still reads unknown dims. Failure
      // only costs the Shape folds; the rest of the pass does not depend on it.
      constexpr int64_t kInferValueBytes = 4096;  // larger weights go as type and dims only
      TypeRequest request;
      request.infer.max_payload_bytes = kInferValueBytes;
      request.infer.record_value_info = false;  // types for folding decisions, not saved
      if (!TypeFacts::Ensure(model, NeedsShapeInference, request).ok()) {
        result.counts["left/shape-inference-failed"] += 1;
      }
    }
    Folder folder(model, max_size_, result, context.budget);
    OS_RETURN_IF_ERROR(folder.Run());
    return result;
  }

 private:
  int64_t max_size_;
  bool infer_shapes_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFoldConstantsPass(const PassOptions& o) {
  return std::make_unique<FoldConstantsPass>(o.Int("max-size"), o.Bool("infer-shapes"));
}

}  // namespace onnxsurgeon::passes

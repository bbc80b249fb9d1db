// The opset converter's driver (see converter.h): walks every node of a domain to the
// target, one version step at a time (adapter, then the generic step), decomposing what
// the target lacks, and reports what blocks.
#include "passes/opset/converter.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/io/importer.h"
#include "core/ir/ir_version.h"
#include "onnx/defs/data_type_utils.h"
#include "onnx/shape_inference/implementation.h"
#include "passes/opset/generic_step.h"
#include "passes/opset/schemas.h"
#include "passes/opset/step.h"

namespace onnxsurgeon::opset {
namespace {

std::string DomainName(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

// onnxruntime's own ops in the default domain, which its transformer optimizer writes:
// SimplifiedLayerNormalization and SkipSimplifiedLayerNormalization, and LayerNormalization
// below opset 17 (its contrib LayerNormalization-1, which LayerNormalization-17 took over
// unchanged). onnxruntime registers them from version 1, so they mean the same at every
// opset and stay as they are; lower-contrib-ops lowers them for other runtimes.
bool OnnxruntimeDefaultDomainOp(const std::string& op, int64_t opset) {
  if (op == "SimplifiedLayerNormalization" || op == "SkipSimplifiedLayerNormalization") return true;
  return op == "LayerNormalization" && opset > 0 && opset < 17;
}

}  // namespace

std::string Blocker::Describe() const {
  return absl::StrCat("node '", node, "' (", op, ") in ", where, ": opset ", from, " -> ", to, ": ", why);
}

namespace {

struct Scope {
  Graph* root;  // main graph or function body
  Function* function = nullptr;
  std::string where;
};

class Converter {
 public:
  Converter(Model& model, TypeFacts& types) : model_(model), types_(types) {}

  // Converts every node of `domain` in `scope` from `source` to `target`.
  void ConvertScope(const Scope& scope, const std::string& domain, int64_t source, int64_t target) {
    std::deque<Pending> work;
    for (Node* n : scope.root->AllNodesRecursive())
      if (CanonicalDomain(n->domain()) == domain) work.push_back({n, source});
    while (!work.empty()) {
      Pending p = work.front();
      work.pop_front();
      std::vector<Pending> emitted;
      Status s = ConvertNode(p, domain, target, emitted);
      for (const Pending& e : emitted) work.push_back(e);
      if (!s.ok()) {
        Blocker b;
        b.node = failed_name_.empty() ? DescribeNode(*p.node) : failed_name_;
        b.op = absl::StrCat(domain.empty() ? "" : domain + "::", failed_op_);
        b.where = WhereOf(scope, failed_graph_);
        b.from = p.opset;
        b.to = target;
        b.why = std::string(s.message());
        report_.blockers.push_back(std::move(b));
      }
    }
  }

  ConvertReport& report() { return report_; }

 private:
  std::string WhereOf(const Scope& scope, const Graph* g) const {
    if (g && g->parent_node())
      return absl::StrCat("subgraph of node '", DescribeNode(*g->parent_node()), "' in ", scope.where);
    return scope.where;
  }

  Status ConvertNode(Pending p, const std::string& domain, int64_t target, std::vector<Pending>& emitted) {
    Node* node = p.node;
    failed_name_ = DescribeNode(*node);
    failed_op_ = node->op_type();
    failed_graph_ = node->graph();
    const std::string op = node->op_type();
    if (domain.empty() && OnnxruntimeDefaultDomainOp(op, p.opset)) return absl::OkStatus();
    auto vit = Versions().find({domain, op});
    if (vit == Versions().end())
      return absl::FailedPreconditionError(absl::StrCat(op, " is not an operator of ", DomainName(domain)));
    const onnx::OpSchema* from = SchemaAt(domain, op, p.opset);
    if (!from) {
      return absl::FailedPreconditionError(
          absl::StrCat(op, " does not exist at opset ", p.opset, " (it was introduced at ", vit->second.front(), ")"));
    }
    if (p.opset != -1 &&
        std::any_of(node->outputs().begin(), node->outputs().end(), [&](Value* v) { return v && !types_.Find(v); }))
      types_.InferBySchema(*node, domain, p.opset);  // a node made during conversion
    const onnx::OpSchema* to = SchemaAt(domain, op, target);
    int64_t decompose_below = DecomposeBelow(domain, op);
    // Renamed ops (Upsample-9 <-> Resize-10): walk to the bridge version, then rename.
    bool bridge = false;
    int64_t bridge_version = BridgeVersion(domain, op, target);
    if (bridge_version > 0 && (!to || to->Deprecated())) {
      to = SchemaAt(domain, op, bridge_version);
      bridge = to != nullptr;
    }
    bool must_go = !to || to->Deprecated() || (target < decompose_below && p.opset >= decompose_below);
    Rewriter rw;
    rw.SetInsertionPoint(node);
    if (must_go) {
      std::string why = !to ? absl::StrCat(op, " does not exist before opset ", vit->second.front())
                        : to->Deprecated()
                            ? absl::StrCat(op, " is deprecated at opset ", target)
                            : absl::StrCat(op, " below opset ", decompose_below, " means something else");
      return DecomposeOrRefuse(node, domain, p.opset, target, rw, emitted, why);
    }
    const onnx::OpSchema* cur = from;
    int64_t cur_opset = p.opset;
    while (cur->since_version() != to->since_version()) {
      bool down = to->since_version() < cur->since_version();
      const onnx::OpSchema* next = nullptr;
      if (down) {
        next = SchemaAt(domain, op, cur->since_version() - 1);
      } else {
        auto it = std::upper_bound(vit->second.begin(), vit->second.end(), cur->since_version());
        next = SchemaAt(domain, op, *it);
      }
      if (!next || next->Deprecated()) {
        return DecomposeOrRefuse(node, domain, cur_opset, target, rw, emitted,
                                 absl::StrCat("no usable ", op, " version between opsets ", cur->since_version(),
                                              " and ", to->since_version()));
      }
      StepContext ctx;
      ctx.node = node;
      ctx.domain = domain;
      ctx.from = cur;
      ctx.to = next;
      ctx.target = target;
      ctx.rewriter = &rw;
      ctx.types = &types_;
      ctx.emitted = &emitted;
      rw.SetRule(absl::StrCat("opset/", op, "-", cur->since_version(), "-to-", next->since_version()));
      Status s = absl::OkStatus();
      if (const Adapter* adapter = FindAdapter(domain, op, cur->since_version(), next->since_version())) {
        s = (*adapter)(ctx);
        if (s.ok())
          report_.counts[absl::StrCat("adapter:", op, "-", cur->since_version(), "-to-", next->since_version())]++;
      }
      if (s.ok()) {
        if (ctx.replacement) {
          node = ctx.replacement;
          ctx.node = node;
          ctx.replacement = nullptr;
        } else if (!ctx.node) {
          return absl::OkStatus();  // the adapter replaced the node by emitted ones
        }
      }
      if (s.ok() && !ctx.handled) s = GenericStep(ctx);
      if (s.ok() && ctx.replacement) node = ctx.node = ctx.replacement;  // ctx.to_opset() below reads ctx.node
      if (!s.ok()) {
        // A node the step cannot take may still be expressible through its function body.
        std::string why(s.message());
        return DecomposeOrRefuse(node, domain, cur_opset, target, rw, emitted, why);
      }
      rw.SetInsertionPoint(node);
      cur = next;
      cur_opset = ctx.to_opset();
    }
    if (bridge) {
      return DecomposeOrRefuse(node, domain, cur_opset, target, rw, emitted,
                               absl::StrCat(op, " does not exist at opset ", target));
    }
    if (from->since_version() != to->since_version()) report_.counts["nodes-converted"]++;
    Status s = CheckAtTarget(*node, *to, types_, target);
    if (!s.ok() && domain.empty() && (op == "Max" || op == "Min")) {
      // The target's Max/Min lack the input's (integer) type: an exact rewrite may exist.
      Status d = DecomposeOrRefuse(node, domain, target, target, rw, emitted, std::string(s.message()));
      if (d.ok()) return d;
    }
    if (!s.ok()) {
      failed_name_ = DescribeNode(*node);
      return s;
    }
    return absl::OkStatus();
  }

  Status DecomposeOrRefuse(Node* node, const std::string& domain, int64_t opset, int64_t target, Rewriter& rw,
                           std::vector<Pending>& emitted, const std::string& why) {
    DecomposeContext d;
    d.node = node;
    d.domain = domain;
    d.opset = opset;
    d.target = target;
    d.rewriter = &rw;
    d.types = &types_;
    d.emitted = &emitted;
    std::string why_not;
    d.why_not = &why_not;
    std::string op = node->op_type();
    rw.SetRule(absl::StrCat("opset/decompose-", op));
    OS_ASSIGN_OR_RETURN(bool done, Decompose(d));
    if (done) {
      report_.counts[absl::StrCat("decomposed:", op)]++;
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(why_not.empty() ? why : absl::StrCat(why, "; ", why_not));
  }

  Model& model_;
  TypeFacts& types_;
  ConvertReport report_;
  std::string failed_name_, failed_op_;
  const Graph* failed_graph_ = nullptr;
};

void SetFunctionOpset(Function& f, const std::string& domain, int64_t version) {
  for (auto& imp : *f.mutable_proto().mutable_opset_import())
    if (CanonicalDomain(imp.domain()) == domain) imp.set_version(version);
}

// Constants the model reads: initializers (not inputs) and Constant nodes, per graph.
absl::flat_hash_set<const Value*> UsedConstants(const Model& model) {
  absl::flat_hash_set<const Value*> used;
  for (Graph* g : model.AllGraphs()) {
    for (Value* v : g->initializers())
      if (v->HasUsers()) used.insert(v);
    for (Node* n : g->nodes())
      if (n->Is("Constant") && n->output(0) && n->output(0)->HasUsers()) used.insert(n->output(0));
  }
  return used;
}

// Constants the conversion made or stopped reading (an input that became an attribute)
// and that nothing reads now. Unused constants the model had before stay.
int RemoveDroppedConstants(Model& model, const absl::flat_hash_set<const Value*>& used_before,
                           const absl::flat_hash_set<const Value*>& all_before) {
  int removed = 0;
  Rewriter rw;
  for (Graph* g : model.AllGraphs()) {
    std::vector<Value*> inits = g->initializers();
    for (Value* v : inits) {
      if (v->HasUsers() || v->IsGraphInput()) continue;
      if (used_before.count(v) || !all_before.count(v)) removed += rw.RemoveInitializer(v).ok();
    }
    for (Node* n = g->first_node(); n;) {
      Node* next = n->next();
      if (n->Is("Constant") && n->output(0) && !n->output(0)->HasUsers() &&
          (used_before.count(n->output(0)) || !all_before.count(n->output(0))))
        removed += rw.EraseNode(n).ok();
      n = next;
    }
  }
  return removed;
}

absl::flat_hash_set<const Value*> AllConstants(const Model& model) {
  absl::flat_hash_set<const Value*> all;
  for (Graph* g : model.AllGraphs()) {
    for (Value* v : g->initializers()) all.insert(v);
    for (Node* n : g->nodes())
      if (n->Is("Constant") && n->output(0)) all.insert(n->output(0));
  }
  return all;
}

// Converts in place; blockers are collected, not returned as errors.
ConvertReport ConvertAll(Model& model, int64_t target, int64_t ml_target) {
  auto used_before = UsedConstants(model);
  auto all_before = AllConstants(model);
  // The graph's opsets change while it converts: types are inferred once, up front, and
  // what the conversion creates is typed by its steps (InferBySchema, Alias).
  TypeFacts types(model, {.derive = false, .infer_up_front = true});
  Converter c(model, types);
  ConvertReport& report = c.report();
  report.source = model.OpsetVersion("");
  report.target = target;
  for (auto [domain, goal] : {std::pair<std::string, int64_t>{"", target}, {"ai.onnx.ml", ml_target}}) {
    if (goal < 0) continue;
    int64_t version = model.OpsetVersion(domain);
    if (version >= 0 && version != goal) c.ConvertScope({&model.graph(), nullptr, "main graph"}, domain, version, goal);
    if (version >= 0) model.SetOpsetVersion(domain, goal);
    for (auto& f : model.mutable_functions()) {
      int64_t fv = f->OpsetVersion(domain);
      if (fv < 0) continue;
      std::string where = absl::StrCat("function ", f->domain(), "::", f->name());
      if (fv != goal) c.ConvertScope({&f->body(), f.get(), where}, domain, fv, goal);
      SetFunctionOpset(*f, domain, goal);
    }
  }
  report.reached = target;
  if (int removed = RemoveDroppedConstants(model, used_before, all_before))
    report.counts["constants-removed"] += removed;
  // The lowest IR version the new imports and the model's features allow (ir_version.h):
  // a downgrade for an older runtime must lower it too, or the runtime still refuses the file.
  if (report.source != target) LowerIrVersion(model).IgnoreError();  // no limit asked: cannot fail
  return report;
}

StatusOr<std::unique_ptr<Model>> CopyForTrial(const Model& model) {
  // Weights are not needed to plan: large initializers travel as metadata only.
  ExportOptions options;
  options.main_initializer_writer = [](const Value& v, const Tensor& t, onnx::TensorProto* out) {
    if (t.raw_size() <= 4096 || !t.has_raw_bytes()) {
      *out = t.ToProto(v.name());
      return;
    }
    *out = t.meta();
    out->set_name(v.name());
    out->clear_external_data();
    out->set_data_location(onnx::TensorProto::DEFAULT);
  };
  onnx::ModelProto proto = ExportModel(model, options);
  return ImportModel(std::move(proto));
}

// One line, as every error is: the first blockers in full, then a count and where to see all.
Status BlockersToError(const ConvertReport& r) {
  constexpr size_t kShown = 3;
  std::vector<std::string> shown;
  for (size_t i = 0; i < r.blockers.size() && i < kShown; ++i) shown.push_back(r.blockers[i].Describe());
  std::string rest;
  if (r.blockers.size() > kShown) {
    rest = absl::StrCat("; and ", r.blockers.size() - kShown, " more (`onnxsurgeon check --opset ", r.target,
                        "` lists all)");
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot convert to opset ", r.target, " (", r.blockers.size(),
                   " node(s); allow-partial converts the rest): ", absl::StrJoin(shown, "; "), rest));
}

}  // namespace

StatusOr<ConvertReport> CheckOpsetConversion(const Model& model, int64_t target, int64_t ml_target) {
  OS_ASSIGN_OR_RETURN(auto copy, CopyForTrial(model));
  return ConvertAll(*copy, target, ml_target);
}

StatusOr<ConvertReport> ConvertOpset(Model& model, const ConvertOptions& options) {
  int64_t source = model.OpsetVersion("");
  int64_t latest = LatestOpset("");
  if (source < 0) return absl::InvalidArgumentError("the model imports no ai.onnx opset");
  if (options.target < 1 || options.target > latest)
    return absl::InvalidArgumentError(
        absl::StrCat("target opset ", options.target, " is outside 1..", latest, " (what the linked onnx knows)"));
  if (options.target < 7) return absl::InvalidArgumentError("opsets below 7 are not supported (onnxruntime's floor)");
  if (options.direction == Direction::kDownOnly && options.target > source)
    return absl::InvalidArgumentError(absl::StrCat("downgrade-opset=", options.target, " but the model is at opset ",
                                                   source, " (use upgrade-opset or convert-opset)"));
  if (options.direction == Direction::kUpOnly && options.target < source)
    return absl::InvalidArgumentError(absl::StrCat("upgrade-opset=", options.target, " but the model is at opset ",
                                                   source, " (use downgrade-opset or convert-opset)"));
  if (options.ml_target >= 0 && (options.ml_target < 1 || options.ml_target > LatestOpset("ai.onnx.ml")))
    return absl::InvalidArgumentError(absl::StrCat("ai.onnx.ml opset ", options.ml_target, " is unknown"));

  int64_t goal = options.target;
  std::vector<Blocker> skipped;
  if (options.allow_partial) {
    // Find the opset nearest the target that every node reaches, on trial copies.
    int64_t step = goal <= source ? 1 : -1;
    for (;; goal += step) {
      OS_ASSIGN_OR_RETURN(ConvertReport trial, CheckOpsetConversion(model, goal, options.ml_target));
      if (trial.blockers.empty()) break;
      if (skipped.empty()) skipped = trial.blockers;
      if (goal == source) {
        // Even staying put fails: something in the model is broken at its own opset.
        return BlockersToError(trial);
      }
    }
  }
  ConvertReport report = ConvertAll(model, goal, options.ml_target);
  if (!report.blockers.empty()) return BlockersToError(report);
  report.source = source;
  report.target = options.target;
  report.reached = goal;
  report.blockers = std::move(skipped);
  return report;
}

}  // namespace onnxsurgeon::opset

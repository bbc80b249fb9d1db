#include "passes/targeting/check.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/analysis/type_facts.h"
#include "core/inspect/json.h"
#include "core/ir/constant.h"
#include "core/ir/function.h"
#include "core/ir/graph.h"
#include "core/ir/node.h"
#include "core/ir/shape.h"
#include "core/ir/value.h"
#include "core/pass/pass.h"
#include "onnx/defs/schema.h"
#include "passes/reshapes/reshape_facts.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

std::string OpName(const Node& n) {
  std::string_view d = CanonicalDomain(n.domain());
  return d.empty() ? n.op_type() : absl::StrCat(std::string(d), "::", n.op_type());
}

std::string Where(const Graph& g) {
  switch (g.kind()) {
    case GraphKind::kMain: return "main graph";
    case GraphKind::kFunctionBody:
      return g.function() ? absl::StrCat("function ", g.function()->domain(), "::", g.function()->name()) : "function";
    case GraphKind::kSubgraph:
      return absl::StrCat("subgraph '", g.name(), "' of node '", g.parent_node() ? NodeName(*g.parent_node()) : "?",
                          "'");
  }
  return "?";
}

bool DynamicDims(const Value& v) {
  if (!v.type() || !v.type()->has_tensor_type() || !v.type()->tensor_type().has_shape()) return true;
  for (const auto& d : v.type()->tensor_type().shape().dim())
    if (!d.has_dim_value() || d.dim_value() < 0) return true;
  return false;
}

// The step that removes a finding, or why none does.
struct Remedy {
  const PlanStep* step = nullptr;
  std::string no_fix;  // when step is null ("": the generic reason)
};

class Checker {
 public:
  Checker(const Model& model, const CompiledProfile& t, const CheckOptions& o)
      : model_(model), t_(t), p_(t.profile), o_(o), types_(model), static_inputs_(StaticInputs(model, o)) {}

  CheckReport Run() {
    ModelLevel();
    for (Graph* g : model_.AllGraphs())
      for (Node* n : g->nodes()) NodeLevel(*n);
    Outputs();
    Shapes();
    return std::move(report_);
  }

 private:
  // A custom domain the runtime registers itself (its contrib ops), per the profile.
  bool KnownDomain(const std::string& domain) const {
    if (!p_.custom_domains) return false;
    std::string_view d = CanonicalDomain(domain);
    return std::any_of(p_.known_domains.begin(), p_.known_domains.end(),
                       [&](const std::string& k) { return CanonicalDomain(k) == d; });
  }

  std::string Fact(const std::string& text) const { return absl::StrCat(p_.name, ": ", text); }

  void Block(const Node* n, std::string reason, std::string fact, std::string source, const PlanStep* step,
             std::string no_fix = {}) {
    Finding f;
    if (n) {
      f.node = NodeName(*n);
      f.op = OpName(*n);
      f.where = Where(*n->graph());
    } else {
      f.where = "model";
    }
    f.reason = std::move(reason);
    f.fact = std::move(fact);
    f.source = std::move(source);
    f.step = step;
    f.fix = !step ? absl::StrCat("none: ", no_fix.empty() ? "no onnxsurgeon pass removes this" : no_fix)
                  : step->PipelineText({t_, model_, ""});
    report_.blockers.push_back(std::move(f));
  }

  // The model's ai.onnx opset outside the target's: convert-opset removes it, unless a node
  // has no form at the target's opsets (Col2Im before 18): that node is then the blocker,
  // named with the converter's reason, and the plan does not run a conversion that fails.
  void Opset() {
    int64_t opset = model_.OpsetVersion("");
    if (opset < 0 || (opset <= p_.opset_max && opset >= p_.opset_min)) return;
    std::string fact = Fact(absl::StrCat("ai.onnx opset ", p_.opset_min, "..", p_.opset_max));
    std::string reason = absl::StrCat("the model imports ai.onnx opset ", opset);
    int64_t goal = std::clamp<int64_t>(opset, p_.opset_min, p_.opset_max);
    std::vector<UnconvertibleNode> left = UnconvertibleAt(goal);
    if (left.empty()) {
      Block(nullptr, reason, fact, p_.opset_source, &PlanStepNamed("convert-opset"));
      return;
    }
    for (const UnconvertibleNode& b : left) {
      Finding f;
      f.node = b.node;
      f.op = b.op;
      f.where = b.where;
      f.reason = absl::StrCat(reason, "; this node has no form at opset ", goal, ": ", b.why);
      f.fact = fact;
      f.source = p_.opset_source;
      f.fix = "none: convert-opset cannot convert it";
      report_.blockers.push_back(std::move(f));
    }
  }

  void ModelLevel() {
    Opset();
    int64_t ml = model_.OpsetVersion("ai.onnx.ml");
    if (ml >= 0 && p_.ml_opset_max >= 0 && ml > p_.ml_opset_max) {
      Block(nullptr, absl::StrCat("the model imports ai.onnx.ml opset ", ml),
            Fact(absl::StrCat("ai.onnx.ml opset <= ", p_.ml_opset_max)), p_.opset_source,
            &PlanStepNamed("convert-opset"));
    }
    int64_t ir = model_.proto().ir_version();
    if (p_.ir_max >= 0 && ir > p_.ir_max) {
      Block(nullptr, absl::StrCat("the model declares IR version ", ir),
            Fact(absl::StrCat("IR version <= ", p_.ir_max)), p_.ir_source, &PlanStepNamed("lower-ir-version"));
    }
    if (!p_.local_functions && !model_.functions().empty()) {
      std::vector<std::string> names;
      for (const auto& f : model_.functions()) names.push_back(absl::StrCat(f->domain(), "::", f->name()));
      Block(nullptr, absl::StrCat("the model defines local functions (", absl::StrJoin(names, ", "), ")"),
            Fact("no model-local functions"), p_.custom_source, &PlanStepNamed("inline-functions"));
    }
    if (!p_.custom_domains) {
      std::set<std::string> used = UsedDomains(model_);
      for (const auto& imp : model_.proto().opset_import()) {
        std::string d(CanonicalDomain(imp.domain()));
        if (!IsStandardDomain(d) && !used.count(d)) {
          Block(nullptr, absl::StrCat("the model imports domain '", d, "' that nothing uses"),
                Fact("no custom domains"), p_.custom_source, &PlanStepNamed("prune-opset-imports"));
        }
      }
    }
    MlTypes();
    if (!p_.external_data) {
      int64_t n = 0;
      std::string first;
      for (Graph* g : model_.AllGraphs())
        for (Value* v : g->initializers())
          if (v->initializer() && (v->initializer()->storage() == TensorStorage::kExternal ||
                                   v->initializer()->meta().data_location() == onnx::TensorProto::EXTERNAL)) {
            if (first.empty()) first = v->name();
            ++n;
          }
      if (n > 0) {
        Block(nullptr, absl::StrCat(n, " initializer(s) are stored in external-data files (first: '", first, "')"),
              Fact("weights inline (external data is ignored or refused)"), p_.external_data_source,
              &PlanStepNamed("inline-weights"));
      }
    }
    if (p_.value_info_everywhere) {
      int64_t n = 0;
      std::vector<std::string> first;
      for (Graph* g : model_.AllGraphs()) {
        for (Node* node : g->nodes()) {
          for (Value* v : node->outputs()) {
            // What is saved: a value_info entry (or the graph output's own), with a shape.
            bool annotated = (v && (v->in_value_info() || v->IsGraphOutput()) && v->type() &&
                              (!v->type()->has_tensor_type() || v->type()->tensor_type().has_shape()));
            if (!v || annotated) continue;
            if (first.size() < 3) first.push_back(v->name());
            ++n;
          }
        }
      }
      if (n > 0) {
        Block(nullptr,
              absl::StrCat(n, " computed value(s) have no type and shape (first: ", absl::StrJoin(first, ", "), ")"),
              Fact("value_info on every tensor"), p_.value_info_source, &PlanStepNamed("annotate-shapes"));
      }
    }
  }

  // String tensors and sequence/map values, when the profile says the runtime has none: one
  // finding per kind, naming the first values (graph inputs and outputs, computed values).
  void MlTypes() {
    if (p_.strings && p_.sequences) return;
    std::vector<std::string> strings, sequences;
    absl::flat_hash_set<const Value*> seen;
    auto note = [&](const Value* v) {
      if (!v || !seen.insert(v).second) return;
      const onnx::TypeProto* t = types_.Find(v);
      if (!t) return;
      if (t->has_sequence_type() || t->has_map_type()) sequences.push_back(v->name());
      else if (t->has_tensor_type() && t->tensor_type().elem_type() == onnx::TensorProto::STRING)
        strings.push_back(v->name());
    };
    for (Graph* g : model_.AllGraphs()) {
      for (Value* v : g->inputs()) note(v);
      for (Node* n : g->nodes())
        for (Value* v : n->outputs()) note(v);
      for (Value* v : g->outputs()) note(v);
    }
    auto first = [](const std::vector<std::string>& names) {
      std::vector<std::string> head(names.begin(), names.begin() + std::min<size_t>(names.size(), 3));
      return absl::StrJoin(head, ", ");
    };
    const char* why = "the runtime has no such type; onnxsurgeon does not rewrite classical-ML models into tensors";
    if (!p_.strings && !strings.empty()) {
      Block(nullptr, absl::StrCat(strings.size(), " value(s) are string tensors (first: ", first(strings), ")"),
            Fact("no string tensors"), p_.ml_types_source, nullptr, why);
    }
    if (!p_.sequences && !sequences.empty()) {
      Block(nullptr, absl::StrCat(sequences.size(), " value(s) are sequences or maps (first: ", first(sequences), ")"),
            Fact("no sequence or map values"), p_.ml_types_source, nullptr, why);
    }
  }

  void NodeLevel(const Node& n) {
    const std::string& op = n.op_type();
    bool standard = IsStandardDomain(n.domain());
    if (standard && CanonicalDomain(n.domain()) == "ai.onnx.ml" && !p_.ml_ops) {
      Block(&n, absl::StrCat("ai.onnx.ml op ", op), Fact("no ai.onnx.ml operators"), p_.ml_types_source, nullptr,
            "a classical-ML operator (trees, linear models, scalers, encoders, ZipMap) has no ai.onnx form "
            "onnxsurgeon writes");
      return;
    }
    // onnxruntime's contrib ops: decided per op (the profile's contrib_ops, or its known
    // com.microsoft domain less its [[missing]] facts), lowered by lower-contrib-ops.
    bool call = !standard && model_.FindFunction(n.domain(), op, n.proto().overload()) != nullptr;
    if (!call && IsLowerableContribOp(n) && !KnownDomain(n.domain())) {
      if (!RunsContribOp(t_, n)) {
        const PlanStep* step = &PlanStepNamed("lower-contrib-ops");
        std::string fact = p_.contrib_ops.empty()
                               ? "no onnxruntime contrib ops"
                               : absl::StrCat("onnxruntime contrib ops only of ", absl::StrJoin(p_.contrib_ops, ", "));
        Block(&n, absl::StrCat("onnxruntime contrib op ", OpName(n)), Fact(fact), p_.custom_source, step,
              "lower-contrib-ops has no lowering for this op");
      }
      return;
    }
    if (!standard) {
      if (call) {
        if (!p_.local_functions)
          Block(&n, "a call of a model-local function", Fact("no model-local functions"), p_.custom_source,
                &PlanStepNamed("inline-functions"));
      } else if (!KnownDomain(n.domain())) {
        // Asked of the passes' own recognisers (rewrite-index-put, fix-layernorm's custom ops).
        const PlanStep* step = RemovingStep(RemovalQuery{n, nullptr, t_, static_inputs_}).step;
        std::string fact =
            p_.custom_domains
                ? absl::StrCat("custom-domain ops only of ",
                               p_.known_domains.empty() ? "no domain" : absl::StrJoin(p_.known_domains, ", "))
                : "no custom-domain ops";
        Block(&n, absl::StrCat("custom-domain op ", OpName(n)), Fact(fact), p_.custom_source, step,
              "a custom op has no standard equivalent onnxsurgeon knows");
        return;
      }
      // A known domain's op (onnxruntime's com.microsoft): its [[missing]] facts decide.
      if (!call) MissingFacts(n);
      return;
    }
    if (CanonicalDomain(n.domain()).empty()) {
      if (op == "LayerNormalization" && p_.layernorm == Form::kDecomposed) {
        Block(&n, "LayerNormalization", Fact("LayerNorm decomposed (no LayerNormalization)"), p_.layernorm_source,
              &PlanStepNamed("decompose-layernorm"));
      }
      if (op == "Gelu" && p_.gelu == Form::kDecomposed) {
        Block(&n, "Gelu", Fact("GELU decomposed (no Gelu)"), p_.gelu_source, &PlanStepNamed("rewrite-gelu"));
      }
      if (op == "Erf" && !p_.erf) Block(&n, "Erf", Fact("no Erf"), p_.erf_source, &PlanStepNamed("rewrite-erf"));
      if (op == "ScatterND") {
        const Attribute* r = n.FindAttribute("reduction");
        if (r && r->proto().s() != "none" && p_.scatternd_reduction != ScatterReduction::kNative) {
          bool lower = p_.scatternd_reduction == ScatterReduction::kLower;
          Block(&n, absl::StrCat("ScatterND reduction=", r->proto().s()),
                Fact(lower ? "ScatterND without reduction (the attribute is ignored or refused)"
                           : "no ScatterND reduction"),
                p_.scatternd_source, lower ? &PlanStepNamed("lower-scatternd-reduction") : nullptr,
                "the profile says the lowered form is refused too");
        }
      }
      if (op == "If" && p_.if_rule != IfRule::kAny) {
        bool constant = IsConstant(n.input(0));
        if (p_.if_rule == IfRule::kNone || !constant) {
          std::string fact = p_.if_rule == IfRule::kNone ? "no If" : "If only with a constant condition";
          // The plan steps that remove an If (simplify's folds, if-to-where) say whether one does.
          Remedy remedy = RemovingStep(RemovalQuery{n, nullptr, t_, static_inputs_, &types_});
          Block(&n, constant ? "If with a constant condition" : "If whose condition is computed at run time",
                Fact(fact), p_.control_flow_source, remedy.step, remedy.no_fix);
        }
      }
      if ((op == "Loop" || op == "Scan") && !p_.loop) {
        // The plan steps that remove a Loop or a Scan (unroll-loop, unroll-scan) say whether one does.
        Remedy remedy = RemovingStep(RemovalQuery{n, nullptr, t_, static_inputs_, &types_});
        Block(&n, op, Fact("no Loop or Scan"), p_.control_flow_source, remedy.step, remedy.no_fix);
      }
    }
    MissingFacts(n);
  }

  void MissingFacts(const Node& n) {
    const std::string& op = n.op_type();
    for (size_t i = 0; i < p_.missing.size(); ++i) {
      const MissingOp& m = p_.missing[i];
      const CompiledFact& fact = t_.facts[i];
      if (CanonicalDomain(m.domain) != CanonicalDomain(n.domain())) continue;
      if (!fact.every_op && std::find(m.ops.begin(), m.ops.end(), op) == m.ops.end()) continue;
      std::string detail;
      if (fact.condition && !fact.condition->Holds(n, analyses_, &detail)) continue;
      Remedy remedy = RemedyOf(n, fact);
      Block(&n, detail.empty() ? op : absl::StrCat(op, " (", detail, ")"),
            Fact(absl::StrCat("lacks ", fact.every_op ? "every op" : op,
                              m.when.empty() ? "" : absl::StrCat(" when ", m.when))),
            m.source, remedy.step, remedy.no_fix);
    }
  }

  // The step that removes what `fact` found on `n`: the fact's own `remedy`; else its
  // condition kind's default remedy, where that applies to the node; else the step that
  // removes the node's op.
  Remedy RemedyOf(const Node& n, const CompiledFact& fact) const {
    if (fact.remedy_none) return {};
    if (fact.remedy) return {fact.remedy, ""};
    const RemedyContext context{p_.opset_min, p_.opset_max, fact.every_op, types_, static_inputs_};
    if (fact.kind && !fact.kind->remedy.empty() && fact.condition->RemedyApplies(n, context)) {
      if (fact.kind->remedy == "convert-opset-before-form") {
        std::string why = WhyNoConversionTo(OpsetBeforeForm(n));
        if (!why.empty()) return {nullptr, why};
      }
      return {&PlanStepNamed(fact.kind->remedy), ""};
    }
    Remedy by_op = RemovingStep(RemovalQuery{n, fact.kind, t_, static_inputs_});
    if (by_op.step || !by_op.no_fix.empty()) return by_op;
    return {nullptr, fact.condition ? fact.condition->WhyNoRemedy(n, context) : ""};
  }

  // The nodes convert-opset's dry run cannot take to `opset` (none without a dry run).
  std::vector<UnconvertibleNode> UnconvertibleAt(int64_t opset) const {
    const PassInfo* convert = FindPass("convert-opset");
    if (!convert || !convert->dry_run) return {};
    return convert->dry_run(model_, PassOptions(convert->options, {{"opset", absl::StrCat(opset)}}));
  }

  // "" when convert-opset can take the whole model to `opset`; else which node it cannot
  // convert (Col2Im before 18), so the plan does not run a conversion that fails.
  std::string WhyNoConversionTo(int64_t opset) const {
    if (model_.OpsetVersion("") <= opset) return "";
    std::vector<UnconvertibleNode> left = UnconvertibleAt(opset);
    if (left.empty()) return "";
    return absl::StrCat("converting to opset ", opset, " for this form fails: ", left[0].op, " (", left[0].where,
                        "): ", left[0].why);
  }

  // The first plan step that removes the query's node, or why one would only with more given.
  static Remedy RemovingStep(const RemovalQuery& q) {
    for (const PlanStep& step : PlanSteps()) {
      Removal r = step.RemovesNode(q);
      if (r.answer == Removal::kYes) return {&step, ""};
      if (r.answer == Removal::kNeeds) return {nullptr, r.needs};
    }
    return {};
  }

  // Graph outputs the runtime drops silently or fails on: copies of another output or of an
  // input, and constants.
  void Outputs() {
    if (p_.output_copies && p_.output_input_copies && p_.output_constants) return;
    const Graph& g = model_.graph();
    std::set<const Value*> outputs(g.outputs().begin(), g.outputs().end());
    for (const Value* v : g.outputs()) {
      if (!v) continue;
      Finding f;
      f.node = v->name();
      f.where = "graph output";
      f.source = p_.outputs_source;
      if (!p_.output_constants && IsConstant(v)) {
        f.reason = absl::StrCat("graph output '", v->name(), "' is a constant");
        f.fact = Fact("no constant graph outputs");
        f.fix = "none: a constant output is not computed; take its value from the model instead";
        report_.blockers.push_back(std::move(f));
        continue;
      }
      // Follow Identity copies back to what they copy.
      const Value* src = v;
      while (src->producer() && src->producer()->Is("Identity") && src->producer()->input(0))
        src = src->producer()->input(0);
      if (src == v) continue;
      const bool of_input = !src->producer() && !src->IsInitializer() &&
                            std::find(g.inputs().begin(), g.inputs().end(), src) != g.inputs().end();
      if (!p_.output_copies && outputs.count(src)) {
        f.reason = absl::StrCat("graph output '", v->name(), "' is a copy of graph output '", src->name(), "'");
        f.fact = Fact("no graph output that copies another one");
      } else if (!p_.output_input_copies && of_input) {
        f.reason = absl::StrCat("graph output '", v->name(), "' is a copy of graph input '", src->name(), "'");
        f.fact = Fact("no graph output that copies a graph input");
      } else {
        continue;
      }
      f.fix = absl::StrCat("none: the copy is the same tensor; read '", src->name(), "' instead");
      report_.blockers.push_back(std::move(f));
    }
  }

  void Shapes() {
    if (p_.static_shapes) {
      for (Value* v : model_.graph().inputs()) {
        if (v->IsInitializer() || !DynamicDims(*v)) continue;
        Finding f;
        f.node = v->name();
        f.where = "graph input";
        f.reason = absl::StrCat("graph input '", v->name(), "' has dynamic shape ", ShapeText(*v));
        f.fact = Fact("static input shapes");
        f.source = p_.shapes_source;
        if (o_.inputs_with_shapes.count(v->name())) {
          f.step = &PlanStepNamed("set-input-shape");
          f.fix = "set-input-shape (from --input-shapes)";
        } else {
          f.fix = absl::StrCat("none: give --input-shapes ", v->name(), ":DIMS (e.g. ", v->name(), ":1x...)");
        }
        report_.blockers.push_back(std::move(f));
      }
    }
    if (p_.max_batch > 0) {
      for (Value* v : model_.graph().inputs()) {
        if (v->IsInitializer() || !v->type() || !v->type()->has_tensor_type()) continue;
        const auto& shape = v->type()->tensor_type().shape();
        if (!v->type()->tensor_type().has_shape() || shape.dim_size() == 0) continue;
        Finding f;
        f.node = v->name();
        f.where = "graph input";
        f.fact = Fact(absl::StrCat("batch (dim 0 of an input) at most ", p_.max_batch));
        f.source = p_.shapes_source;
        auto given = o_.input_batch.find(v->name());
        if (shape.dim(0).has_dim_value()) {
          if (shape.dim(0).dim_value() <= p_.max_batch) continue;
          f.reason = absl::StrCat("graph input '", v->name(), "' has static batch ", shape.dim(0).dim_value(), " (",
                                  ShapeText(*v), ")");
          f.fix = absl::StrCat("none: a static batch is baked into the model's shapes; export it with batch ",
                               p_.max_batch, " (or a dynamic batch)");
        } else if (given != o_.input_batch.end() && given->second > p_.max_batch) {
          f.reason = absl::StrCat("--input-shapes gives graph input '", v->name(), "' batch ", given->second);
          f.fix = absl::StrCat("none: give batch ", p_.max_batch, " in --input-shapes (dim 0 of ", v->name(), ")");
        } else {
          continue;
        }
        report_.blockers.push_back(std::move(f));
      }
    }
    if (p_.int64 != "full") {
      for (Value* v : model_.graph().inputs()) {
        if (!v->type() || !v->type()->has_tensor_type() ||
            v->type()->tensor_type().elem_type() != onnx::TensorProto::INT64)
          continue;
        Finding f;
        f.node = v->name();
        f.where = "graph input";
        f.reason = absl::StrCat("graph input '", v->name(), "' is int64");
        f.fact = Fact(absl::StrCat("int64 support: ", p_.int64));
        f.source = p_.int64_source;
        f.fix = "none: informational (the runtime converts or refuses int64 tensors)";
        report_.warnings.push_back(std::move(f));
      }
    }
  }

  // Whether every graph input's shape is static, as declared or made by --input-shapes, so
  // simplify can fold shape arithmetic (and Ifs on shapes) without anything else.
  static bool StaticInputs(const Model& model, const CheckOptions& o) {
    if (!o.inputs_with_shapes.empty()) return true;
    for (const Value* v : model.graph().inputs())
      if (v && !v->IsInitializer() && DynamicDims(*v)) return false;
    return true;
  }

  const Model& model_;
  const CompiledProfile& t_;
  const Profile& p_;  // t_.profile
  const CheckOptions& o_;
  TypeFacts types_;  // inference runs only if a condition asks about an unannotated value
  const ConditionAnalyses analyses_{types_};
  const bool static_inputs_;
  CheckReport report_;
};

}  // namespace

std::string Finding::Describe() const {
  std::string head = node.empty() ? where : absl::StrCat(op.empty() ? "" : op + " ", "'", node, "' in ", where);
  return absl::StrCat(head, ": ", reason, " [", fact, "; source: ", source, "] -> ", fix);
}

std::string FactText(const Finding& finding, const Profile& profile) {
  const std::string prefix = profile.name + ": ";
  return absl::StartsWith(finding.fact, prefix) ? finding.fact.substr(prefix.size()) : finding.fact;
}

CheckReport CheckTarget(const Model& model, const CompiledProfile& target, const CheckOptions& options) {
  CheckReport report = Checker(model, target, options).Run();
  if (options.allowed_facts.empty()) return report;
  std::vector<Finding> blocking;
  for (Finding& f : report.blockers)
    (options.allowed_facts.count(FactText(f, target.profile)) ? report.allowed : blocking).push_back(std::move(f));
  report.blockers = std::move(blocking);
  return report;
}

std::string CheckReportJson(const CheckReport& report, const Profile& profile, const std::string& model_name) {
  Json j;
  j["model"] = model_name;
  j["target"] = profile.name;
  j["accepted"] = report.blockers.empty();
  for (auto [key, list] : {std::pair{"blockers", &report.blockers}, std::pair{"warnings", &report.warnings}}) {
    Json findings = Json::array();
    for (const auto& f : *list) {
      findings.push_back({{"node", f.node},
                          {"op", f.op},
                          {"where", f.where},
                          {"reason", f.reason},
                          {"fact", f.fact},
                          {"source", f.source},
                          {"fix", f.fix},
                          {"fixable", f.fixable()}});
    }
    j[key] = findings;
  }
  return DumpJson(j);
}

}  // namespace onnxsurgeon::target

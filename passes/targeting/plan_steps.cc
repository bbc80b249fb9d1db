// The plan step table (passes/passes.def's PLAN_STEP rows), the functions its rows name, and
// what a step is asked: whether it removes a finding, and its pipeline text.
#include "passes/targeting/plan_steps.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/ir/graph.h"
#include "onnx/defs/schema.h"
#include "passes/contrib/common.h"
#include "passes/control_flow/if_to_where.h"
#include "passes/control_flow/unroll_loop.h"
#include "passes/control_flow/unroll_scan.h"
#include "passes/layernorm/fusion_rules.h"
#include "passes/scatter/rewrite_index_put.h"
#include "passes/targeting/compiled_profile.h"
#include "passes/targeting/conditions/common.h"
#include "passes/targeting/conditions/inserts_unit_dims.h"

namespace onnxsurgeon::target {

#define CONDITION(SYMBOL) extern const ConditionKind SYMBOL;
#include "passes/targeting/conditions/conditions.def"

namespace {

constexpr Repeat kOnce = Repeat::kOnce;
constexpr Repeat kRepeatable = Repeat::kRepeatable;

Removal Yes() { return {Removal::kYes, ""}; }
Removal No() { return {}; }

// ---- what steps remove, beyond "every node of these ops" --------------------------------

// Asked of the passes' own recognisers: rewrite-index-put's, and fix-layernorm's custom-op
// rule with its default names (the planner runs fix-layernorm without names=).
Removal RewriteIndexPutRemoves(const RemovalQuery& q) { return passes::IsIndexPut(q.node) ? Yes() : No(); }
Removal FixLayerNormRemoves(const RemovalQuery& q) {
  return layernorm::IsCustomNamedLayerNorm(q.node, layernorm::DefaultCustomNames()) ? Yes() : No();
}

// Planned only where a profile names it as the remedy (nncase-k210, measured): the float
// form is exact in float32 but runs wrong on fp16 backends (rknn2) and was not run on the
// others, so no op finding picks it by default.
Removal DecomposeDynamicQuantizeRemoves(const RemovalQuery&) { return No(); }

// A ScatterND that only selects (constant indices, no reduction) needs none; the fact must
// be about ScatterND itself (the pass may still refuse it: then the blocker stays named).
Removal RewriteConstantScatterNDRemoves(const RemovalQuery& q) {
  const Node& n = q.node;
  if (q.kind || n.num_inputs() < 3 || !IsConstant(n.input(1))) return No();
  const Attribute* r = n.FindAttribute("reduction");
  return !r || r->proto().s() == "none" ? Yes() : No();
}

// Whether `v` is computed from constants and the shapes of values only (Shape, Size), not
// from the data of a graph input or a value of an enclosing graph: with static input
// shapes, fold-constants folds it.
bool OnlyShapeDerived(const Value* v) {
  std::vector<const Value*> todo = {v};
  std::set<const Value*> seen;
  while (!todo.empty()) {
    const Value* x = todo.back();
    todo.pop_back();
    if (!x || !seen.insert(x).second || IsConstant(x)) continue;
    const Node* p = x->producer();
    if (!p || p->graph() != v->graph() || !p->subgraphs().empty()) return false;
    if (p->Is("Shape") || p->Is("Size")) continue;
    for (const Value* in : p->inputs()) todo.push_back(in);
  }
  return true;
}

// simplify folds an If on a constant condition, or on one computed from shapes when the
// input shapes are static; and shape arithmetic once they are.
Removal SimplifyRemoves(const RemovalQuery& q) {
  if (q.node.Is("If")) {
    if (IsConstant(q.node.input(0))) return Yes();
    return q.static_inputs && OnlyShapeDerived(q.node.input(0)) ? Yes() : No();
  }
  if (!q.target.profile.static_shapes) return No();  // Shape and Size: only static-shape targets lack them
  if (!q.static_inputs)
    return {Removal::kNeeds, "give --input-shapes: with static inputs, simplify folds shape arithmetic"};
  return Yes();
}

// if-to-where removes an If it proves exact to compute as Where; else why not (and, for a
// condition on shapes, that static input shapes would let simplify fold it).
Removal IfToWhereRemoves(const RemovalQuery& q) {
  std::optional<TypeFacts> own;
  const TypeFacts* types = q.types;
  if (!types) types = &own.emplace(*q.node.graph()->model());
  std::string why = passes::control_flow::WhyIfStays(q.node, *types, passes::control_flow::kDefaultMaxBranchNodes);
  if (why.empty()) return Yes();
  std::string text = absl::StrCat("if-to-where refuses it: ", why);
  if (!q.static_inputs && OnlyShapeDerived(q.node.input(0)))
    absl::StrAppend(&text, "; its condition depends on input shapes only: give --input-shapes and simplify folds it");
  return {Removal::kNeeds, text};
}

// unroll-loop removes a Loop whose trip count is constant, or will be once fold-constants
// (its pipeline text) folds shapes made static; else why not.
Removal UnrollLoopRemoves(const RemovalQuery& q) {
  using passes::control_flow::kDefaultMaxTrips;
  using passes::control_flow::kDefaultMaxUnrolledNodes;
  std::string why = passes::control_flow::WhyLoopStays(q.node, kDefaultMaxTrips, kDefaultMaxUnrolledNodes);
  if (why.empty()) return Yes();
  const Value* m = q.node.input(0);
  if (m && !IsConstant(m) && OnlyShapeDerived(m)) {
    if (q.static_inputs) return Yes();  // fold-constants makes it constant; the pass decides the rest
    return {Removal::kNeeds,
            "give --input-shapes: with static inputs, its trip count folds and unroll-loop unrolls it"};
  }
  return {Removal::kNeeds, absl::StrCat("unroll-loop refuses it: ", why)};
}

// unroll-scan removes a Scan whose sequence length is static, or will be once set-input-shape
// makes the inputs static and the plan infers shapes again; else why not.
Removal UnrollScanRemoves(const RemovalQuery& q) {
  std::optional<TypeFacts> own;
  const TypeFacts* types = q.types;
  if (!types) types = &own.emplace(*q.node.graph()->model());
  bool length_unknown = false;
  std::string why = passes::control_flow::WhyScanStays(q.node, *types, passes::control_flow::kDefaultMaxTrips,
                                                       passes::control_flow::kDefaultMaxUnrolledNodes, &length_unknown);
  if (why.empty()) return Yes();
  if (length_unknown && q.static_inputs) return Yes();  // the pass decides once shapes are inferred
  if (length_unknown)
    return {Removal::kNeeds,
            "give --input-shapes: with static inputs, its sequence length is known and unroll-scan "
            "unrolls it"};
  return {Removal::kNeeds, absl::StrCat("unroll-scan refuses it: ", why)};
}

// lower-contrib-ops removes the contrib ops it has a rule for (a rule may still refuse a
// node's attributes: then the blocker stays, named with the rule's reason).
Removal LowerContribOpsRemoves(const RemovalQuery& q) { return IsLowerableContribOp(q.node) ? Yes() : No(); }

// fold-qdq(weights=true) folds Q/DQ on constants (a weight's or bias's quantization); an
// activation's QuantizeLinear -> DequantizeLinear is the model's quantization itself.
Removal FoldQdqRemoves(const RemovalQuery& q) {
  const Node& n = q.node;
  const Value* data = n.num_inputs() > 0 ? n.input(0) : nullptr;
  const Node* p = data ? data->producer() : nullptr;
  bool on_constant = data && (IsConstant(data) || (n.Is("DequantizeLinear") && p && p->Is("QuantizeLinear") &&
                                                   p->num_inputs() > 0 && IsConstant(p->input(0))));
  if (on_constant) return Yes();
  return {Removal::kNeeds,
          "fold-qdq folds only Q/DQ on constants; this one quantizes an activation: give the target the float "
          "model (it quantizes from float itself)"};
}

// ---- pipeline texts ------------------------------------------------------------------

// The opset convert-opset must reach for every `input:I` fact that holds in the model: the
// one before the form that takes the input (-1 when none holds).
int64_t OpsetBeforeForms(const CompiledProfile& t, const Model& model) {
  int64_t goal = -1;
  const TypeFacts no_types(model);  // input:I reads no types
  const ConditionAnalyses analyses{no_types};
  for (Graph* g : model.AllGraphs()) {
    for (Node* n : g->nodes()) {
      if (!CanonicalDomain(n->domain()).empty()) continue;
      for (size_t i = 0; i < t.facts.size(); ++i) {
        const MissingOp& m = t.profile.missing[i];
        if (t.facts[i].kind != &kInput || !CanonicalDomain(m.domain).empty()) continue;
        if (std::find(m.ops.begin(), m.ops.end(), n->op_type()) == m.ops.end()) continue;
        std::string detail;
        if (!t.facts[i].condition->Holds(*n, analyses, &detail)) continue;
        int64_t before = OpsetBeforeForm(*n);
        if (before >= 1 && (goal < 0 || before < goal)) goal = before;
      }
    }
  }
  return goal;
}

// lower-contrib-ops limited to the contrib ops the target does not run, each named once
// (in the pass's table order); MatMulNBits and GatherBlockQuantized as float weights where
// the target or the model is below opset 21 (the blocked DequantizeLinear form needs 21) or
// the profile asks for them ([quantization] block_weights = "float").
std::string LowerContribOpsText(const StepTextContext& c) {
  std::set<std::string> lacking;
  const TypeFacts types(c.model);
  const ConditionAnalyses analyses{types};
  for (Graph* g : c.model.AllGraphs())
    for (Node* n : g->nodes())
      if (IsLowerableContribOp(*n) && !RunsContribOp(c.target, *n, &analyses)) lacking.insert(n->op_type());
  std::vector<std::string> ops;
  for (const std::string& op : onnxsurgeon::contrib::LoweredOpTypes())
    if (lacking.count(op)) ops.push_back(op);
  if (ops.empty()) return "lower-contrib-ops";
  std::string text = absl::StrCat("lower-contrib-ops(ops=", absl::StrJoin(ops, ";"));
  if ((lacking.count("MatMulNBits") || lacking.count("GatherBlockQuantized")) &&
      (c.model.OpsetVersion("") < 21 || c.target.profile.opset_max < 21 || c.target.profile.float_block_weights))
    absl::StrAppend(&text, ",dequantize=true");
  return absl::StrCat(text, ")");
}

std::string FixLayerNormText(const StepTextContext& c) {
  return c.target.profile.layernorm == Form::kDecomposed ? "fix-layernorm(to=decomposed)" : "fix-layernorm";
}

// fix-layernorm(to=decomposed) keeps a hand decomposition that is already standard; fusing
// first rewrites it over the last axis (the form the backends ran).
std::string CanonicalLayerNormText(const StepTextContext& c) {
  return c.target.profile.layernorm == Form::kDecomposed ? "fix-layernorm(to=op),decompose-layernorm" : "fix-layernorm";
}

std::string ConvertOpsetText(const StepTextContext& c) {
  const Profile& p = c.target.profile;
  int64_t goal = std::clamp<int64_t>(c.model.OpsetVersion(""), p.opset_min, p.opset_max);
  // A node whose form at this opset the target refuses (convert-opset-before-form) needs an
  // opset below that form: one conversion there, not two (17 -> 13 -> 12).
  if (int64_t before = OpsetBeforeForms(c.target, c.model); before >= p.opset_min && before < goal) goal = before;
  int64_t ml = c.model.OpsetVersion("ai.onnx.ml");
  if (ml >= 0 && p.ml_opset_max >= 0 && ml > p.ml_opset_max)
    return absl::StrCat("convert-opset(opset=", goal, ",ml-opset=", p.ml_opset_max, ")");
  return absl::StrCat("convert-opset=", goal);
}

std::string ConvertOpsetBeforeFormText(const StepTextContext& c) {
  const Profile& p = c.target.profile;
  int64_t goal = std::clamp<int64_t>(c.model.OpsetVersion(""), p.opset_min, p.opset_max);
  int64_t before = OpsetBeforeForms(c.target, c.model);
  if (before >= p.opset_min) goal = std::min(goal, before);
  return absl::StrCat("convert-opset=", goal);
}

// The lowerings write CastLike where a type was unknown, with a Cast to the stash type
// before it: once typed, both are often identities (onnx2tf mistranslated them, measured).
std::string RewriteCastLikeText(const StepTextContext&) { return "rewrite-castlike,strip-identity-cast"; }
// A target that refuses QDQ, or lacks a form of DequantizeLinear (rknn2's per-channel one),
// gets its quantized weights as float too; one that consumes QDQ otherwise keeps them, and
// only its constants' Q -> DQ pairs fold (qdq-constant-operand's remedy).
std::string FoldQdqText(const StepTextContext& c) {
  bool weights = c.target.profile.qdq != "consume";
  for (const MissingOp& m : c.target.profile.missing)
    weights |= std::find(m.ops.begin(), m.ops.end(), "DequantizeLinear") != m.ops.end();
  return weights ? "fold-qdq(weights=true)" : "fold-qdq";
}
std::string SliceStepToConcatText(const StepTextContext&) { return "slice-step-to-gather(form=concat)"; }

std::string SetInputShapeText(const StepTextContext& c) {
  return c.input_shapes.empty() ? "set-input-shape" : absl::StrCat("set-input-shape(shapes=", c.input_shapes, ")");
}

// Annotations re-inferred before (set-input-shape or convert-opset made them stale) and
// after (simplify's folds did): the result carries the types a reload would infer.
std::string SimplifyText(const StepTextContext&) {
  return "infer-shapes(reset=true),simplify,infer-shapes(reset=true)";
}

// The least rank the profile's Reshape fact names ("Reshape when inserts-unit-dims:4").
std::string ReshapeToUnsqueezeText(const StepTextContext& c) {
  int64_t min_rank = 0;
  for (size_t i = 0; i < c.target.facts.size(); ++i) {
    const MissingOp& m = c.target.profile.missing[i];
    if (std::find(m.ops.begin(), m.ops.end(), "Reshape") == m.ops.end() || !c.target.facts[i].condition) continue;
    if (auto rank = InsertsUnitDimsMinRank(*c.target.facts[i].condition)) {
      min_rank = *rank;
      break;
    }
  }
  return min_rank > 0 ? absl::StrCat("reshape-to-unsqueeze(min-rank=", min_rank, ")") : "reshape-to-unsqueeze";
}

// Every backend measured without DynamicQuantizeLinear also refuses its QuantizeLinear form (a
// computed scale) or MatMulInteger/ConvInteger (targets/probes/dynamic_quant_models.txt): the
// float form.
std::string DecomposeDynamicQuantizeText(const StepTextContext&) { return "decompose-dynamic-quantize(to=float)"; }

// compute-in-float32 limited to the ops of the facts that name it as their remedy, where
// such a fact holds in the model (onnxruntime 1.14's float16 HardSigmoid).
std::string ComputeInFloat32Text(const StepTextContext& c) {
  const PlanStep* self = FindPlanStep("compute-in-float32");
  const TypeFacts types(c.model);
  const ConditionAnalyses analyses{types};
  std::set<std::string> ops;
  for (Graph* g : c.model.AllGraphs())
    for (Node* n : g->nodes())
      for (size_t i = 0; i < c.target.facts.size(); ++i) {
        const MissingOp& m = c.target.profile.missing[i];
        const CompiledFact& fact = c.target.facts[i];
        if (fact.remedy != self || CanonicalDomain(m.domain) != CanonicalDomain(n->domain())) continue;
        if (std::find(m.ops.begin(), m.ops.end(), n->op_type()) == m.ops.end()) continue;
        std::string detail;
        if (!fact.condition || fact.condition->Holds(*n, analyses, &detail)) ops.insert(n->op_type());
      }
  return absl::StrCat("compute-in-float32(ops=", absl::StrJoin(ops, ";"), ")");
}

// A trip count computed from shapes folds first (simplify may not have run this round).
std::string UnrollLoopText(const StepTextContext&) { return "fold-constants,unroll-loop"; }

std::string AnnotateShapesText(const StepTextContext&) { return "infer-shapes(reset=true)"; }

std::string LowerIrVersionText(const StepTextContext& c) {
  int64_t max = c.target.profile.ir_max;
  return max >= 0 ? absl::StrCat("lower-ir-version(max=", max, ")") : "lower-ir-version";
}

}  // namespace

bool IsOrtContribOp(const Node& node) {
  if (node.domain() == onnxsurgeon::contrib::kMsDomain) return true;
  if (!CanonicalDomain(node.domain()).empty()) return false;
  if (node.op_type() == "SimplifiedLayerNormalization" || node.op_type() == "SkipSimplifiedLayerNormalization")
    return true;
  // Below opset 17 LayerNormalization is onnxruntime's own (its LayerNormalization-1, which
  // its transformer optimizer writes): not an ai.onnx op there.
  return node.op_type() == "LayerNormalization" && node.graph()->OpsetVersion("") < 17;
}

bool IsLowerableContribOp(const Node& node) {
  if (!IsOrtContribOp(node)) return false;
  const auto& ops = onnxsurgeon::contrib::LoweredOpTypes();
  return std::find(ops.begin(), ops.end(), node.op_type()) != ops.end();
}

bool RunsContribOp(const CompiledProfile& target, const Node& node, const ConditionAnalyses* analyses) {
  const Profile& p = target.profile;
  if (!p.contrib_ops.empty())
    return std::find(p.contrib_ops.begin(), p.contrib_ops.end(), node.op_type()) != p.contrib_ops.end();
  bool known = p.custom_domains && std::any_of(p.known_domains.begin(), p.known_domains.end(),
                                               [](const auto& d) { return d == onnxsurgeon::contrib::kMsDomain; });
  if (!known) return false;
  for (size_t i = 0; i < p.missing.size(); ++i) {
    const MissingOp& m = p.missing[i];
    if (CanonicalDomain(m.domain) != CanonicalDomain(node.domain())) continue;
    if (std::find(m.ops.begin(), m.ops.end(), node.op_type()) == m.ops.end()) continue;
    const Condition* condition = target.facts[i].condition.get();
    if (!condition) return false;
    std::string detail;
    if (analyses && condition->Holds(node, *analyses, &detail)) return false;  // a form it lacks
  }
  return true;
}

Removal PlanStep::RemovesNode(const RemovalQuery& q) const {
  if (removes_ops.empty()) return No();
  if (removes_ops != "*") {
    bool listed = false;
    // The passes rewrite the standard op of that name, not a custom domain's.
    for (absl::string_view op : absl::StrSplit(removes_ops, ';')) listed |= q.node.op_type() == op;
    if (!listed || !CanonicalDomain(q.node.domain()).empty()) return No();
  }
  return removes_when ? removes_when(q) : Yes();
}

std::string PlanStep::PipelineText(const StepTextContext& context) const {
  return text ? text(context) : std::string(name);
}

const std::vector<PlanStep>& PlanSteps() {
  static const std::vector<PlanStep> steps = [] {
    std::vector<PlanStep> out = {
#define PLAN_STEP(NAME, PASS, REPEAT, REMOVES_OPS, REMOVES_WHEN, TEXT) \
  PlanStep{NAME, PASS, REPEAT, REMOVES_OPS, REMOVES_WHEN, TEXT, 0},
#include "passes/passes.def"
    };
    for (size_t i = 0; i < out.size(); ++i) out[i].order = static_cast<int>(i);
    return out;
  }();
  return steps;
}

const PlanStep* FindPlanStep(absl::string_view name) {
  for (const PlanStep& s : PlanSteps())
    if (s.name == name) return &s;
  return nullptr;
}

const PlanStep& PlanStepNamed(absl::string_view name) {
  if (const PlanStep* s = FindPlanStep(name)) return *s;
  std::cerr << "onnxsurgeon: internal error: no plan step '" << name << "' in passes/passes.def\n";
  std::abort();
}

}  // namespace onnxsurgeon::target

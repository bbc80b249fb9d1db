// unroll-scan: writes a Scan whose sequence length is static as one copy of its body per
// step, for runtimes without Scan (nncase, rknn2, ncnn, onnx2tf/TFLite).
//
// Exact: step t computes the body on the state values step t-1 gave (the initial ones for
// t = 0) and on each scan input's element t along its axis (element length-1-t for a
// reverse scan input), picked by Gather with a scalar index, which drops the axis as the
// body expects; the Scan's final states are the last step's, each scan output the steps'
// values stacked along its axis (Unsqueeze, then Concat; in reverse order for a prepending
// output). Opset 8's form (batch axis 0, scan axis 1, `directions` for the inputs) runs
// the body per batch row: each row's states and inputs are Gathers of row b, and the rows'
// results are stacked on axis 0 again. The pass converts a Scan only when:
// - every scan input's length along its axis is static and the same, at least 1 and at
//   most max-steps (opset 8: the batch static too, sequence_lens absent or a constant
//   equal to the length everywhere);
// - the ranks its negative axes count from are known;
// - steps (x batch rows) x body nodes (Constants not counted) is at most max-nodes.
// Body initializers become initializers of the Scan's graph, once; nested control flow is
// copied per step as it is.
//
// Options: max-steps, max-nodes.
//
// Given:  %hN, %ys = Scan<num_scan_inputs = 1>(%h0, %xs)
//             <body = (%h, %x) => (%h2, %h2) { %h2 = Add(%h, %x) }>       xs: float[2,3]
// Result: %h1 = Add(%h0, Gather(%xs, 0))   %h2 = Add(%h1, Gather(%xs, 1))
//         %ys = Concat<axis = 0>(Unsqueeze(%h1, [0]), Unsqueeze(%h2, [0]))  (%hN is %h2)
#include "passes/control_flow/unroll_scan.h"

#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/clone.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/ir/shape.h"
#include "core/ir/tensor.h"
#include "core/pass/pattern_pass.h"
#include "passes/control_flow/innermost_first.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct ScanPlan {
  const Graph* body = nullptr;
  size_t states = 0, scan_inputs = 0, scan_outputs = 0;
  int64_t steps = 0;
  bool batched = false;    // opset 8: batch axis 0, input 0 sequence_lens
  bool axes_input = true;  // Unsqueeze takes its axes as an input (opset 13)
  int64_t batch = -1;      // opset 8: rows of the batch axis, each scanned apart
  std::vector<int64_t> in_axes, in_reverse, out_axes, out_reverse;  // axes non-negative
};

std::vector<int64_t> IntsOr(const Node& n, const char* name, size_t count, int64_t fallback) {
  const Attribute* a = n.FindAttribute(name);
  return a ? a->ints() : std::vector<int64_t>(count, fallback);
}

// The body's inputs and outputs against the Scan's; the attribute lists against M and K.
Verdict<ScanPlan> Shell(const Node& scan, bool batched) {
  std::vector<Graph*> subs = scan.subgraphs();
  if (subs.size() != 1) return Refuse("it has no body");
  ScanPlan plan;
  plan.body = subs[0];
  const Attribute* m = scan.FindAttribute("num_scan_inputs");
  if (!m || m->i() < 1) return Refuse("num_scan_inputs is missing or below 1");
  const size_t first = batched ? 1 : 0;  // opset 8: input 0 is sequence_lens
  if (scan.num_inputs() < first + static_cast<size_t>(m->i())) return Refuse("it has fewer inputs than scan inputs");
  plan.scan_inputs = static_cast<size_t>(m->i());
  plan.states = scan.num_inputs() - first - plan.scan_inputs;
  if (scan.num_outputs() < plan.states || plan.body->inputs().size() != plan.states + plan.scan_inputs ||
      plan.body->outputs().size() != scan.num_outputs())
    return Refuse("its body's inputs and outputs do not match its own");
  plan.scan_outputs = scan.num_outputs() - plan.states;
  for (size_t i = first; i < scan.num_inputs(); ++i)
    if (!scan.input(i)) return Refuse("a state or scan input is missing");
  plan.in_reverse = IntsOr(scan, batched ? "directions" : "scan_input_directions", plan.scan_inputs, 0);
  plan.in_axes = IntsOr(scan, "scan_input_axes", plan.scan_inputs, batched ? 1 : 0);
  plan.out_reverse = IntsOr(scan, "scan_output_directions", plan.scan_outputs, 0);
  plan.out_axes = IntsOr(scan, "scan_output_axes", plan.scan_outputs, 0);
  if (plan.in_reverse.size() != plan.scan_inputs || plan.in_axes.size() != plan.scan_inputs ||
      plan.out_reverse.size() != plan.scan_outputs || plan.out_axes.size() != plan.scan_outputs)
    return Refuse("an axes or directions attribute does not have one entry per scan input or output");
  return plan;
}

// The static sequence length every scan input agrees on (and, opset 8, the static batch);
// negative axes made non-negative.
Verdict<ScanPlan> Lengths(const Node& scan, const TypeFacts& types, ScanPlan plan, bool* unknown) {
  const size_t first = plan.batched ? 1 : 0;
  plan.steps = -1;
  for (size_t j = 0; j < plan.scan_inputs; ++j) {
    const Value* x = scan.input(first + plan.states + j);
    std::optional<std::vector<int64_t>> dims = types.Dims(x);
    *unknown = !dims.has_value();
    if (*unknown) return Refuse(absl::StrCat("the rank of scan input ", j, " is unknown (run infer-shapes first)"));
    const int64_t rank = static_cast<int64_t>(dims->size());
    int64_t& axis = plan.in_axes[j];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return Refuse(absl::StrCat("scan input ", j, "'s axis is outside its rank"));
    const int64_t length = (*dims)[axis];
    *unknown = length < 0;
    if (*unknown)
      return Refuse(absl::StrCat("scan input ", j, "'s length is not static (with --input-shapes it may be)"));
    if (plan.steps >= 0 && length != plan.steps) return Refuse("its scan inputs' lengths differ");
    plan.steps = length;
    if (plan.batched) {
      *unknown = (*dims)[0] < 0;
      if (*unknown) return Refuse("its batch is not static (with --input-shapes it may be)");
      if (plan.batch >= 0 && plan.batch != (*dims)[0]) return Refuse("its scan inputs' batches differ");
      plan.batch = (*dims)[0];
    }
  }
  for (size_t k = 0; k < plan.scan_outputs; ++k) {
    int64_t& axis = plan.out_axes[k];
    if (axis >= 0) continue;
    const int64_t rank = types.Rank(plan.body->outputs()[plan.states + k]);
    *unknown = rank < 0;
    if (*unknown) return Refuse(absl::StrCat("scan output ", k, " has a negative axis and a rank that is unknown"));
    axis += rank + 1;
    if (axis < 0) return Refuse(absl::StrCat("scan output ", k, "'s axis is outside its rank"));
  }
  return plan;
}

Verdict<ScanPlan> Decide(const Node& scan, const TypeFacts& types, int64_t max_steps, int64_t max_nodes,
                         bool* unknown) {
  if (!scan.domain().empty() && scan.domain() != "ai.onnx") return Refuse("a custom-domain Scan");
  const bool batched = scan.graph()->model()->OpsetVersion("") < 9;
  Verdict<ScanPlan> shell = Shell(scan, batched);
  if (!shell) return shell;
  ScanPlan plan = *shell;
  plan.batched = batched;
  plan.axes_input = scan.graph()->model()->OpsetVersion("") >= 13;
  Verdict<ScanPlan> sized = Lengths(scan, types, std::move(plan), unknown);
  if (!sized) return sized;
  plan = *sized;
  if (batched) {
    if (plan.batch < 1) return Refuse("its batch is empty");
    plan.in_axes.assign(plan.scan_inputs, 0);  // scan axis 1 of the tensor is axis 0 of a row
    if (const Value* lens = scan.input(0)) {
      std::optional<std::vector<int64_t>> values = ConstantInt64s(lens);
      if (!values) return Refuse("its sequence_lens is computed at run time");
      for (int64_t v : *values)
        if (v != plan.steps)
          return Refuse(absl::StrCat("its sequence_lens holds ", v, ", not the sequence length ", plan.steps));
    }
  }
  if (plan.steps < 1) return Refuse("its sequence length is 0 (no step to write)");
  if (plan.steps > max_steps)
    return Refuse(absl::StrCat("its sequence length ", plan.steps, " is above max-steps=", max_steps));
  int64_t nodes = 0;
  for (Node* n : plan.body->nodes()) nodes += n->Is("Constant") ? 0 : 1;
  const int64_t copies = plan.steps * (batched ? plan.batch : 1);
  if (nodes * copies > max_nodes)
    return Refuse(absl::StrCat(copies, " copies of ", nodes, " body nodes are above max-nodes=", max_nodes));
  return plan;
}

StatusOr<Value*> Pick(Rewriter& rw, Value* v, int64_t index, int64_t axis) {
  OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromInt64s(onnx::TensorProto::INT64, {}, {index}));
  OS_ASSIGN_OR_RETURN(Value * i, rw.Constant(std::move(t), "step"));
  return rw.Op("Gather", {v, i}, {Rewriter::AttrInt("axis", axis)});
}

// `values` stacked on a new axis `axis` (Unsqueeze each, then Concat).
Value* Stack(Rewriter& rw, const std::vector<Value*>& values, int64_t axis, bool axes_input) {
  std::vector<Value*> rows;
  for (Value* v : values)
    rows.push_back(axes_input ? rw.Op("Unsqueeze", {v, rw.Int64s({axis})})
                              : rw.Op("Unsqueeze", {v}, {Rewriter::AttrInts("axes", {axis})}));
  return rows.size() == 1 ? rows[0] : rw.Op("Concat", rows, {Rewriter::AttrInt("axis", axis)});
}

// The body once per step on `states` and `inputs` (one batch row, or the whole tensors
// from opset 9): the final states, then the stacked scan outputs. `inits` maps the body's
// initializers once copied (the first step copies them).
StatusOr<std::vector<Value*>> UnrollSteps(Rewriter& rw, const ScanPlan& plan, std::vector<Value*> states,
                                          const std::vector<Value*>& inputs, ValueMap& inits, const std::string& prefix,
                                          std::vector<Node*>& copies) {
  const Graph& body = *plan.body;
  std::vector<std::vector<Value*>> scanned(plan.scan_outputs);
  for (int64_t t = 0; t < plan.steps; ++t) {
    ValueMap map = inits;
    for (size_t k = 0; k < plan.states; ++k) map[body.inputs()[k]] = states[k];
    for (size_t j = 0; j < plan.scan_inputs; ++j) {
      const int64_t index = plan.in_reverse[j] ? plan.steps - 1 - t : t;
      OS_ASSIGN_OR_RETURN(map[body.inputs()[plan.states + j]], Pick(rw, inputs[j], index, plan.in_axes[j]));
    }
    OS_ASSIGN_OR_RETURN(std::vector<Value*> out, rw.Inline(body, map, absl::StrCat(prefix, t, "/")));
    for (Value* init : body.initializers()) inits[init] = map[init];
    for (const auto& [from, to] : map)
      if (to && to != from && to->producer()) copies.push_back(to->producer());
    for (Value* v : out)
      if (!v) return absl::InvalidArgumentError("unroll-scan: a body output is undefined");
    for (size_t k = 0; k < plan.states; ++k) states[k] = out[k];
    for (size_t k = 0; k < plan.scan_outputs; ++k) scanned[k].push_back(out[plan.states + k]);
  }
  std::vector<Value*> results = states;
  for (size_t k = 0; k < plan.scan_outputs; ++k) {
    std::vector<Value*>& values = scanned[k];
    if (plan.out_reverse[k]) std::reverse(values.begin(), values.end());
    results.push_back(Stack(rw, values, plan.out_axes[k], plan.axes_input));
  }
  return results;
}

// Given a Scan and its plan. Execute writes the steps before it (per batch row in opset 8)
// and points its users at the final states and stacked scan outputs. Result the Scan is gone.
Status Replace(Node* root, const ScanPlan& plan, Rewriter& rw) {
  const std::string prefix = absl::StrCat(root->name().empty() ? std::string("Scan") : root->name(), "/");
  const size_t first = plan.batched ? 1 : 0;
  std::vector<Value*> states, inputs;
  for (size_t k = 0; k < plan.states; ++k) states.push_back(root->input(first + k));
  for (size_t j = 0; j < plan.scan_inputs; ++j) inputs.push_back(root->input(first + plan.states + j));
  rw.SetInsertionPoint(root);
  ValueMap inits;
  std::vector<Value*> results;
  std::vector<Node*> copies;  // the body's copies: those nobody reads (step counters) go
  if (!plan.batched) {
    OS_ASSIGN_OR_RETURN(results, UnrollSteps(rw, plan, states, inputs, inits, prefix, copies));
  } else {
    std::vector<std::vector<Value*>> rows(root->num_outputs());
    for (int64_t b = 0; b < plan.batch; ++b) {
      std::vector<Value*> row_states(states.size()), row_inputs(inputs.size());
      for (size_t k = 0; k < states.size(); ++k) {
        OS_ASSIGN_OR_RETURN(row_states[k], Pick(rw, states[k], b, 0));
      }
      for (size_t j = 0; j < inputs.size(); ++j) {
        OS_ASSIGN_OR_RETURN(row_inputs[j], Pick(rw, inputs[j], b, 0));
      }
      OS_ASSIGN_OR_RETURN(std::vector<Value*> row, UnrollSteps(rw, plan, row_states, row_inputs, inits,
                                                               absl::StrCat(prefix, "row", b, "/"), copies));
      for (size_t i = 0; i < row.size(); ++i) rows[i].push_back(row[i]);
    }
    for (auto& values : rows) results.push_back(Stack(rw, values, 0, plan.axes_input));
  }
  for (size_t i = 0; i < root->num_outputs(); ++i) {
    Value* out = root->output(i);
    if (!out) continue;
    if (out->info() && !results[i]->has_type() && results[i]->producer() && results[i]->graph() == out->graph())
      *results[i]->mutable_info() = *out->info();
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(out, results[i], GraphOutputs::kKeepNames));
  }
  OS_RETURN_IF_ERROR(rw.EraseNode(root));
  rw.EraseDead(std::move(copies));
  return absl::OkStatus();
}

// Shapes for the scan inputs (their lengths), from the local rules or onnx inference,
// only when some Scan's scan input has none.
void InferScanInputShapes(Model& model) {
  auto needs = [](const Model& m) {
    for (Node* n : m.graph().AllNodesRecursive()) {
      if (!n->Is("Scan") || !n->domain().empty()) continue;
      for (Value* in : n->inputs())
        if (in && !ShapeOf(in)) return true;
    }
    return false;
  };
  TypeRequest request;  // as InferShapes(model, false): recorded in value_info
  request.infer.data_propagation = false;
  request.infer.max_payload_bytes = -1;
  (void)TypeFacts::Ensure(model, needs, request);
}

class UnrollScanPass : public Pass {
 public:
  UnrollScanPass(int64_t max_steps, int64_t max_nodes) : max_steps_(max_steps), max_nodes_(max_nodes) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    InferScanInputShapes(model);
    TypeFacts types(model);
    return control_flow::ConvertInnermostFirst(
        model, context, "Scan", "unroll-scan", &types, [&](Node* n, Rewriter& rw) -> StatusOr<std::string> {
          bool unknown = false;
          Verdict<ScanPlan> plan = Decide(*n, types, max_steps_, max_nodes_, &unknown);
          if (!plan) return plan.reason();
          OS_RETURN_IF_ERROR(Replace(n, *plan, rw));
          return std::string();
        });
  }

 private:
  int64_t max_steps_, max_nodes_;
};

}  // namespace

namespace control_flow {
std::string WhyScanStays(const Node& node, const TypeFacts& types, int64_t max_steps, int64_t max_nodes,
                         bool* length_unknown) {
  bool unknown = false;
  Verdict<ScanPlan> v = Decide(node, types, max_steps, max_nodes, &unknown);
  if (length_unknown) *length_unknown = !v && unknown;
  return v ? "" : v.reason();
}
}  // namespace control_flow

StatusOr<std::unique_ptr<Pass>> CreateUnrollScanPass(const PassOptions& o) {
  return std::make_unique<UnrollScanPass>(o.Int("max-steps"), o.Int("max-nodes"));
}

}  // namespace onnxsurgeon::passes

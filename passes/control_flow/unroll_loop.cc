// unroll-loop: writes a Loop whose trip count is a constant, and whose body never exits
// early, as that many copies of its body, for runtimes without Loop (rknn2, nncase-k210,
// ncnn; tflite where the body reads values of the main graph and loop-carry-outer-values
// cannot carry them).
//
// Exact: iteration t computes the body on the iteration number t (a constant), the
// condition true and the carried values iteration t-1 gave (the initial ones for t = 0),
// reading values of the enclosing graphs as the body did; the Loop's carried outputs are
// the last iteration's, its scan outputs each iteration's value stacked on a new axis 0
// (Unsqueeze, then Concat). The pass converts a Loop only when:
// - its trip count is a constant (fold-constants or resolve-shapes may make it one; the
//   `--target` plan runs fold-constants first), at least 1 and at most max-trips;
// - its condition is absent or a constant true, and the body's condition output is a
//   constant true or the body's own condition input passed through (Identity): any
//   other may end the loop early, at a count only known at run time;
// - trips x body nodes (Constants not counted) is at most max-nodes.
// Body initializers become initializers of the Loop's graph, once; nested control flow is
// copied per iteration as it is.
//
// Options: max-trips, max-nodes.
//
// Given:  %hN, %ys = Loop(2, "", %h0) <body = (%i, %c, %h) => (%c, %h2, %h2) { %h2 = Add(%h, %x) }>
// Result: %h1 = Add(%h0, %x)   %h2 = Add(%h1, %x)
//         %ys = Concat<axis = 0>(Unsqueeze(%h1, [0]), Unsqueeze(%h2, [0]))   (%hN is %h2)
#include "passes/control_flow/unroll_loop.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
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

struct LoopPlan {
  Graph* body = nullptr;
  int64_t trips = 0;
  size_t carried = 0;  // loop-carried values (the Loop's inputs after M and cond)
};

bool ConstantTrue(const Value* v) {
  auto c = GetConstant(v);
  auto ints = c ? c->AsInt64s() : std::nullopt;
  return ints && ints->size() == 1 && (*ints)[0] != 0;
}

// Whether the body's condition output is always true: a constant true, or its own
// condition input (true in every iteration, given a true start) through Identities.
bool BodyKeepsGoing(const Graph& body) {
  const Value* out = body.outputs()[0];
  while (out && out->producer() && out->producer()->Is("Identity")) out = out->producer()->input(0);
  return ConstantTrue(out) || out == body.inputs()[1];
}

Verdict<LoopPlan> Decide(const Node& loop, int64_t max_trips, int64_t max_nodes) {
  if (!loop.domain().empty() && loop.domain() != "ai.onnx") return Refuse("a custom-domain Loop");
  std::vector<Graph*> subs = loop.subgraphs();
  if (subs.size() != 1) return Refuse("it has no body");
  LoopPlan plan;
  plan.body = subs[0];
  const Graph& body = *plan.body;
  if (loop.num_inputs() < 2) return Refuse("it has no condition input slot");
  plan.carried = loop.num_inputs() - 2;
  if (body.inputs().size() != 2 + plan.carried || body.outputs().size() < 1 + plan.carried ||
      loop.num_outputs() != body.outputs().size() - 1)
    return Refuse("its body's inputs and outputs do not match its own");
  const Value* m = loop.input(0);
  if (!m) return Refuse("it has no trip count (it runs until its condition is false)");
  auto count = GetConstant(m);
  auto trips = count ? count->AsInt64s() : std::nullopt;
  if (!trips || trips->size() != 1)
    return Refuse("its trip count is computed at run time (with static input shapes fold-constants may fold it)");
  plan.trips = (*trips)[0];
  if (plan.trips < 1) return Refuse(absl::StrCat("its trip count is ", plan.trips, " (no iteration to write)"));
  if (plan.trips > max_trips)
    return Refuse(absl::StrCat("its trip count ", plan.trips, " is above max-trips=", max_trips));
  if (loop.input(1) && !ConstantTrue(loop.input(1))) return Refuse("its condition is not a constant true");
  if (!BodyKeepsGoing(body))
    return Refuse("its body computes its condition (the loop may end early, after a count known only at run time)");
  int64_t nodes = 0;
  for (Node* n : body.nodes()) nodes += n->Is("Constant") ? 0 : 1;
  if (nodes * plan.trips > max_nodes)
    return Refuse(absl::StrCat(plan.trips, " iterations of ", nodes, " nodes are above max-nodes=", max_nodes));
  return plan;
}

StatusOr<Value*> IterationNumber(Rewriter& rw, const Value* body_input, int64_t t, int32_t type) {
  std::vector<int64_t> dims;
  if (auto shape = ShapeOf(body_input); shape && shape->size() == 1) dims = {1};
  OS_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromInt64s(type, dims, {t}));
  return rw.Constant(std::move(tensor), type == onnx::TensorProto::BOOL ? "cond" : "iteration");
}

// Given a Loop and its plan. Execute clones the body once per iteration before it and
// points its users at the last carried values and the stacked scan values. Result the Loop
// is gone.
Status Replace(Node* root, const LoopPlan& plan, Rewriter& rw) {
  Graph& g = *root->graph();
  const Graph& body = *plan.body;
  const std::string prefix = root->name().empty() ? std::string("Loop") : root->name();
  ValueMap outer;  // what every iteration reads as the body did: enclosing values, initializers
  for (Node* bn : body.AllNodesRecursive())
    for (Value* in : bn->inputs())
      if (in && !in->graph()->IsWithin(plan.body)) outer[in] = in;
  for (Value* out : body.outputs())
    if (!out->graph()->IsWithin(plan.body)) outer[out] = out;
  for (Value* init : body.initializers()) {
    OS_ASSIGN_OR_RETURN(
        Value * v, rw.AddInitializer(&g, g.UniqueName(absl::StrCat(prefix, "/", init->name())), *init->initializer()));
    outer[init] = v;
  }
  std::vector<Value*> carried;
  for (size_t k = 0; k < plan.carried; ++k) carried.push_back(root->input(2 + k));
  const size_t scans = body.outputs().size() - 1 - plan.carried;
  std::vector<std::vector<Value*>> scanned(scans);
  rw.SetInsertionPoint(root);
  OS_ASSIGN_OR_RETURN(Value * keep_going, IterationNumber(rw, body.inputs()[1], 1, onnx::TensorProto::BOOL));
  for (int64_t t = 0; t < plan.trips; ++t) {
    ValueMap map = outer;
    OS_ASSIGN_OR_RETURN(Value * number, IterationNumber(rw, body.inputs()[0], t, onnx::TensorProto::INT64));
    map[body.inputs()[0]] = number;
    map[body.inputs()[1]] = keep_going;
    for (size_t k = 0; k < plan.carried; ++k) map[body.inputs()[2 + k]] = carried[k];
    rw.SetInsertionPoint(root);
    const std::string iteration = absl::StrCat(prefix, "/", t, "/");
    for (Node* bn : body.nodes()) OS_RETURN_IF_ERROR(rw.Clone(*bn, map, iteration).status());
    for (size_t k = 0; k < plan.carried; ++k) carried[k] = map[body.outputs()[1 + k]];
    for (size_t j = 0; j < scans; ++j) scanned[j].push_back(map[body.outputs()[1 + plan.carried + j]]);
  }
  rw.SetInsertionPoint(root);
  const bool axes_input = g.model()->OpsetVersion("") >= 13;
  std::vector<Value*> results = carried;
  for (auto& values : scanned) {
    std::vector<Value*> rows;
    for (Value* v : values) {
      if (!v) return absl::InvalidArgumentError("unroll-loop: a scan output is undefined");
      rows.push_back(axes_input ? rw.Op("Unsqueeze", {v, rw.Int64s({0})})
                                : rw.Op("Unsqueeze", {v}, {Rewriter::AttrInts("axes", {0})}));
    }
    results.push_back(rows.size() == 1 ? rows[0] : rw.Op("Concat", rows, {Rewriter::AttrInt("axis", 0)}));
  }
  for (size_t i = 0; i < root->num_outputs(); ++i) {
    Value* out = root->output(i);
    if (!out) continue;
    if (!results[i]) return absl::InvalidArgumentError("unroll-loop: a loop output is undefined");
    if (out->info() && !results[i]->has_type() && results[i]->producer() && results[i]->graph() == out->graph())
      *results[i]->mutable_info() = *out->info();
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(out, results[i], GraphOutputs::kKeepNames));
  }
  return rw.EraseNode(root);
}

class UnrollLoopPass : public Pass {
 public:
  UnrollLoopPass(int64_t max_trips, int64_t max_nodes) : max_trips_(max_trips), max_nodes_(max_nodes) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    return control_flow::ConvertInnermostFirst(model, context, "Loop", "unroll-loop", nullptr,
                                               [&](Node* n, Rewriter& rw) -> StatusOr<std::string> {
                                                 Verdict<LoopPlan> plan = Decide(*n, max_trips_, max_nodes_);
                                                 if (!plan) return plan.reason();
                                                 OS_RETURN_IF_ERROR(Replace(n, *plan, rw));
                                                 return std::string();
                                               });
  }

 private:
  int64_t max_trips_, max_nodes_;
};

}  // namespace

namespace control_flow {
std::string WhyLoopStays(const Node& node, int64_t max_trips, int64_t max_nodes) {
  Verdict<LoopPlan> v = Decide(node, max_trips, max_nodes);
  return v ? "" : v.reason();
}
}  // namespace control_flow

StatusOr<std::unique_ptr<Pass>> CreateUnrollLoopPass(const PassOptions& o) {
  return std::make_unique<UnrollLoopPass>(o.Int("max-trips"), o.Int("max-nodes"));
}

}  // namespace onnxsurgeon::passes

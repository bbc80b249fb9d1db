// lower-contrib-ops: onnxruntime-only ops (com.microsoft, and the default-domain ops
// onnxruntime registers itself: SimplifiedLayerNormalization, LayerNormalization below
// opset 17) lowered to standard ONNX at the model's opset, for runtimes other than
// onnxruntime. The rules live in passes/contrib/, one per op (see passes/contrib/common.h);
// each new node carries its rule's name.
//
// Options:
//   ops=A;B           only these op types (default: every op the pass lowers)
//   dequantize=false  MatMulNBits, GatherBlockQuantized: float weights (dequantized by the
//                     pass) instead of blocked DequantizeLinear, the only lowering below
//                     opset 21; MatMulBnb4: float weights instead of its codes
//   inexact=false     QLinearSoftmax: lowered too (onnxruntime's kernel uses a lookup table;
//                     the QDQ form is within one quantization step of it); DynamicQuantizeLSTM:
//                     the float LSTM on its dequantized weights (onnxruntime quantizes X and
//                     the hidden state per step)
//
// Ops with no rule here (QOrderedMatMul, QLinearReduceMean...) and nodes a
// rule refused stay as they are; the result names each, with the rule's reason, as
// "left: <domain>.<op>[: reason]" counts (these do not mark the model changed). The
// com.microsoft opset import goes when no node uses it any more.
//
// Before:  y = com.microsoft.FastGelu(x, b)                     (opset 17)
// After:   s = Add(x, b)   y = 0.5 s (1 + Tanh(0.7978846 (s + 0.044715 s^3)))
#include <algorithm>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/pass/pattern_pass.h"
#include "core/rewrite/greedy_driver.h"
#include "passes/contrib/common.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// An onnxruntime-only op: com.microsoft, or one onnxruntime registers in the default domain.
bool IsContribOp(const Node& node) {
  if (node.domain() == contrib::kMsDomain) return true;
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  if (node.op_type() == "SimplifiedLayerNormalization" || node.op_type() == "SkipSimplifiedLayerNormalization")
    return true;
  return node.op_type() == "LayerNormalization" && node.graph()->OpsetVersion("") < 17;
}

// With ops=, the contrib ops the pass keeps still hide their outputs' types from onnx
// inference (it has no com.microsoft schemas), so a lowered op downstream (a
// MultiHeadAttention after SkipLayerNormalization) would wait for a rank forever. The kept
// ops whose output 0 is typed as their input 0 (the normalizations and activations), and
// EmbedLayerNormalization's ([ids dims..., D] of the word embedding's type; the word
// scale's for QEmbedLayerNormalization, whose tables are quantized), declare it.
// A value_info with an element type but no shape (what onnxruntime's float16 converter
// writes for the contrib ops' outputs) declares no rank: it is filled in like a missing one.
bool Shapeless(const Value* v) {
  const onnx::TypeProto* t = v->type();
  return !t || (t->has_tensor_type() && !t->tensor_type().has_shape());
}

int DeclareKeptOutputTypes(Model& model, const std::vector<std::string>& ops) {
  int declared = 0;
  static const char* kSameAsInput[] = {"SkipLayerNormalization",
                                       "SkipSimplifiedLayerNormalization",
                                       "SimplifiedLayerNormalization",
                                       "Gelu",
                                       "FastGelu",
                                       "BiasGelu",
                                       "QuickGelu",
                                       "BiasAdd",
                                       "GroupNorm",
                                       "SkipGroupNorm"};
  const TypeFacts types(model);  // computed values' types, by onnx inference and the op table
  std::vector<std::unique_ptr<onnx::TypeProto>> made;
  // Find answers only what is recorded: element type and dims come from the local rules.
  auto type_of = [&](const Value* v) -> const onnx::TypeProto* {
    if (!v) return nullptr;
    if (const onnx::TypeProto* t = types.Find(v); t && t->has_tensor_type() && t->tensor_type().has_shape()) return t;
    int32_t elem = types.ElemType(v);
    std::optional<std::vector<int64_t>> dims = types.Dims(v);
    if (elem == 0 || !dims) return nullptr;
    auto t = std::make_unique<onnx::TypeProto>();
    t->mutable_tensor_type()->set_elem_type(elem);
    auto* shape = t->mutable_tensor_type()->mutable_shape();
    for (int64_t d : *dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
    }
    made.push_back(std::move(t));
    return made.back().get();
  };
  for (Node* n : model.graph().AllNodesRecursive()) {
    if (!IsContribOp(*n) || std::find(ops.begin(), ops.end(), n->op_type()) != ops.end()) continue;
    if (n->num_outputs() == 0 || !n->output(0) || !Shapeless(n->output(0)) || !type_of(n->input(0))) continue;
    const onnx::TypeProto* in = type_of(n->input(0));
    if (!in->has_tensor_type()) continue;
    if (std::find(std::begin(kSameAsInput), std::end(kSameAsInput), n->op_type()) != std::end(kSameAsInput)) {
      *n->output(0)->mutable_info()->mutable_type() = *in;
      ++declared;
      if (!n->output(0)->in_value_info() && !n->output(0)->IsGraphOutput()) n->graph()->AddValueInfo(n->output(0));
    } else if (const onnx::TypeProto* word = n->num_inputs() > 2 ? type_of(n->input(2)) : nullptr;
               (n->op_type() == "EmbedLayerNormalization" || n->op_type() == "QEmbedLayerNormalization") && word &&
               word->has_tensor_type() && word->tensor_type().has_shape() && in->tensor_type().has_shape() &&
               word->tensor_type().shape().dim_size() == 2) {
      const bool quantized = n->op_type() == "QEmbedLayerNormalization";
      const int32_t elem =
          quantized ? (n->input(8) ? types.ElemType(n->input(8)) : 0) : word->tensor_type().elem_type();
      if (elem == 0) continue;
      onnx::TypeProto t;
      t.mutable_tensor_type()->set_elem_type(elem);
      auto* shape = t.mutable_tensor_type()->mutable_shape();
      for (const auto& d : in->tensor_type().shape().dim()) *shape->add_dim() = d;
      *shape->add_dim() = word->tensor_type().shape().dim(1);
      *n->output(0)->mutable_info()->mutable_type() = t;
      // mask_index: each row's count of ones, int32 [batch]
      if (n->num_outputs() > 1 && n->output(1) && Shapeless(n->output(1)) &&
          in->tensor_type().shape().dim_size() >= 1) {
        onnx::TypeProto m;
        m.mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT32);
        *m.mutable_tensor_type()->mutable_shape()->add_dim() = in->tensor_type().shape().dim(0);
        *n->output(1)->mutable_info()->mutable_type() = m;
        if (!n->output(1)->in_value_info() && !n->output(1)->IsGraphOutput()) n->graph()->AddValueInfo(n->output(1));
      }
      ++declared;
      if (!n->output(0)->in_value_info() && !n->output(0)->IsGraphOutput()) n->graph()->AddValueInfo(n->output(0));
    }
  }
  return declared;
}

class LowerContribOpsPass : public Pass {
 public:
  LowerContribOpsPass(std::vector<std::string> ops, bool dequantize, bool inexact)
      : ops_(std::move(ops)), dequantize_(dequantize), inexact_(inexact) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    std::vector<contrib::ContribRule> all = contrib::MakeNormRules(!context.IsForbidden("LayerNormalization"));
    for (auto& r : contrib::MakeActivationRules(!context.IsForbidden("Gelu"))) all.push_back(std::move(r));
    for (auto& r : contrib::MakeMatMulRules(dequantize_)) all.push_back(std::move(r));
    for (auto& r : contrib::MakeMatMulBnb4Rules(dequantize_)) all.push_back(std::move(r));
    for (auto& r : contrib::MakeGatherBlockQuantizedRules(dequantize_)) all.push_back(std::move(r));
    for (auto& r : contrib::MakeRotaryRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeAttentionRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeGqaRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeGroupNormRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeRelPosBiasRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeFusedConvRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeQuantRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeQuantLstmRules(inexact_)) all.push_back(std::move(r));
    for (auto& r : contrib::MakeQLinearRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeQLinearSoftmaxRules(inexact_)) all.push_back(std::move(r));
    for (auto& r : contrib::MakeQGemmRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeEmbedRules(!context.IsForbidden("LayerNormalization"))) all.push_back(std::move(r));
    std::vector<const RewriteRule*> rules;
    for (const auto& r : all)
      if (ops_.empty() || std::find(ops_.begin(), ops_.end(), r.op_type) != ops_.end()) rules.push_back(r.rule.get());

    GreedyOptions options = WithDebugPatterns({}, context);
    options.top_down = true;  // producers first: a lowered op's outputs are typed for its users
    absl::flat_hash_map<const Node*, std::string> why_left;
    auto debug = std::move(options.explain);
    options.explain = [&](const std::string& rule, const Node& node, const std::string& why) {
      if (!why.empty()) why_left[&node] = why;
      if (debug) debug(rule, node, why);
    };
    // Rounds: onnx inference and the op table type the model once per run, when the
    // contrib ops upstream of a node still hide its input's type. A round that lowered
    // something while some node waited for a type is followed by another, with fresh facts.
    PassResult result;
    // Each declaration lets inference type the next kept op's input: to the fixed point.
    for (int round = 0; !ops_.empty() && round < 64 && DeclareKeptOutputTypes(model, ops_) > 0; ++round) {
    }
    bool waiting = true;
    while (waiting) {
      why_left.clear();
      // What the last round lowered types the kept ops' inputs behind it.
      for (int round = 0; !ops_.empty() && round < 64 && DeclareKeptOutputTypes(model, ops_) > 0; ++round) {
      }
      OS_ASSIGN_OR_RETURN(auto counts, ApplyRulesGreedily(model, rules, options));
      for (const auto& [name, n] : counts) result.Count(name, n);
      waiting = !counts.empty() && std::any_of(why_left.begin(), why_left.end(), [](const auto& entry) {
        return entry.second.find(" unknown") != std::string::npos;
      });
      // The next round's facts see the types of what this round lowered through onnx
      // inference too, in memory only (the local rules alone walk the nodes once in order,
      // and the optimizer's graphs are not always sorted).
      if (waiting) {
        TypeRequest request;
        request.infer.record_value_info = false;
        if (!TypeFacts::Ensure(model, TypeFacts::AnyMissing, request).ok()) result.Count("shape-inference-failed");
      }
    }

    // What stays, named (not a change).
    std::vector<Node*> nodes = model.graph().AllNodesRecursive();
    for (auto& f : model.functions())
      for (Node* n : f->body().AllNodesRecursive()) nodes.push_back(n);
    bool ms_used = false;
    for (const Node* n : nodes) {
      ms_used = ms_used || n->domain() == contrib::kMsDomain;
      if (!IsContribOp(*n)) continue;
      std::string key = absl::StrCat("left: ", n->domain().empty() ? "ai.onnx" : n->domain(), ".", n->op_type());
      if (auto it = why_left.find(n); it != why_left.end()) absl::StrAppend(&key, ": ", it->second);
      else if (std::find(contrib::LoweredOpTypes().begin(), contrib::LoweredOpTypes().end(), n->op_type()) ==
               contrib::LoweredOpTypes().end())
        absl::StrAppend(&key, ": no lowering");
      else if (!ops_.empty()) absl::StrAppend(&key, ": not in ops=");
      ++result.counts[key];
    }
    if (result.changed && !ms_used) {  // the com.microsoft import goes with its last node
      auto* imports = model.mutable_proto().mutable_opset_import();
      for (int i = imports->size() - 1; i >= 0; --i) {
        if (imports->Get(i).domain() != contrib::kMsDomain) continue;
        imports->DeleteSubrange(i, 1);
        result.Count("opset-imports-removed");
      }
    }
    return result;
  }

 private:
  std::vector<std::string> ops_;
  bool dequantize_;
  bool inexact_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateLowerContribOpsPass(const PassOptions& o) {
  return std::make_unique<LowerContribOpsPass>(o.List("ops"), o.Bool("dequantize"), o.Bool("inexact"));
}

}  // namespace onnxsurgeon::passes

// convert-float16: runs the main graph in float16 where that is safe, as onnxconverter-
// common's convert_float_to_float16 does, without the failures its issues report.
//
// Each node of the model (If/Loop/Scan bodies included) either runs in float16
// ("converted") or keeps float32 ("blocked"). A node is blocked when its op is in `block`,
// its name in `block-nodes`, it has no onnx schema at the model's opset (custom ops, local
// functions), it is a Scatter that accumulates (reduction other than none), it holds
// If/Loop/Scan bodies (its boundary keeps float32; the bodies convert inside, their inputs
// and outputs keeping their types), the range analysis below finds that its values
// overflow float16 (a region: squares, exponentials, bounds past 65504), an input or output has an
// unknown element type, or a float output's type comes from an attribute (random ops,
// EyeLike, window ops; Cast, Constant and ConstantOfShape are converted by rewriting that
// attribute). In a converted node only the float operands whose schema allows float16
// change: Resize's scales, LayerNormalization's Mean/InvStdDev and the like stay float32.
//
// The model's own Casts between float16 and float32 that end up float16 -> float16 are
// removed. Casts are inserted only where a value crosses between the two precisions, once per value
// and direction, shared by every reader: two adjacent blocked ops exchange float32 with no
// Cast between them. Float32 weights read in float16 are converted in place (a float16
// copy when float32 readers remain); finite values beyond float16's range (|x| > 65504,
// e.g. -1e9 attention masks) are clamped to +-65504 and counted (overflow=clamp), or their
// readers are blocked so they compute in float32 (overflow=keep). With keep-io-types
// (default) graph inputs and outputs keep float32 and one Cast converts at each boundary;
// output names never change. value_info types follow the new element types.
//
// Options:
//   keep-io-types=true|false   float32 graph inputs/outputs (default true)
//   block=OP;OP                ops kept in float32 (default: Range;CumSum;TopK;
//                              NonMaxSuppression;RoiAlign: precision or index results)
//   block-nodes=NAME;NAME      nodes kept in float32
//   overflow=clamp|keep        constants beyond float16's range (default clamp)
//   range-analysis=true|false  keep float32 the regions whose range overflows (default true)
//   ranges=FILE                measured ranges, lines "MIN MAX NAME" (onnxsurgeon.calibrate)
//
// Before:  g (float[N,4] X) => (float[N,4] Y) { h = Mul(X, W)  Y = Softmax(h) }   block=Softmax
// After:   g (float[N,4] X) => (float[N,4] Y) {
//            X16 = Cast<to=10>(X)  h16 = Mul(X16, W16)  h = Cast<to=1>(h16)  Y = Softmax(h) }
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/ir/constant.h"
#include "core/rewrite/rewriter.h"
#include "onnx/defs/schema.h"
#include "passes/float16/convert_float16_precision.h"
#include "passes/float16/convert_float16_range.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using fp16::PrecisionKeeps;
using fp16::Range;
using fp16::RangeAnalysis;
using fp16::ReadRanges;
using T = onnx::TensorProto;
constexpr float kHalfMax = 65504.0f;

enum Precision : int32_t { kF32 = T::FLOAT, kF16 = T::FLOAT16 };

struct Options {
  bool keep_io_types = true;
  absl::flat_hash_set<std::string> block_ops;
  absl::flat_hash_set<std::string> block_nodes;
  bool clamp = true;
  bool range_analysis = true;
  std::string ranges_file;  // measured ranges: lines "MIN MAX NAME"
};

// Float32 elements -> float16 bits, clamping finite values beyond float16's range.
struct HalfData {
  std::string bytes;
  int64_t clamped = 0;
};

HalfData ToHalf(std::string_view raw) {
  HalfData out;
  size_t n = raw.size() / 4;
  out.bytes.resize(n * 2);
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, raw.data() + i * 4, 4);
    if (std::isfinite(f) && std::fabs(f) > kHalfMax) {
      f = std::copysign(kHalfMax, f);
      ++out.clamped;
    }
    uint16_t h = FloatToHalf(f);
    std::memcpy(out.bytes.data() + i * 2, &h, 2);
  }
  return out;
}

bool Overflows(const Value* v) {
  auto c = GetConstant(v);
  if (!c || c->data_type != T::FLOAT) return false;
  for (size_t i = 0; i + 4 <= c->raw.size(); i += 4) {
    float f;
    std::memcpy(&f, c->raw.data() + i, 4);
    if (std::isfinite(f) && std::fabs(f) > kHalfMax) return true;
  }
  return false;
}

// A float16 TensorProto with the dims of `source` (raw data inline).
onnx::TensorProto HalfTensor(const ConstantData& source, HalfData& half) {
  onnx::TensorProto t;
  t.set_data_type(T::FLOAT16);
  for (int64_t d : source.dims) t.add_dims(d);
  half = ToHalf(source.raw);
  t.set_raw_data(half.bytes);
  return t;
}

bool AllowsHalf(const onnx::OpSchema::FormalParameter& p) {
  for (const auto* t : p.GetTypes())
    if (*t == "tensor(float16)") return true;
  return false;
}

// The schema's formal parameter of operand i (the last one repeats when variadic).
const onnx::OpSchema::FormalParameter* Param(const std::vector<onnx::OpSchema::FormalParameter>& params, size_t i) {
  if (params.empty()) return nullptr;
  if (i < params.size()) return &params[i];
  const auto& last = params.back();
  return last.GetOption() == onnx::OpSchema::Variadic ? &last : nullptr;
}

// How a node runs: blocked, or converted with which operands in float16.
struct NodePlan {
  bool converted = false;
  std::vector<bool> input_half;   // per input slot: read in float16
  std::vector<bool> output_half;  // per output: produced in float16
};

// What the plan decides, before any change: which nodes convert and the precision each
// float value ends with.
struct Conversion {
  // Every graph (the main one and the If/Loop/Scan bodies) and every node in them.
  std::vector<Graph*> graphs;
  std::vector<Node*> all_nodes;
  // Float values in graph order (inputs, weights, node outputs); the order keeps the
  // inserted Casts deterministic.
  std::vector<Value*> float_values;
  absl::flat_hash_set<const Value*> floats;
  absl::flat_hash_map<const Node*, NodePlan> plans;
  // The model's own Casts that become float16 -> float16.
  std::vector<Node*> identity_casts;
  absl::flat_hash_map<const Value*, Precision> have;

  bool IsFloat(const Value* v) const { return v && floats.contains(v); }
  bool ReadsHalf(const Use& u) const {
    auto it = plans.find(u.node);
    return it != plans.end() && it->second.input_half[u.input_index];
  }
};

class ConvertFloat16Pass : public Pass {
 public:
  explicit ConvertFloat16Pass(Options options) : options_(std::move(options)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    Graph& g = model.graph();
    // Without an ai.onnx import there is no Cast to insert (ai.onnx.ml-only models).
    if (model.OpsetVersion("") < 0) return result;
    TypeFacts types(model);
    Conversion c;
    OS_RETURN_IF_ERROR(PlanConversion(g, types, c, result));
    OS_RETURN_IF_ERROR(ApplyConversion(g, types, c, result));
    return result;
  }

 private:
  // A graph output that keeps its type: the main graph's with keep-io-types, a body's always.
  bool KeepsType(const Graph& g, const Value* v) const {
    return v->IsGraphOutput() && (options_.keep_io_types || v->graph() != &g);
  }

  // Given the main graph and its types. Execute decides, before any change, which nodes
  // convert and the precision every float value ends with (c). Result an error only from
  // reading a ranges file.
  Status PlanConversion(Graph& g, const TypeFacts& types, Conversion& c, PassResult& result) const {
    // Every graph: the main one and the If/Loop/Scan bodies (the nodes holding them keep
    // float32 at their boundary, their bodies convert inside, as keep-io-types does).
    c.graphs = g.SelfAndSubgraphs();
    c.all_nodes = g.AllNodesRecursive();
    // Float values in graph order (inputs, weights, node outputs), decided before any
    // annotation changes; the order keeps the inserted Casts deterministic.
    auto note = [&](Value* v) {
      if (v && types.ElemType(v) == T::FLOAT && c.floats.insert(v).second) c.float_values.push_back(v);
    };
    for (Graph* sg : c.graphs) {
      for (Value* v : sg->inputs()) note(v);
      for (Value* v : sg->initializers()) note(v);
    }
    for (Node* n : c.all_nodes)
      for (Value* v : n->outputs()) note(v);
    std::optional<RangeAnalysis> ranges;
    if (options_.range_analysis) {
      absl::flat_hash_map<std::string, Range> measured;
      if (!options_.ranges_file.empty()) {
        OS_ASSIGN_OR_RETURN(measured, ReadRanges(options_.ranges_file));
        result.Count("ranges-measured", static_cast<int64_t>(measured.size()));
      }
      ranges.emplace(g, types, measured, options_.clamp);
    }
    absl::flat_hash_map<const Node*, std::string> precision;
    if (options_.range_analysis) precision = PrecisionKeeps(g);

    // ---- plan: which nodes convert, which values end up float16 ------------------------
    absl::flat_hash_set<const Value*> overflowing;
    if (!options_.clamp) {
      for (Value* v : g.initializers())
        if (Overflows(v)) overflowing.insert(v);
      for (Node* n : g.nodes())
        if (n->Is("Constant") && Overflows(n->output(0))) overflowing.insert(n->output(0));
    }
    for (Node* n : c.all_nodes) {
      NodePlan plan = PlanNode(*n, *n->graph(), types, overflowing);
      if (!plan.converted) continue;
      if (std::string why = ranges ? ranges->KeepReason(*n) : ""; !why.empty()) {
        result.Count("kept-fp32-range");
        result.Count("kept-fp32-range: " + why);
        continue;
      }
      if (auto it = precision.find(n); it != precision.end()) {
        result.Count("kept-fp32-precision");
        result.Count("kept-fp32-precision: " + it->second);
        continue;
      }
      c.plans[n] = std::move(plan);
    }
    // A Constant converts only when every reader reads it in float16 (else readers in
    // float32 would see rounded values): it is a weight like an initializer. So does a Cast
    // to float from another type (int64 -> float -> Range): made float16 it would round
    // every integer above 2048 for readers that stay float32, through one more Cast.
    for (Node* n : c.all_nodes) {
      if (!c.plans.contains(n)) continue;
      bool source = n->Is("Constant");
      if (n->Is("Cast")) {
        int32_t from = types.ElemType(n->input(0));
        source = from != T::FLOAT && from != T::FLOAT16;
      }
      if (!source) continue;
      if (!AllReadHalf(n->output(0), c.plans) || KeepsType(g, n->output(0))) c.plans.erase(n);
    }
    // Casts that become float16 -> float16 (the model's own Casts between float16 and
    // float32, both sides now float16) are dropped: no-ops that runtimes' fusions
    // misread (onnxruntime's LayerNormFusion fused across one with mixed types).
    for (Node* n : c.all_nodes) {
      auto it = c.plans.find(n);
      if (!n->Is("Cast") || it == c.plans.end()) continue;
      int64_t to = n->GetInt("to", 0);
      int32_t from = types.ElemType(n->input(0));
      bool input_half = from == T::FLOAT16 || (from == T::FLOAT && it->second.input_half[0]);
      if ((to == T::FLOAT || to == T::FLOAT16) && input_half && !n->output(0)->IsGraphOutput())
        c.identity_casts.push_back(n);
    }
    // The precision each float value has after the conversion.
    for (Value* v : g.inputs())  // an overridable weight (ir_version < 4) stays float32
      if (c.IsFloat(v)) c.have[v] = options_.keep_io_types || v->IsInitializer() ? kF32 : kF16;
    for (Graph* sg : c.graphs)  // body inputs keep their types
      if (sg != &g)
        for (Value* v : sg->inputs())
          if (c.IsFloat(v)) c.have[v] = kF32;
    for (Node* n : c.all_nodes) {
      auto it = c.plans.find(n);
      for (size_t i = 0; i < n->num_outputs(); ++i) {
        Value* v = n->output(i);
        if (!c.IsFloat(v)) continue;
        c.have[v] = it != c.plans.end() && it->second.output_half[i] ? kF16 : kF32;
      }
    }
    return absl::OkStatus();
  }

  // Given the plan. Execute converts weights, annotates the converted nodes' outputs and
  // inserts one Cast per value and direction where a reader needs the other precision.
  Status ApplyConversion(Graph& g, const TypeFacts& types, Conversion& c, PassResult& result) const {
    // ---- apply -----------------------------------------------------------------------
    absl::flat_hash_map<const Graph*, Node*> graph_start;
    for (Graph* sg : c.graphs) graph_start[sg] = sg->first_node();
    // Every change goes through it; the Casts it inserts carry kProvenanceKey = convert-float16.
    Rewriter rw;
    rw.SetRule("convert-float16");
    // Float weights read in float16: converted in place, or a float16 copy beside them.
    absl::flat_hash_map<const Value*, Value*> half_copy;
    std::vector<Value*> initializers;
    for (Graph* sg : c.graphs)
      for (Value* v : sg->initializers()) initializers.push_back(v);
    for (Value* v : initializers) {
      if (v->IsGraphInput() || !c.IsFloat(v)) continue;
      bool any_half = false, any_full = v->IsGraphOutput();  // a weight that is an output stays
      for (const Use& u : v->uses()) (c.ReadsHalf(u) ? any_half : any_full) = true;
      if (!any_half) {
        c.have[v] = kF32;
        continue;
      }
      auto data = GetConstant(v);
      if (!data) continue;  // not readable as raw c.floats: readers get a Cast
      HalfData half;
      onnx::TensorProto proto = HalfTensor(*data, half);
      CountClamped(half, result);
      Tensor tensor(v->initializer()->meta());
      tensor.mutable_meta().set_data_type(T::FLOAT16);
      tensor.SetRawBytes(std::move(half.bytes));
      if (!any_full) {
        *v->mutable_initializer() = std::move(tensor);
        c.have[v] = kF16;
        SetElemType(v, kF16);
      } else {
        tensor.mutable_meta().set_name("");
        OS_ASSIGN_OR_RETURN(Value * copy,
                            rw.AddInitializer(v->graph(), g.UniqueName(v->name() + "_fp16"), std::move(tensor)));
        half_copy[v] = copy;
        c.have[v] = kF32;
      }
      result.Count("initializers-fp16");
    }
    // Nodes: attributes that carry the output type, then float16 annotations.
    for (auto& [node_ptr, plan] : c.plans) {
      Node* n = const_cast<Node*>(node_ptr);
      OS_RETURN_IF_ERROR(RewriteTypeAttributes(*n, rw, result));
      for (size_t i = 0; i < n->num_outputs(); ++i)
        if (plan.output_half[i]) SetElemType(n->output(i), kF16);
      result.Count("nodes-fp16");
    }
    for (Node* n : c.all_nodes) {
      if (c.plans.contains(n)) continue;
      bool touches_float = false;
      for (Value* v : n->inputs()) touches_float |= c.IsFloat(v);
      for (Value* v : n->outputs()) touches_float |= c.IsFloat(v);
      if (touches_float) result.Count("nodes-kept-fp32");
    }
    for (auto& [v, p] : c.have)
      if (p == kF16 && v->IsGraphInput()) SetElemType(const_cast<Value*>(v), kF16);
    // A Cast of `source` to `to` at the rewriter's insertion point, named and typed after `v`.
    auto emit_cast = [&](Value* source, const Value* v, Precision to) -> Value* {
      Node* cast = rw.Create("Cast", {source}, {Rewriter::AttrInt("to", to)}, 1, "", "Cast");
      Value* out = cast->output(0);
      (void)out->SetName(g.UniqueName(v->name() + (to == kF16 ? "_fp16" : "_fp32")));  // unique: cannot fail
      cast->set_name(out->name());
      if (v->type()) *out->mutable_info()->mutable_type() = *v->type();
      SetElemType(out, to, /*create=*/true);
      result.Count("casts");
      return out;
    };
    // Readers that need the other precision: one Cast per value and direction.
    absl::flat_hash_map<std::pair<const Value*, int32_t>, Value*> casts;
    std::function<Value*(Value*, Precision)> cast_of = [&](Value* v, Precision to) -> Value* {
      auto key = std::make_pair(static_cast<const Value*>(v), static_cast<int32_t>(to));
      if (auto it = casts.find(key); it != casts.end()) return it->second;
      // The output of a Cast that stays (int64 -> float read in float32 and float16): cast
      // its source instead, so that no Cast reads a Cast.
      if (Node* p = v->producer(); p && p->Is("Cast") && !c.plans.contains(p) && p->input(0) &&
                                   !p->input(0)->IsGraphInput() && !KeepsType(g, v)) {
        Value* src = p->input(0);
        int32_t from = types.ElemType(src);
        if (c.IsFloat(src)) return casts[key] = (c.have.contains(src) && c.have[src] == to) ? src : cast_of(src, to);
        if (from == T::FLOAT16 && to == kF16) return casts[key] = src;
      }
      Value* source = v;
      if (Node* p = v->producer(); p && p->Is("Cast") && !c.plans.contains(p) && p->input(0) &&
                                   types.ElemType(p->input(0)) != 0 && types.ElemType(p->input(0)) != T::FLOAT16)
        source = p->input(0);  // int64 -> float16 at once
      Node* after = source->producer();
      Node* before = after ? after->next() : graph_start[source->graph()];
      if (before) rw.SetInsertionPoint(before);
      else rw.SetInsertionPointAtEnd(source->graph());
      return casts[key] = emit_cast(source, v, to);
    };
    for (Value* v : c.float_values) {
      Precision h = c.have.contains(v) ? c.have[v] : kF32;
      std::vector<Use> uses = v->uses();
      for (const Use& u : uses) {
        Precision want = c.ReadsHalf(u) ? kF16 : kF32;
        if (want == h) continue;
        Value* source = want == kF16 && half_copy.contains(v) ? half_copy[v] : cast_of(v, want);
        rw.SetInput(u.node, u.input_index, source);
      }
      // Graph outputs keep their float32 type (and name) with keep-io-types.
      if (h == kF16 && KeepsType(g, v)) {
        std::string name = v->name();
        std::vector<GraphOutputUse> slots = v->graph_outputs();
        Value* full = cast_of(v, kF32);
        for (const GraphOutputUse& slot : slots) rw.SetGraphOutput(slot.graph, slot.output_index, full);
        OS_RETURN_IF_ERROR(v->SetName(g.UniqueName(name + "_fp16")));
        OS_RETURN_IF_ERROR(full->SetName(name));
        full->producer()->set_name(name + "_cast");
      }
    }
    for (Node* n : c.identity_casts) {
      OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(n->output(0), n->input(0), GraphOutputs::kRefuse));
      OS_RETURN_IF_ERROR(rw.EraseNode(n));
      result.Count("identity-casts-removed");
    }
    return absl::OkStatus();
  }

  // Given a main-graph node. Execute nothing. Result whether it runs in float16 and which
  // of its float operands change.
  NodePlan PlanNode(const Node& n, const Graph& g, const TypeFacts& types,
                    const absl::flat_hash_set<const Value*>& overflowing) const {
    NodePlan plan;
    if (options_.block_ops.contains(n.op_type()) || options_.block_nodes.contains(n.name())) return plan;
    if (!n.subgraphs().empty()) return plan;
    // A Cast to an integer type (or bool) reads float32: in float16 it would round the
    // integers it makes (float16 is exact only up to 2048, and infinite past 65504).
    if (n.Is("Cast") && n.GetInt("to", 0) != T::FLOAT && n.GetInt("to", 0) != T::FLOAT16) return plan;
    // Scatters that accumulate (reduction add/mul/min/max) sum in float16, and onnxruntime
    // has no float16 kernel for them.
    if ((n.Is("ScatterND") || n.Is("ScatterElements")) && n.FindAttribute("reduction") &&
        n.FindAttribute("reduction")->s() != "none") {
      return plan;
    }
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(g.OpsetVersion(n.domain())), n.domain());
    if (!schema) return plan;
    plan.input_half.assign(n.num_inputs(), false);
    plan.output_half.assign(n.num_outputs(), false);
    absl::flat_hash_set<std::string> input_type_strs;
    for (const auto& p : schema->inputs()) input_type_strs.insert(p.GetTypeStr());
    bool any = false;
    for (size_t i = 0; i < n.num_inputs(); ++i) {
      const Value* v = n.input(i);
      if (!v) continue;
      int32_t t = types.ElemType(v);
      if (t == 0) return {};  // unknown: cannot tell whether it is float
      if (overflowing.contains(v)) return {};
      const auto* p = Param(schema->inputs(), i);
      if (t == T::FLOAT && p && AllowsHalf(*p)) plan.input_half[i] = any = true;
    }
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Value* v = n.output(i);
      if (!v) continue;
      int32_t t = types.ElemType(v);
      if (t == 0) return {};
      const auto* p = Param(schema->outputs(), i);
      if (t != T::FLOAT || !p || !AllowsHalf(*p)) continue;
      // A float output whose type no input decides comes from an attribute.
      if (!input_type_strs.contains(p->GetTypeStr()) && !n.Is("Cast") && !n.Is("Constant") &&
          !n.Is("ConstantOfShape")) {
        return {};
      }
      if (n.Is("Cast") && n.GetInt("to", 0) != T::FLOAT) continue;
      plan.output_half[i] = any = true;
    }
    plan.converted = any;
    return plan;
  }

  static bool AllReadHalf(const Value* v, const absl::flat_hash_map<const Node*, NodePlan>& plans) {
    for (const Use& u : v->uses()) {
      auto it = plans.find(u.node);
      if (it == plans.end() || !it->second.input_half[u.input_index]) return false;
    }
    return true;
  }

  // Cast's `to`, Constant's and ConstantOfShape's `value` say float; make them float16.
  static Status RewriteTypeAttributes(Node& n, Rewriter& rw, PassResult& result) {
    if (n.Is("Cast")) {
      if (n.GetInt("to", 0) == T::FLOAT) {
        onnx::AttributeProto a = n.FindAttribute("to")->proto();
        a.set_i(T::FLOAT16);
        rw.SetAttribute(&n, std::move(a));
      }
      return absl::OkStatus();
    }
    if (!n.Is("Constant") && !n.Is("ConstantOfShape")) return absl::OkStatus();
    std::optional<ConstantData> data;
    if (n.Is("Constant")) {
      data = GetConstant(n.output(0));
    } else if (const Attribute* a = n.FindAttribute("value")) {
      data = GetConstant(a->proto().t());
    } else {
      ConstantData zero;  // ConstantOfShape's default: one float 0
      static const float kZero = 0.0f;
      zero.data_type = T::FLOAT;
      zero.dims = {1};
      zero.raw = std::string_view(reinterpret_cast<const char*>(&kZero), 4);
      data = zero;
    }
    if (!data || data->data_type != T::FLOAT) {
      return absl::InternalError(absl::StrCat("node '", n.name(), "': cannot read its float value"));
    }
    HalfData half;
    onnx::TensorProto t = HalfTensor(*data, half);
    CountClamped(half, result);
    if (n.Is("Constant")) {
      std::vector<std::string> names;
      for (const auto& a : n.attributes()) names.push_back(a.name());
      for (const auto& name : names) rw.RemoveAttribute(&n, name);
    }
    onnx::AttributeProto a;
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    *a.mutable_t() = std::move(t);
    rw.SetAttribute(&n, std::move(a));
    return absl::OkStatus();
  }

  static void CountClamped(const HalfData& half, PassResult& result) {
    if (half.clamped == 0) return;
    result.Count("overflow-clamped-constants");
    result.Count("overflow-clamped-elements", half.clamped);
  }

  static void SetElemType(Value* v, int32_t elem, bool create = false) {
    if (!v->has_type() && !create) return;
    v->mutable_info()->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }

  Options options_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateConvertFloat16Pass(const PassOptions& o) {
  Options options;
  options.keep_io_types = o.Bool("keep-io-types");
  for (const auto& op : o.List("block")) options.block_ops.insert(op);
  for (const auto& n : o.List("block-nodes")) options.block_nodes.insert(n);
  options.clamp = o.String("overflow") == "clamp";
  options.range_analysis = o.Bool("range-analysis");
  options.ranges_file = o.String("ranges");
  return std::make_unique<ConvertFloat16Pass>(std::move(options));
}

}  // namespace onnxsurgeon::passes

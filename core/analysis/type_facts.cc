#include "core/analysis/type_facts.h"

#include <functional>
#include <unordered_map>

#include "core/interop/onnx_interop.h"
#include "core/shape/contradictions.h"
#include "core/shape/propagate.h"
#include "core/shape/rules.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace onnxsurgeon {
namespace {

constexpr int64_t kInlineBytes = 4096;  // small tensors (shapes, indices) keep their data

int32_t TensorElemType(const onnx::TypeProto& t) { return t.has_tensor_type() ? t.tensor_type().elem_type() : 0; }

onnx::TypeProto InitializerType(const Value& v, int32_t elem) {
  onnx::TypeProto tp;
  auto* tt = tp.mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : v.initializer()->meta().dims()) shape->add_dim()->set_dim_value(d);
  return tp;
}

}  // namespace

TypeFacts::TypeFacts(const Model& model, TypeFactsOptions options) : model_(model), options_(options) {
  if (options_.infer_up_front) InferUpFront();
}

void TypeFacts::InferUpFront() {
  // Shape inference needs no weights: large initializers go in as metadata only. Where
  // it fails, types stay unknown and the questions that need them get no answer.
  auto inferred = InferredCopy(model_, InferShapesOptions{});
  if (inferred.ok()) {
    // Graph inputs first (a Loop body's inferred inputs), then what ForEachType gives.
    std::function<void(const onnx::GraphProto&)> inputs = [&](const onnx::GraphProto& g) {
      for (const auto& vi : g.input())
        if (vi.has_type())
          if (Value* v = inferred->ValueNamed(vi.name())) recorded_[v] = vi.type();
      for (const auto& n : g.node())
        for (const auto& a : n.attribute()) {
          if (a.has_g()) inputs(a.g());
          for (const auto& sg : a.graphs()) inputs(sg);
        }
    };
    inputs(inferred->proto.graph());
    inferred->ForEachType([&](Value* v, const onnx::TypeProto& t) { recorded_[v] = t; });
  }
  // Initializers of every graph, as inference would type them (Find answers them too).
  for (const Graph* g : model_.AllGraphs())
    for (const Value* v : g->initializers())
      recorded_.try_emplace(v, InitializerType(*v, v->initializer()->meta().data_type()));
}

const onnx::TypeProto* TypeFacts::Find(const Value* v) const {
  if (!v) return nullptr;
  if (v->has_type()) return v->type();
  auto it = recorded_.find(v);
  return it == recorded_.end() ? nullptr : &it->second;
}

int32_t TypeFacts::ElemType(const Value* v) const { return ElemType(v, /*with_inference=*/true); }

int32_t TypeFacts::ElemType(const Value* v, bool with_inference) const {
  if (!v) return 0;
  if (const onnx::TypeProto* own = v->type())
    if (int32_t e = TensorElemType(*own)) return e;
  if (const Tensor* t = v->initializer()) return t->meta().data_type();
  if (const onnx::TypeProto* t = Find(v))
    if (int32_t e = TensorElemType(*t)) return e;
  // com.microsoft's QuantizeLinear/DequantizeLinear (16-bit Q/DQ before opset 21): onnx's
  // inference does not know them, so without this their outputs, and what reads them, stay
  // untyped. ai.onnx's: the zero point's type (uint8 without one), the scale's.
  if (Node* p = v->producer(); p && p->domain() == "com.microsoft" && p->output(0) == v) {
    if (p->op_type() == "DequantizeLinear" && p->input(1)) return ElemType(p->input(1), with_inference);
    if (p->op_type() == "QuantizeLinear")
      return p->input(2) ? ElemType(p->input(2), with_inference) : int32_t{onnx::TensorProto::UINT8};
  }
  if (!options_.derive) return 0;
  // Values made by rewrites stay typed: a Cast says its type, a CastLike takes its model's.
  if (Node* p = v->producer()) {
    if (p->Is("Cast")) return static_cast<int32_t>(p->GetInt("to", 0));
    if (p->Is("CastLike")) return ElemType(p->input(1), with_inference);
  }
  if (const onnx::TypeProto* t = Derived(v)) return TensorElemType(*t);  // the local rules: most questions end here
  return with_inference ? InferredElemType(v) : 0;
}

std::optional<Shape> TypeFacts::DimsOf(const Value* v) const {
  if (!v) return std::nullopt;
  // An initializer's dims before a graph input's declaration of it (which may be symbolic).
  if (const Tensor* t = v->initializer()) {
    Shape s;
    for (int64_t d : t->meta().dims()) s.push_back(Dim::Static(d));
    return s;
  }
  if (auto known = ShapeOfType(Find(v))) return known;  // its own type, else a recorded one
  if (!options_.derive) return std::nullopt;
  return ShapeOfType(Derived(v));
}

std::optional<std::vector<int64_t>> TypeFacts::Dims(const Value* v) const {
  auto shape = DimsOf(v);
  if (!shape) return std::nullopt;
  return DimsOrMinusOne(*shape);
}

int64_t TypeFacts::Rank(const Value* v) const {
  auto shape = DimsOf(v);
  return shape ? static_cast<int64_t>(shape->size()) : -1;
}

const onnx::TypeProto* TypeFacts::Derived(const Value* v) const {
  if (!propagated_once_) {
    propagated_once_ = true;
    if (model_.has_graph()) propagated_ = PropagatedTypes(model_.graph());
  }
  auto it = propagated_.find(v);
  return it == propagated_.end() ? DerivedForCreated(v) : &it->second;
}

// A value a rewrite made after the local rules ran: its op's rule, from what is known of
// its inputs now (their own types, or derived the same way), memoized with the others.
const onnx::TypeProto* TypeFacts::DerivedForCreated(const Value* v) const {
  Node* p = v->producer();
  if (!p || !created_.contains(p) || !typing_.insert(p).second) return nullptr;
  auto known = [this](const Value* in) -> std::optional<shape_rules::TensorType> {
    int32_t elem = ElemType(in, /*with_inference=*/false);
    auto shape = elem ? DimsOf(in) : std::nullopt;
    if (!shape) return std::nullopt;
    return shape_rules::TensorType{elem, std::move(*shape)};
  };
  auto types = shape_rules::InferNode(*p, known);
  typing_.erase(p);
  for (size_t i = 0; i < types.size() && i < p->num_outputs(); ++i)
    if (types[i] && p->output(i)) propagated_.try_emplace(p->output(i), TypeProtoOf(*types[i]));
  auto it = propagated_.find(v);
  return it == propagated_.end() ? nullptr : &it->second;
}

int32_t TypeFacts::InferredElemType(const Value* v) const {
  if (!inferred_once_) {
    inferred_once_ = true;
    InferShapesOptions options;
    options.data_propagation = false;
    options.max_payload_bytes = kInlineBytes;  // types need no weights
    if (!model_.has_graph()) return 0;
    auto inferred = InferredCopy(model_, options);
    // A model inference cannot handle is no error: its values stay unknown.
    if (inferred.ok())
      inferred->ForEachType([&](Value* value, const onnx::TypeProto& t) {
        if (int32_t e = TensorElemType(t)) inferred_[value] = e;
      });
  }
  auto it = inferred_.find(v);
  return it == inferred_.end() ? 0 : it->second;
}

const SymbolicShapes& TypeFacts::Symbolic() const {
  if (!symbolic_) {
    symbolic_ = std::make_unique<SymbolicShapes>(model_);
    if (options_.symbolic_skips_failing_subgraphs)
      symbolic_->Exclude(SubgraphsFailingForTheseShapes(model_, *symbolic_));
  }
  return *symbolic_;
}

void TypeFacts::Alias(const Value* old, const Value* replacement) {
  if (!old || !replacement || Find(replacement)) return;
  // A copy first: inserting may rehash the map `t` points into (TypeOracle read freed memory).
  if (const onnx::TypeProto* t = Find(old)) {
    onnx::TypeProto type = *t;
    recorded_[replacement] = std::move(type);
  }
}

void TypeFacts::InferBySchema(const Node& node, const std::string& domain, int64_t opset) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), domain);
  if (!s || !s->has_type_and_shape_inference_function() || !node.subgraphs().empty()) return;
  onnx::NodeProto np;
  np.set_op_type(node.op_type());
  np.set_domain(node.domain());
  std::vector<onnx::TypeProto> input_types;
  input_types.reserve(node.num_inputs());
  std::vector<onnx::TensorProto> input_data;
  input_data.reserve(node.num_inputs());
  std::unordered_map<std::string, onnx::TypeProto*> types;
  std::unordered_map<std::string, const onnx::TensorProto*> data;
  for (Value* v : node.inputs()) {
    np.add_input(v ? v->name() : "");
    if (!v) continue;
    if (const onnx::TypeProto* t = Find(v)) {
      input_types.push_back(*t);
      types[v->name()] = &input_types.back();
    } else if (v->initializer()) {
      input_types.push_back(InitializerType(*v, ElemType(v)));
      types[v->name()] = &input_types.back();
    }
    if (v->initializer() && v->initializer()->raw_size() <= kInlineBytes) {
      input_data.push_back(v->initializer()->ToProto(v->name()));
      data[v->name()] = &input_data.back();
    }
  }
  for (Value* v : node.outputs()) np.add_output(v ? v->name() : "");
  for (const Attribute& a : node.attributes()) *np.add_attribute() = a.proto();
  onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/false);
  onnx::shape_inference::InferenceContextImpl ctx(np, types, data, {}, options);
  try {
    s->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception&) {
    return;  // onnx refuses the node: its outputs stay unknown
  }
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    Value* v = node.output(i);
    const onnx::TypeProto* t = ctx.getOutputType(i);
    if (v && t && t->value_case() != onnx::TypeProto::VALUE_NOT_SET && !Find(v)) recorded_[v] = *t;
  }
}

}  // namespace onnxsurgeon

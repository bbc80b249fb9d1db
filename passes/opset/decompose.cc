// Decompositions for the opset converter: ops the target opset lacks (or where the
// target's op of that name means something else) become older ops.
//
//   LayerNormalization (< 17)  the shared emitter passes/lowering/layer_norm.h
//   Gelu (< 20)                the shared emitter passes/lowering/gelu.h
//   Trilu (< 14)               Where(Not(Less(Range-cols - Range-rows, k)), X, 0)
//   RMSNormalization (< 23)    its function body with the axes as a constant (the body's
//                              Range of the run-time rank would stop ReduceMean below 18)
//   BitwiseNot (< 18)          Sub(Neg(x), 1) signed, Sub(max, x) unsigned
//   Upsample-9 <-> Resize-10   the same operator under two names (Upsample is deprecated
//                              from 10, Resize starts at 10)
//   Scatter-9 -> ScatterElements-11   renamed (Scatter is deprecated from 11)
//   everything else            the op's own function body from onnx's schema (Mish,
//                              HardSwish, GroupNormalization, CenterCropPad, CastLike,
//                              Celu, Softplus-free activations, RMSNormalization, ...),
//                              context-dependent bodies built from the node's types
// The new nodes follow the signatures of the opset they were written for (the node's own
// opset for the emitters, the body's import for function bodies) and are converted on to
// the target like any other node.
//
// Before (opset 18 -> 17):  Y = Mish(X)
// After:                    S = Softplus(X)  T = Tanh(S)  Y = Mul(X, T)
#include <algorithm>
#include <functional>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "passes/lowering/gelu.h"
#include "passes/lowering/layer_norm.h"
#include "passes/opset/step.h"

namespace onnxsurgeon::opset {
namespace {

// Nodes the emitter put before `node`, after `before` (null: from the graph's start).
void CollectEmitted(Node* before, Node* node, int64_t opset, std::vector<Pending>& out) {
  Node* first = before ? before->next() : node->graph()->first_node();
  for (Node* n = first; n && n != node; n = n->next()) out.push_back({n, opset});
}

Status FinishReplacement(DecomposeContext& ctx, const std::vector<Value*>& outputs) {
  Node* n = ctx.node;
  for (size_t i = 0; i < n->num_outputs(); ++i) {
    Value* out = n->output(i);
    if (!out || !out->HasUsers()) continue;
    if (i >= outputs.size() || !outputs[i])
      return absl::FailedPreconditionError(absl::StrCat("output ", i, " of ", n->op_type(), " has no decomposition"));
    ctx.types->Alias(out, outputs[i]);
    OS_RETURN_IF_ERROR(ctx.rewriter->ReplaceAllUsesWith(out, outputs[i], GraphOutputs::kKeepNames));
  }
  return ctx.rewriter->EraseNode(n);
}

StatusOr<bool> DecomposeLayerNorm(DecomposeContext& ctx) {
  Node* n = ctx.node;
  lowering::LayerNormSpec spec;
  spec.x = n->input(0);
  spec.scale = n->input(1);
  spec.bias = n->input(2);
  spec.axis = n->GetInt("axis", -1);
  spec.epsilon = n->GetFloat("epsilon", 1e-5f);
  spec.stash_type = static_cast<int32_t>(n->GetInt("stash_type", 1));
  spec.elem_type = ctx.types->ElemType(spec.x);
  // X and Scale share the type parameter T: Scale (a weight, typed) gives it where X comes
  // from an op shape inference does not know (an onnxruntime contrib op).
  if (spec.elem_type == 0 && spec.scale) spec.elem_type = ctx.types->ElemType(spec.scale);
  spec.rank = ctx.types->Rank(spec.x);
  if (spec.elem_type == 0) {
    *ctx.why_not = "the input's element type is unknown";
    return false;
  }
  if (spec.axis >= 0 && spec.rank < 0) {
    *ctx.why_not = "axis >= 0 needs the input's rank, which is unknown";
    return false;
  }
  bool want_mean = n->output(1) && n->output(1)->HasUsers();
  bool want_inv = n->output(2) && n->output(2)->HasUsers();
  Node* before = n->prev();
  OS_ASSIGN_OR_RETURN(lowering::LayerNormParts parts,
                      lowering::EmitLayerNormDecomposition(*ctx.rewriter, spec, ctx.opset, want_inv));
  CollectEmitted(before, n, ctx.opset, *ctx.emitted);
  (void)want_mean;
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, {parts.y, parts.mean, parts.inv_std_dev}));
  return true;
}

StatusOr<bool> DecomposeGelu(DecomposeContext& ctx) {
  Node* n = ctx.node;
  int32_t dt = ctx.types->ElemType(n->input(0));
  if (dt == 0) {
    *ctx.why_not = "the input's element type is unknown";
    return false;
  }
  const Attribute* a = n->FindAttribute("approximate");
  std::string approx = a ? a->s() : "none";
  lowering::GeluForm form = approx == "tanh" ? lowering::GeluForm::kTanh : lowering::GeluForm::kErf;
  if (form == lowering::GeluForm::kErf && ctx.target < 9) {
    *ctx.why_not = "the exact form needs Erf (opset 9)";
    return false;
  }
  Node* before = n->prev();
  OS_ASSIGN_OR_RETURN(Value * y, lowering::EmitGelu(*ctx.rewriter, n->input(0), dt, form));
  CollectEmitted(before, n, ctx.opset, *ctx.emitted);
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, {y}));
  return true;
}

// Given:  %Y = Trilu<upper=0>(%X, %k)                    %X: [m, n]
// Result: %i = Unsqueeze(Range(0, m, 1), [1])            %j = Range(0, n, 1)
//         %Y = Where(Not(Greater(Sub(%j, %i), %k)), %X, 0)   (upper=1: Not(Less(...)))
//
// Trilu (14): Y = Where(mask, X, 0) with mask[i, j] = (j - i >= k) (upper) or
// (j - i <= k) (lower), the row and column indices from Range (opset 11).
// RMSNormalization-23's function body, step for step, but its reduced axes [axis, rank) a
// constant: negative axes as they are, a non-negative axis from the input's known rank.
// Given:   %y = RMSNormalization<axis=-1, epsilon=e, stash_type=1>(%x, %scale)   (float16 x)
// Result:  %xu = Cast<to=FLOAT>(%x)
//          %r = Sqrt(Add(ReduceMean(Mul(%xu, %xu), [-1]), e))
//          %y = Mul(Cast<to=FLOAT16>(Div(%xu, %r)), %scale)
// (no Cast where x is already in the stash type.)
StatusOr<bool> DecomposeRmsNorm(DecomposeContext& ctx) {
  Node* n = ctx.node;
  const int64_t axis = n->GetInt("axis", -1);
  const int32_t stash = static_cast<int32_t>(n->GetInt("stash_type", 1));
  const int32_t type = ctx.types->ElemType(n->input(0));
  if (type == 0) {
    *ctx.why_not = "the input's element type is unknown";
    return false;
  }
  std::vector<int64_t> axes;
  const int64_t rank = ctx.types->Rank(n->input(0));
  if (axis < 0) {
    for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
  } else if (rank >= 0) {
    for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  } else {
    *ctx.why_not = "axis >= 0 needs the input's rank, which is unknown";
    return false;
  }
  Rewriter& rw = *ctx.rewriter;
  Node* before = n->prev();
  Value* xu = type == stash ? n->input(0) : rw.Op("Cast", {n->input(0)}, {Rewriter::AttrInt("to", stash)});
  Value* mean = rw.Op("ReduceMean", {rw.Op("Mul", {xu, xu}), rw.Int64s(axes)});  // the node's opset: >= 18
  OS_ASSIGN_OR_RETURN(Value * epsilon, rw.ScalarFloat(n->GetFloat("epsilon", 1e-5f), stash));
  Value* normalized = rw.Op("Div", {xu, rw.Op("Sqrt", {rw.Op("Add", {mean, epsilon})})});
  if (type != stash) normalized = rw.Op("Cast", {normalized}, {Rewriter::AttrInt("to", type)});
  Value* y = rw.Op("Mul", {normalized, n->input(1)});
  CollectEmitted(before, n, ctx.opset, *ctx.emitted);
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, {y}));
  return true;
}

StatusOr<bool> DecomposeTrilu(DecomposeContext& ctx) {
  Node* n = ctx.node;
  if (ctx.target < 11) {
    *ctx.why_not = "the decomposition needs Range (opset 11)";
    return false;
  }
  int32_t dt = ctx.types->ElemType(n->input(0));
  if (dt == 0) {
    *ctx.why_not = "the input's element type is unknown";
    return false;
  }
  Rewriter& rw = *ctx.rewriter;
  Node* before = n->prev();
  Value* x = n->input(0);
  Value* k = n->input(1) ? n->input(1) : rw.Int64s({0});
  Value* shape = rw.Op("Shape", {x});
  auto scalar = [&](int64_t v) {
    return rw.Constant(*Tensor::FromInt64s(onnx::TensorProto::INT64, {}, {v}), "scalar");
  };
  OS_ASSIGN_OR_RETURN(Value * zero, scalar(0));
  OS_ASSIGN_OR_RETURN(Value * one, scalar(1));
  OS_ASSIGN_OR_RETURN(Value * last_but_one, scalar(-2));
  Value* rows = rw.Op("Gather", {shape, last_but_one});
  OS_ASSIGN_OR_RETURN(Value * last, scalar(-1));
  Value* cols = rw.Op("Gather", {shape, last});
  Value* i = rw.Op("Unsqueeze", {rw.Op("Range", {zero, rows, one}), rw.Int64s({1})});
  Value* j = rw.Op("Range", {zero, cols, one});
  Value* diff = rw.Op("Sub", {j, i});
  k = rw.Op("Reshape", {k, rw.Int64s({})});  // K is a 1-element tensor; make it a scalar
  bool upper = n->GetInt("upper", 1) != 0;
  Value* outside = rw.Op(upper ? "Less" : "Greater", {diff, k});
  Value* mask = rw.Op("Not", {outside});
  Tensor zt;
  zt.mutable_meta().set_data_type(dt);
  Value* zero_x = nullptr;
  if (dt == onnx::TensorProto::FLOAT || dt == onnx::TensorProto::DOUBLE || dt == onnx::TensorProto::FLOAT16 ||
      dt == onnx::TensorProto::BFLOAT16) {
    OS_ASSIGN_OR_RETURN(zero_x, rw.ScalarFloat(0.0f, dt));
  } else {
    zero_x = rw.Op("Cast", {zero}, {Rewriter::AttrInt("to", dt)});
  }
  Value* y = rw.Op("Where", {mask, x, zero_x});
  CollectEmitted(before, n, ctx.opset, *ctx.emitted);
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, {y}));
  return true;
}

// Given:  %Y = BitwiseNot(%X)                            %X: int32
// Result: %Y = Sub(Neg(%X), 1)
// Given:  %Y = BitwiseNot(%X)                            %X: uint8
// Result: %Y = Sub(255, %X)
//
// BitwiseNot (18) in two's complement: ~x = -x - 1 for signed integers, max - x for
// unsigned ones (Neg has no unsigned types).
StatusOr<bool> DecomposeBitwiseNot(DecomposeContext& ctx) {
  Node* n = ctx.node;
  int32_t dt = ctx.types->ElemType(n->input(0));
  Rewriter& rw = *ctx.rewriter;
  // A rank-0 constant of x's type (Tensor::FromUInt64s: exact, an error out of range).
  auto scalar = [&](uint64_t v) -> StatusOr<Value*> {
    OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromUInt64s(dt, {}, {v}));
    return rw.Constant(std::move(t), "scalar");
  };
  Node* before = n->prev();
  Value* y = nullptr;
  switch (dt) {
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64: {
      Value* negated = rw.Op("Neg", {n->input(0)});
      OS_ASSIGN_OR_RETURN(Value * one, scalar(1));
      y = rw.Op("Sub", {negated, one});
      break;
    }
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64: {
      uint64_t all_ones = dt == onnx::TensorProto::UINT8    ? std::numeric_limits<uint8_t>::max()
                          : dt == onnx::TensorProto::UINT16 ? std::numeric_limits<uint16_t>::max()
                          : dt == onnx::TensorProto::UINT32 ? std::numeric_limits<uint32_t>::max()
                                                            : std::numeric_limits<uint64_t>::max();
      OS_ASSIGN_OR_RETURN(Value * max, scalar(all_ones));
      y = rw.Op("Sub", {max, n->input(0)});
      break;
    }
    default: *ctx.why_not = "the input's integer type is unknown"; return false;
  }
  CollectEmitted(before, n, ctx.opset, *ctx.emitted);
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, {y}));
  return true;
}

// Given:  %Y = Max(%a, %b, %c)                           int64, opset 11
// Result: %m = Where(Greater(%a, %b), %a, %b)
//         %Y = Where(Greater(%m, %c), %m, %c)
//
// Max/Min on integers before 12 (Max-8/Min-8 take floating point only), pairwise:
//   max(a, b) = Where(Greater(a, b), a, b)    min(a, b) = Where(Less(a, b), a, b)
// exact for integers (no NaN), broadcasting as Max/Min do. tf2onnx writes Max on int64
// shapes (einsum's batch dims).
StatusOr<bool> DecomposeIntegerMinMax(DecomposeContext& ctx) {
  Node* n = ctx.node;
  int32_t dt = n->num_inputs() > 0 ? ctx.types->ElemType(n->input(0)) : 0;
  bool integer = dt == onnx::TensorProto::INT8 || dt == onnx::TensorProto::INT16 || dt == onnx::TensorProto::INT32 ||
                 dt == onnx::TensorProto::INT64 || dt == onnx::TensorProto::UINT8 || dt == onnx::TensorProto::UINT16 ||
                 dt == onnx::TensorProto::UINT32;  // uint64: onnxruntime has no Where kernel for it
  if (!integer || n->num_inputs() == 0 ||
      std::any_of(n->inputs().begin(), n->inputs().end(), [](Value* v) { return !v; })) {
    *ctx.why_not = "only integer Max/Min (not uint64) are rewritten (as Where(Greater/Less))";
    return false;
  }
  Rewriter& rw = *ctx.rewriter;
  Node* before = n->prev();
  const char* compare = n->Is("Max") ? "Greater" : "Less";
  Value* y = n->input(0);
  for (size_t i = 1; i < n->num_inputs(); ++i) {
    Value* b = n->input(i);
    y = rw.Op("Where", {rw.Op(compare, {y, b}), y, b});
  }
  if (n->num_inputs() == 1) y = rw.Op("Identity", {y});
  CollectEmitted(before, n, ctx.opset, *ctx.emitted);
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, {y}));
  return true;
}

// Given:  %Y = Upsample-9<mode="linear">(%X, %scales)
// Result: %Y = Resize-10<mode="linear">(%X, %scales)       (and back)
//
// Upsample-9 and Resize-10 are one operator under two names (X, scales; nearest or
// linear, asymmetric): Upsample is deprecated from 10, Resize does not exist before 10.
StatusOr<bool> RenameUpsampleResize(DecomposeContext& ctx, const char* to_op, int64_t at_opset) {
  Node* n = ctx.node;
  if (n->num_inputs() != 2) {
    *ctx.why_not = absl::StrCat("only the (X, scales) form maps onto ", to_op);
    return false;
  }
  std::vector<onnx::AttributeProto> attrs;
  for (const Attribute& a : n->attributes()) attrs.push_back(a.proto());
  Node* before = n->prev();
  Node* r = ctx.rewriter->Create(to_op, {n->input(0), n->input(1)}, attrs, 1, ctx.domain);
  CollectEmitted(before, n, at_opset, *ctx.emitted);
  ctx.types->Alias(n->output(0), r->output(0));
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, {r->output(0)}));
  return true;
}

// Given:  %Y = Scatter-9<axis=1>(%X, %I, %U)
// Result: %Y = ScatterElements-11<axis=1>(%X, %I, %U)
//
// Scatter is deprecated from 11: ScatterElements-11 is the same operator renamed (same
// inputs and axis; it also allows negative indices, which Scatter-9's data never hold).
StatusOr<bool> RenameScatter(DecomposeContext& ctx) {
  Node* n = ctx.node;
  std::vector<onnx::AttributeProto> attrs;
  for (const Attribute& a : n->attributes()) attrs.push_back(a.proto());
  Node* before = n->prev();
  Node* r = ctx.rewriter->Create("ScatterElements", {n->inputs().begin(), n->inputs().end()}, attrs, 1, ctx.domain);
  CollectEmitted(before, n, 11, *ctx.emitted);
  ctx.types->Alias(n->output(0), r->output(0));
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, {r->output(0)}));
  return true;
}

// Expands the op's function body from the schema at the node's opset.
StatusOr<bool> DecomposeByFunction(DecomposeContext& ctx) {
  Node* n = ctx.node;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n->op_type(), static_cast<int>(ctx.opset), ctx.domain);
  if (!schema) {
    *ctx.why_not = "no schema";
    return false;
  }
  onnx::FunctionProto body;
  bool have = false;
  if (schema->HasFunction()) {
    if (const onnx::FunctionProto* f = schema->GetFunction(static_cast<int>(ctx.opset))) {
      body = *f;
      have = true;
    }
  }
  if (!have && schema->HasContextDependentFunction()) {
    onnx::NodeProto np;
    np.set_op_type(n->op_type());
    np.set_domain(n->domain());
    std::vector<onnx::TypeProto> input_types;
    for (Value* v : n->inputs()) {
      np.add_input(v ? v->name() : "");
      const onnx::TypeProto* t = ctx.types->Find(v);
      if (v && !t) {
        *ctx.why_not = absl::StrCat("its function body depends on input types, and '", v->name(), "' has none");
        return false;
      }
      input_types.push_back(t ? *t : onnx::TypeProto());
    }
    for (Value* v : n->outputs()) np.add_output(v ? v->name() : "");
    for (const Attribute& a : n->attributes()) *np.add_attribute() = a.proto();
    onnx::FunctionBodyBuildContextImpl bctx(np, input_types);
    try {
      have = schema->BuildContextDependentFunction(bctx, body, static_cast<int>(ctx.opset));
    } catch (const std::exception& e) {
      *ctx.why_not = absl::StrCat("its function body could not be built: ", e.what());
      return false;
    }
  }
  if (!have) {
    *ctx.why_not = absl::StrCat("no decomposition of ", n->op_type(), " into older ops is known");
    return false;
  }
  int64_t body_opset = ctx.opset;
  for (const auto& imp : body.opset_import())
    if (CanonicalDomain(imp.domain()) == ctx.domain) body_opset = imp.version();
  for (const auto& bn : body.node()) {
    for (const auto& a : bn.attribute())
      if (a.has_g() || a.graphs_size() > 0) {
        *ctx.why_not = "its function body holds subgraphs";
        return false;
      }
    if (CanonicalDomain(bn.domain()) != ctx.domain) {
      *ctx.why_not = absl::StrCat("its function body uses domain '", bn.domain(), "'");
      return false;
    }
  }
  // Attribute values for references: the node's, else the schema's default.
  auto resolve = [&](const std::string& ref) -> const onnx::AttributeProto* {
    if (const Attribute* a = n->FindAttribute(ref)) return &a->proto();
    auto it = schema->attributes().find(ref);
    if (it != schema->attributes().end() && it->second.default_value.type() != onnx::AttributeProto::UNDEFINED)
      return &it->second.default_value;
    return nullptr;
  };
  absl::flat_hash_map<std::string, Value*> env;
  for (int i = 0; i < body.input_size(); ++i) env[body.input(i)] = n->input(i);
  Node* before = n->prev();
  for (const auto& bn : body.node()) {
    std::vector<Value*> inputs;
    for (const auto& name : bn.input()) {
      if (name.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      auto it = env.find(name);
      if (it == env.end()) {
        *ctx.why_not = absl::StrCat("its function body reads '", name, "' before defining it");
        return false;
      }
      inputs.push_back(it->second);
    }
    std::vector<onnx::AttributeProto> attrs;
    for (const auto& a : bn.attribute()) {
      if (a.ref_attr_name().empty()) {
        attrs.push_back(a);
        continue;
      }
      if (const onnx::AttributeProto* v = resolve(a.ref_attr_name())) {
        onnx::AttributeProto copy = *v;
        copy.set_name(a.name());
        attrs.push_back(copy);
      }
    }
    Node* created = ctx.rewriter->Create(bn.op_type(), inputs, attrs, bn.output_size(), bn.domain());
    for (int k = 0; k < bn.output_size(); ++k) env[bn.output(k)] = created->output(k);
  }
  std::vector<Value*> outputs;
  for (int i = 0; i < body.output_size(); ++i) {
    auto it = env.find(body.output(i));
    outputs.push_back(it == env.end() ? nullptr : it->second);
  }
  CollectEmitted(before, n, body_opset, *ctx.emitted);
  OS_RETURN_IF_ERROR(FinishReplacement(ctx, outputs));
  return true;
}

}  // namespace

int64_t DecomposeBelow(const std::string& domain, const std::string& op) {
  // GroupNormalization-18 scales per group, -21 per channel: no step between them.
  if (domain.empty() && op == "GroupNormalization") return 21;
  return -1;
}

int64_t BridgeVersion(const std::string& domain, const std::string& op, int64_t target) {
  if (!domain.empty()) return -1;
  if (op == "Resize" && target < 10) return 10;
  if (op == "Upsample" && target >= 10) return 9;
  return -1;
}

StatusOr<bool> Decompose(DecomposeContext& ctx) {
  const std::string& op = ctx.node->op_type();
  if (ctx.domain.empty() && op == "LayerNormalization") return DecomposeLayerNorm(ctx);
  if (ctx.domain.empty() && op == "Gelu") return DecomposeGelu(ctx);
  if (ctx.domain.empty() && op == "Trilu") return DecomposeTrilu(ctx);
  if (ctx.domain.empty() && op == "RMSNormalization") return DecomposeRmsNorm(ctx);
  if (ctx.domain.empty() && op == "BitwiseNot") return DecomposeBitwiseNot(ctx);
  if (ctx.domain.empty() && (op == "Max" || op == "Min") && ctx.target < 12) return DecomposeIntegerMinMax(ctx);
  if (ctx.domain.empty() && op == "Upsample" && ctx.opset == 9 && ctx.target >= 10)
    return RenameUpsampleResize(ctx, "Resize", 10);
  if (ctx.domain.empty() && op == "Resize" && ctx.opset == 10 && ctx.target < 10)
    return RenameUpsampleResize(ctx, "Upsample", 9);
  if (ctx.domain.empty() && op == "Scatter" && ctx.target >= 11) return RenameScatter(ctx);
  return DecomposeByFunction(ctx);
}

}  // namespace onnxsurgeon::opset

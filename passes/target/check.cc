#include "passes/target/check.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
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
#include "onnx/defs/schema.h"
#include "passes/reshapes/reshape_facts.h"

namespace onnxsurgeon::target {
namespace {

std::string NodeName(const Node& n) {
  return n.name().empty() ? absl::StrCat("<unnamed ", n.op_type(), ">") : n.name();
}

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

bool IsConstant(const Value* v) {
  if (!v) return false;
  if (v->IsInitializer() && !v->IsGraphInput()) return true;
  return v->producer() && v->producer()->Is("Constant");
}

// ai.onnx and ai.onnx.ml are standard; anything else is a custom domain (or a function).
bool IsStandardDomain(const std::string& d) {
  std::string_view c = CanonicalDomain(d);
  return c.empty() || c == "ai.onnx.ml";
}

std::string ElemTypeName(int32_t t) {
  return onnx::TensorProto::DataType_IsValid(t) ? absl::AsciiStrToLower(onnx::TensorProto::DataType_Name(t)) : "?";
}

// The default value of a node's attribute from its schema, as text ("" when none).
std::string DefaultOf(const Node& n, const std::string& attr) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(
      n.op_type(), static_cast<int>(n.graph()->OpsetVersion(n.domain())), std::string(CanonicalDomain(n.domain())));
  if (!schema) return "";
  auto it = schema->attributes().find(attr);
  if (it == schema->attributes().end() || !it->second.default_value.has_name()) return "";
  const auto& d = it->second.default_value;
  if (d.has_s()) return d.s();
  if (d.has_i()) return absl::StrCat(d.i());
  if (d.has_f()) return absl::StrCat(d.f());
  return "";
}

std::string AttrText(const Attribute& a) {
  const auto& p = a.proto();
  if (p.has_s()) return p.s();
  if (p.type() == onnx::AttributeProto::INT) return absl::StrCat(p.i());
  if (p.type() == onnx::AttributeProto::FLOAT) return absl::StrCat(p.f());
  return "<non-scalar>";
}

std::string ShapeText(const Value& v);

// Whether v is computed from tensor shapes and constants alone (Shape, Size, and arithmetic on
// them): a converter given the input shapes folds such values before it lowers anything.
// `known` remembers each value's answer, so a value many paths reach is walked once; past 64
// levels a value counts as not derived (the fact then blocks: the safe side).
bool ShapeDerived(const Value* v, absl::flat_hash_map<const Value*, bool>& known, int depth = 0) {
  if (!v || IsConstant(v)) return v != nullptr;
  if (auto it = known.find(v); it != known.end()) return it->second;
  const Node* p = v->producer();
  bool derived = p && depth <= 64 && p->subgraphs().empty();
  if (derived && !p->Is("Shape") && !p->Is("Size")) {
    for (const Value* in : p->inputs())
      if (in && !ShapeDerived(in, known, depth + 1)) {
        derived = false;
        break;
      }
  }
  known[v] = derived;
  return derived;
}

// Whether `when` (MissingOp) holds for this node; `detail` says how.
bool Holds(const Node& n, const std::string& when, const TypeFacts& types, std::string* detail) {
  if (when.empty()) return true;
  if (absl::StartsWith(when, "attribute:")) {
    std::string spec = when.substr(10);
    std::string name = spec, value;
    bool has_value = false;
    if (size_t eq = spec.find('='); eq != std::string::npos) {
      name = spec.substr(0, eq);
      value = spec.substr(eq + 1);
      has_value = true;
    }
    const Attribute* a = n.FindAttribute(name);
    if (!a) {
      // An absent attribute has its default value: "direction=forward" holds for an LSTM
      // that does not set direction.
      if (!has_value || value.empty() || DefaultOf(n, name) != value) return false;
      *detail = absl::StrCat(name, "=", value, " (the default)");
      return true;
    }
    std::string actual = AttrText(*a);
    if (has_value ? actual != value : actual == DefaultOf(n, name)) return false;
    *detail = absl::StrCat(name, "=", actual);
    return true;
  }
  auto each_tensor = [&](auto&& f) {
    for (const Value* v : n.inputs())
      if (v && v->type() && v->type()->has_tensor_type() && f(*v)) return true;
    for (const Value* v : n.outputs())
      if (v && v->type() && v->type()->has_tensor_type() && f(*v)) return true;
    return false;
  };
  if (absl::StartsWith(when, "dtype:")) {
    std::string want = absl::AsciiStrToLower(when.substr(6));
    return each_tensor([&](const Value& v) {
      if (ElemTypeName(v.type()->tensor_type().elem_type()) != want) return false;
      *detail = absl::StrCat("'", v.name(), "' is ", want);
      return true;
    });
  }
  if (absl::StartsWith(when, "rank>") || absl::StartsWith(when, "rank<")) {
    const bool above = when[4] == '>';
    int64_t limit = 0;
    if (!absl::SimpleAtoi(when.substr(5), &limit)) return false;
    return each_tensor([&](const Value& v) {
      if (!v.type()->tensor_type().has_shape()) return false;
      const int64_t rank = v.type()->tensor_type().shape().dim_size();
      if (above ? rank <= limit : rank >= limit) return false;
      *detail = absl::StrCat("'", v.name(), "' has rank ", rank);
      return true;
    });
  }
  if (absl::StartsWith(when, "dim:")) {
    std::string spec = when.substr(4);
    size_t colon = spec.find(':'), gt = spec.find('>');
    int64_t i = 0, axis = 0, limit = 0;
    if (colon == std::string::npos || gt == std::string::npos || !absl::SimpleAtoi(spec.substr(0, colon), &i) ||
        !absl::SimpleAtoi(spec.substr(colon + 1, gt - colon - 1), &axis) ||
        !absl::SimpleAtoi(spec.substr(gt + 1), &limit))
      return false;
    if (i < 0 || static_cast<size_t>(i) >= n.num_inputs() || !n.input(i)) return false;
    const Value* v = n.input(i);
    if (!v->type() || !v->type()->has_tensor_type() || !v->type()->tensor_type().has_shape()) return false;
    const auto& shape = v->type()->tensor_type().shape();
    if (axis < 0 || axis >= shape.dim_size() || !shape.dim(axis).has_dim_value()) return false;
    const int64_t d = shape.dim(axis).dim_value();
    if (d <= limit) return false;
    *detail = absl::StrCat("input ", i, " '", v->name(), "' has dim ", axis, " = ", d);
    return true;
  }
  if (absl::StartsWith(when, "input:")) {
    int64_t i = 0;
    if (!absl::SimpleAtoi(when.substr(6), &i) || i < 0 || static_cast<size_t>(i) >= n.num_inputs() || !n.input(i))
      return false;
    *detail = absl::StrCat("input ", i, " '", n.input(i)->name(), "' is given");
    return true;
  }
  if (absl::StartsWith(when, "compute-dtype:")) {
    // Conversions and constants compute nothing; every other op computes in its outputs' type.
    if (n.Is("Cast") || n.Is("CastLike") || n.Is("Constant")) return false;
    std::string want = absl::AsciiStrToLower(when.substr(14));
    for (const Value* v : n.outputs()) {
      if (!v) continue;
      int32_t t = types.ElemType(v);
      if (t == 0 || ElemTypeName(t) != want) continue;
      *detail = absl::StrCat("computes '", v->name(), "' in ", want);
      return true;
    }
    return false;
  }
  if (when == "constant-scatter-after-gemm") {
    // ScatterND(data, indices, updates) with constant indices whose data a Gemm computes
    // (rknn-toolkit2 builds a Gemm as a conv, and its conv rules then fail on the slices it
    // makes of a constant-index ScatterND; after MatMul or Conv it builds).
    if (!n.Is("ScatterND") || n.num_inputs() < 3 || !IsConstant(n.input(1)) || !n.input(0)) return false;
    const Node* producer = n.input(0)->producer();
    if (!producer || !producer->Is("Gemm")) return false;
    *detail =
        absl::StrCat("constant indices '", n.input(1)->name(), "', data computed by Gemm '", NodeName(*producer), "'");
    return true;
  }
  if (absl::StartsWith(when, "dynamic-input:")) {
    int64_t i = 0;
    if (!absl::SimpleAtoi(when.substr(14), &i) || i < 0 || static_cast<size_t>(i) >= n.num_inputs() || !n.input(i))
      return false;
    if (IsConstant(n.input(i))) return false;
    *detail = absl::StrCat("input ", i, " '", n.input(i)->name(), "' is computed at run time");
    return true;
  }
  if (absl::StartsWith(when, "inserts-unit-dims:")) {
    // A Reshape whose output (of at least this rank) is its input with unit dims inserted.
    int64_t min_rank = 0;
    if (!n.Is("Reshape") || !absl::SimpleAtoi(when.substr(18), &min_rank)) return false;
    auto shapes = passes::reshapes::KnownReshapeShapes(n, nullptr);
    if (!shapes || static_cast<int64_t>(shapes->out.size()) < min_rank) return false;
    if (!passes::reshapes::InsertedUnitAxes(shapes->in, shapes->out)) return false;
    *detail = absl::StrCat("'", n.input(0)->name(), "' ", ShapeToString(shapes->in), " -> ", ShapeToString(shapes->out),
                           ": only unit dims inserted");
    return true;
  }
  if (absl::StartsWith(when, "cast-from:")) {
    // A Cast that changes an input of this element type into another one.
    if (!n.Is("Cast") || n.num_inputs() < 1 || !n.input(0) || n.num_outputs() < 1 || !n.output(0)) return false;
    std::string want = absl::AsciiStrToLower(when.substr(10));
    const int32_t from = types.ElemType(n.input(0)), to = types.ElemType(n.output(0));
    if (from == 0 || ElemTypeName(from) != want || from == to) return false;
    absl::flat_hash_map<const Value*, bool> known;
    if (ShapeDerived(n.input(0), known)) return false;
    *detail = absl::StrCat("'", n.input(0)->name(), "' ", want, " -> ", to ? ElemTypeName(to) : "another type");
    return true;
  }
  if (when == "moves-unit-dims-only") {
    // A Transpose that transpose-to-reshape writes as a Reshape (it keeps the order of the
    // dims above size 1).
    if (!n.Is("Transpose")) return false;
    if (!passes::reshapes::TransposeAsReshape(n, nullptr)) return false;
    *detail = "moves only dims of size 1";
    return true;
  }
  if (when == "step-not-one") {
    // A Slice whose steps input (opset >= 10) is not all ones, or not known before run time.
    if (!n.Is("Slice") || n.num_inputs() < 5 || !n.input(4)) return false;
    auto steps = ConstantInt64s(n.input(4));
    if (steps && std::all_of(steps->begin(), steps->end(), [](int64_t s) { return s == 1; })) return false;
    *detail = steps ? absl::StrCat("steps '", n.input(4)->name(), "' = [", absl::StrJoin(*steps, ","), "]")
                    : absl::StrCat("steps '", n.input(4)->name(), "' is computed at run time");
    return true;
  }
  if (when == "vector-minuend") {
    // Sub(c, y) with c a constant of rank >= 1 below y's rank (beta - mean * scale in a
    // hand-written LayerNorm): onnx2tf's explicit broadcast of c fails.
    if (!n.Is("Sub") || n.num_inputs() != 2 || !IsConstant(n.input(0)) || !n.input(1)) return false;
    const int64_t c = types.Rank(n.input(0)), y = types.Rank(n.input(1));
    if (c < 1 || y < 0 || c >= y) return false;
    *detail = absl::StrCat("constant '", n.input(0)->name(), "' of rank ", c, " minus '", n.input(1)->name(),
                           "' of rank ", y);
    return true;
  }
  if (when == "square-ncw-input") {
    // Input 0 of rank 3 whose dims 1 and 2 are one static size, flattened to rank 2:
    // onnx2tf cannot tell NCW from NWC there, and the flattening order depends on it.
    // (A Reshape of a square [8,5,5] to rank 4, tf_vit_block's attention, converted right.)
    if (n.num_inputs() < 1 || !n.input(0) || n.num_outputs() < 1 || types.Rank(n.output(0)) != 2) return false;
    auto dims = StaticShapeOf(n.input(0));
    if (!dims || dims->size() != 3 || (*dims)[1] <= 1 || (*dims)[1] != (*dims)[2]) return false;
    *detail = absl::StrCat("input '", n.input(0)->name(), "' ", ShapeText(*n.input(0)),
                           " is square in its last two axes, flattened to rank 2");
    return true;
  }
  if (when == "channel-axis-equals-spatial") {
    // axis=1 over rank-4 tensors whose channel dim equals a spatial dim (static): onnx2tf's
    // NCHW -> NHWC layout guess cannot tell those axes apart.
    const Attribute* a = n.FindAttribute("axis");
    if (!a || (a->proto().i() != 1 && a->proto().i() != -3)) return false;
    return each_tensor([&](const Value& v) {
      const auto& t = v.type()->tensor_type();
      if (!t.has_shape() || t.shape().dim_size() != 4) return false;
      const auto& d = t.shape().dim();
      if (!d[1].has_dim_value() || d[1].dim_value() <= 1) return false;
      for (int i : {2, 3}) {
        if (d[i].has_dim_value() && d[i].dim_value() == d[1].dim_value()) {
          *detail = absl::StrCat("axis 1 of '", v.name(), "' ", ShapeText(v), " has the size of its axis ", i);
          return true;
        }
      }
      return false;
    });
  }
  if (when == "mixed-precision-layernorm") {
    // mean = ReduceMean(c), c = Cast(h, to=FLOAT), h : float16/bfloat16, and Sub(c, mean):
    // the head of a LayerNorm written out in a reduced-precision model.
    if (!n.Is("ReduceMean") || n.num_inputs() < 1 || !n.input(0) || !n.output(0)) return false;
    const Value* c = n.input(0);
    const Node* cast = c->producer();
    if (!cast || !cast->Is("Cast") || !cast->input(0)) return false;
    int32_t from = types.ElemType(cast->input(0));  // exporters often annotate nothing inside
    if (from != onnx::TensorProto::FLOAT16 && from != onnx::TensorProto::BFLOAT16) return false;
    for (const Use& use : n.output(0)->uses()) {
      const Node* user = use.node;
      if (user->Is("Sub") && user->num_inputs() == 2 && user->input(0) == c && user->input(1) == n.output(0)) {
        *detail = absl::StrCat("the mean of '", cast->input(0)->name(), "' (", ElemTypeName(from),
                               ") cast to float, subtracted by '", NodeName(*user), "'");
        return true;
      }
    }
    return false;
  }
  if (when == "channels-first-layernorm") {
    // mean = ReduceMean(x) over axes without x's last axis, and Sub(x, mean): the head of a
    // LayerNorm written over the channels of an NCHW tensor (ConvNeXt's LayerNorm2d).
    if (!n.Is("ReduceMean") || n.num_inputs() < 1 || !n.input(0) || !n.output(0)) return false;
    const Value* x = n.input(0);
    std::optional<std::vector<int64_t>> axes;
    if (const Attribute* a = n.FindAttribute("axes")) {
      axes = std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
    } else if (n.num_inputs() > 1 && n.input(1)) {
      axes = ConstantInt64s(n.input(1));
    }
    if (!axes || axes->empty()) return false;
    int64_t rank = types.Rank(x);
    for (int64_t axis : *axes) {
      if (axis == -1 || (rank >= 0 && axis == rank - 1)) return false;
      if (axis >= 0 && rank < 0) return false;  // cannot tell whether it is the last axis
    }
    for (const Use& use : n.output(0)->uses()) {
      const Node* user = use.node;
      if (user->Is("Sub") && user->num_inputs() == 2 && user->input(0) == x && user->input(1) == n.output(0)) {
        *detail = absl::StrCat("a LayerNorm over axes [", absl::StrJoin(*axes, ","), "] of '", x->name(),
                               "', not its last axis");
        return true;
      }
    }
    return false;
  }
  if (when == "outer-scope-input") {
    // A subgraph of the node (or one nested in it) reads a value of a graph outside the
    // node's subgraphs that is not a constant: onnx2tf builds a Loop body inside
    // tf.while_loop, where such a value is a symbolic Keras tensor of the outer model.
    std::vector<const Graph*> inner;
    std::function<void(const Graph*)> collect = [&](const Graph* g) {
      inner.push_back(g);
      for (const Node* m : g->nodes())
        for (Graph* sub : m->subgraphs()) collect(sub);
    };
    for (Graph* sub : n.subgraphs()) collect(sub);
    for (const Graph* g : inner)
      for (const Node* m : g->nodes())
        for (const Value* v : m->inputs()) {
          if (!v || IsConstant(v) || std::find(inner.begin(), inner.end(), v->graph()) != inner.end()) continue;
          *detail = absl::StrCat("its body reads '", v->name(), "' of the enclosing graph");
          return true;
        }
    return false;
  }
  if (when == "unknown-rank-output" || when == "unknown-rank-branch-output") {
    const bool branches_only = when == "unknown-rank-branch-output";
    auto unknown = [&](const Value* v, const std::string& what) {
      if (!v) return false;
      if (v->type() && v->type()->has_tensor_type() && v->type()->tensor_type().has_shape()) return false;
      if (v->type() && !v->type()->has_tensor_type()) return false;  // sequences etc.: other rules
      *detail = absl::StrCat(what, " '", v->name(), "' has no known rank");
      return true;
    };
    if (!branches_only)
      for (const Value* v : n.outputs())
        if (unknown(v, "output")) return true;
    for (Graph* sub : n.subgraphs())
      for (const Value* v : sub->outputs())
        if (unknown(v, absl::StrCat("branch '", sub->name(), "' output"))) return true;
    return false;
  }
  return false;
}

bool NamedLikeLayerNorm(const std::string& op) {
  std::string l = absl::AsciiStrToLower(op);
  return absl::StrContains(l, "layernorm") || absl::StrContains(l, "layer_norm");
}

bool IsIndexPut(const Node& n) {
  if (n.op_type() == "index_put" || n.op_type() == "index_put_") return true;
  if (n.op_type() != "ATen") return false;
  const Attribute* a = n.FindAttribute("operator");
  return a && (a->proto().s() == "index_put" || a->proto().s() == "index_put_");
}

bool DynamicDims(const Value& v) {
  if (!v.type() || !v.type()->has_tensor_type() || !v.type()->tensor_type().has_shape()) return true;
  for (const auto& d : v.type()->tensor_type().shape().dim())
    if (!d.has_dim_value() || d.dim_value() < 0) return true;
  return false;
}

std::string ShapeText(const Value& v) {
  if (!v.type() || !v.type()->has_tensor_type() || !v.type()->tensor_type().has_shape()) return "unknown shape";
  std::vector<std::string> dims;
  for (const auto& d : v.type()->tensor_type().shape().dim())
    dims.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// The opset before the version of `n`'s op in force at its graph's opset (ReduceSum-13 ->
// 12), or -1 without a schema.
int64_t OpsetBeforeForm(const Node& n) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(
      n.op_type(), static_cast<int>(n.graph()->OpsetVersion(n.domain())), std::string(CanonicalDomain(n.domain())));
  return schema ? schema->SinceVersion() - 1 : -1;
}

// The opset convert-opset must reach for every `input:I` fact that holds in the model: the
// one before the form that takes the input (-1 when none holds).
int64_t OpsetBeforeForms(const Profile& p, const Model& model) {
  int64_t goal = -1;
  for (Graph* g : model.AllGraphs()) {
    for (Node* n : g->nodes()) {
      if (!CanonicalDomain(n->domain()).empty()) continue;
      for (const MissingOp& m : p.missing) {
        if (!absl::StartsWith(m.when, "input:") || !CanonicalDomain(m.domain).empty()) continue;
        if (std::find(m.ops.begin(), m.ops.end(), n->op_type()) == m.ops.end()) continue;
        int64_t i = 0;
        if (!absl::SimpleAtoi(m.when.substr(6), &i) || static_cast<size_t>(i) >= n->num_inputs() || !n->input(i))
          continue;
        int64_t before = OpsetBeforeForm(*n);
        if (before >= 1 && (goal < 0 || before < goal)) goal = before;
      }
    }
  }
  return goal;
}

class Checker {
 public:
  Checker(const Model& model, const Profile& p, const CheckOptions& o)
      : model_(model), p_(p), o_(o), types_(model), static_inputs_(StaticInputs(model, o)) {}

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

  void Block(const Node* n, std::string reason, std::string fact, std::string source, Step step,
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
    f.fix = step == Step::kNone ? absl::StrCat("none: ", no_fix.empty() ? "no onnxsurgeon pass removes this" : no_fix)
                                : StepText(step, p_, model_, "");
    report_.blockers.push_back(std::move(f));
  }

  void ModelLevel() {
    int64_t opset = model_.OpsetVersion("");
    if (opset >= 0 && (opset > p_.opset_max || opset < p_.opset_min)) {
      Block(nullptr, absl::StrCat("the model imports ai.onnx opset ", opset),
            Fact(absl::StrCat("ai.onnx opset ", p_.opset_min, "..", p_.opset_max)), p_.opset_source,
            Step::kConvertOpset);
    }
    int64_t ml = model_.OpsetVersion("ai.onnx.ml");
    if (ml >= 0 && p_.ml_opset_max >= 0 && ml > p_.ml_opset_max) {
      Block(nullptr, absl::StrCat("the model imports ai.onnx.ml opset ", ml),
            Fact(absl::StrCat("ai.onnx.ml opset <= ", p_.ml_opset_max)), p_.opset_source, Step::kConvertOpset);
    }
    int64_t ir = model_.proto().ir_version();
    if (p_.ir_max >= 0 && ir > p_.ir_max) {
      Block(nullptr, absl::StrCat("the model declares IR version ", ir),
            Fact(absl::StrCat("IR version <= ", p_.ir_max)), p_.ir_source, Step::kLowerIr);
    }
    if (!p_.local_functions && !model_.functions().empty()) {
      std::vector<std::string> names;
      for (const auto& f : model_.functions()) names.push_back(absl::StrCat(f->domain(), "::", f->name()));
      Block(nullptr, absl::StrCat("the model defines local functions (", absl::StrJoin(names, ", "), ")"),
            Fact("no model-local functions"), p_.custom_source, Step::kInlineFunctions);
    }
    if (!p_.custom_domains) {
      std::set<std::string> used;
      for (Graph* g : model_.AllGraphs())
        for (Node* n : g->nodes()) used.insert(std::string(CanonicalDomain(n->domain())));
      for (const auto& f : model_.functions()) used.insert(f->domain());
      for (const auto& imp : model_.proto().opset_import()) {
        std::string d(CanonicalDomain(imp.domain()));
        if (!IsStandardDomain(d) && !used.count(d)) {
          Block(nullptr, absl::StrCat("the model imports domain '", d, "' that nothing uses"),
                Fact("no custom domains"), p_.custom_source, Step::kPruneImports);
        }
      }
    }
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
              Step::kInlineWeights);
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
              Fact("value_info on every tensor"), p_.value_info_source, Step::kAnnotateShapes);
      }
    }
  }

  void NodeLevel(const Node& n) {
    const std::string& op = n.op_type();
    bool standard = IsStandardDomain(n.domain());
    if (!standard) {
      bool call = model_.FindFunction(n.domain(), op, n.proto().overload()) != nullptr;
      if (call) {
        if (!p_.local_functions)
          Block(&n, "a call of a model-local function", Fact("no model-local functions"), p_.custom_source,
                Step::kInlineFunctions);
      } else if (!KnownDomain(n.domain())) {
        Step step = IsIndexPut(n) ? Step::kRewriteIndexPut : NamedLikeLayerNorm(op) ? Step::kFixLayerNorm : Step::kNone;
        std::string fact =
            p_.custom_domains
                ? absl::StrCat("custom-domain ops only of ",
                               p_.known_domains.empty() ? "no domain" : absl::StrJoin(p_.known_domains, ", "))
                : "no custom-domain ops";
        Block(&n, absl::StrCat("custom-domain op ", OpName(n)), Fact(fact), p_.custom_source, step,
              "a custom op has no standard equivalent onnxsurgeon knows");
      }
      return;
    }
    if (CanonicalDomain(n.domain()).empty()) {
      if (op == "LayerNormalization" && p_.layernorm == Form::kDecomposed) {
        Block(&n, "LayerNormalization", Fact("LayerNorm decomposed (no LayerNormalization)"), p_.layernorm_source,
              Step::kDecomposeLayerNorm);
      }
      if (op == "Gelu" && p_.gelu == Form::kDecomposed) {
        Block(&n, "Gelu", Fact("GELU decomposed (no Gelu)"), p_.gelu_source, Step::kRewriteGelu);
      }
      if (op == "Erf" && !p_.erf) Block(&n, "Erf", Fact("no Erf"), p_.erf_source, Step::kRewriteErf);
      if (op == "ScatterND") {
        const Attribute* r = n.FindAttribute("reduction");
        if (r && r->proto().s() != "none" && p_.scatternd_reduction != ScatterReduction::kNative) {
          bool lower = p_.scatternd_reduction == ScatterReduction::kLower;
          Block(&n, absl::StrCat("ScatterND reduction=", r->proto().s()),
                Fact(lower ? "ScatterND without reduction (the attribute is ignored or refused)"
                           : "no ScatterND reduction"),
                p_.scatternd_source, lower ? Step::kLowerScatterND : Step::kNone,
                "the profile says the lowered form is refused too");
        }
      }
      if (op == "If" && p_.if_rule != IfRule::kAny) {
        bool constant = IsConstant(n.input(0));
        if (p_.if_rule == IfRule::kNone || !constant) {
          std::string fact = p_.if_rule == IfRule::kNone ? "no If" : "If only with a constant condition";
          if (constant) {
            Block(&n, "If with a constant condition", Fact(fact), p_.control_flow_source, Step::kSimplify);
          } else if (static_inputs_) {
            Block(&n, "If whose condition is computed at run time", Fact(fact), p_.control_flow_source,
                  Step::kSimplify);
          } else {
            Block(&n, "If whose condition is computed at run time", Fact(fact), p_.control_flow_source, Step::kNone,
                  "fold-constants folds an If only when its condition is constant; if the condition depends on input "
                  "shapes, give --input-shapes");
          }
        }
      }
      if ((op == "Loop" || op == "Scan") && !p_.loop) {
        Block(&n, op, Fact("no Loop or Scan"), p_.control_flow_source, Step::kNone,
              "onnxsurgeon does not unroll loops");
      }
    }
    for (const MissingOp& m : p_.missing) {
      if (CanonicalDomain(m.domain) != CanonicalDomain(n.domain())) continue;
      const bool every_op = m.ops.size() == 1 && m.ops[0] == "*";
      if (!every_op && std::find(m.ops.begin(), m.ops.end(), op) == m.ops.end()) continue;
      std::string detail;
      if (!Holds(n, m.when, types_, &detail)) continue;
      Step step = Step::kNone;
      std::string no_fix;
      if (op == "LayerNormalization") step = Step::kDecomposeLayerNorm;
      else if (op == "Gelu") step = Step::kRewriteGelu;
      else if (op == "Erf") step = Step::kRewriteErf;
      else if (op == "Reciprocal") step = Step::kRewriteReciprocal;
      else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") step = Step::kRewriteGlobalPool;
      else if (op == "ConvTranspose" && absl::StartsWith(m.when, "attribute:group"))
        step = Step::kSplitGroupedConvTranspose;
      else if (op == "Reshape" && absl::StartsWith(m.when, "attribute:allowzero")) step = Step::kDropReshapeAllowzero;
      else if (op == "Reshape" && absl::StartsWith(m.when, "inserts-unit-dims:")) step = Step::kReshapeToUnsqueeze;
      else if (op == "Transpose" && m.when == "moves-unit-dims-only") step = Step::kTransposeToReshape;
      else if (op == "Constant") step = Step::kExtractConstants;
      else if (op == "CastLike") step = Step::kRewriteCastLike;
      else if (op == "ReduceMean" && m.when == "mixed-precision-layernorm") step = Step::kFixLayerNorm;
      else if (op == "ReduceMean" && m.when == "channels-first-layernorm") step = Step::kCanonicalLayerNorm;
      else if (op == "ScatterND" && absl::StartsWith(m.when, "attribute:reduction")) step = Step::kLowerScatterND;
      else if (op == "ScatterND" && m.when == "constant-scatter-after-gemm") step = Step::kRewriteConstantScatterND;
      else if (op == "ScatterND" && m.when.empty() && n.num_inputs() >= 3 && IsConstant(n.input(1)) &&
               (!n.FindAttribute("reduction") || n.FindAttribute("reduction")->proto().s() == "none"))
        step = Step::kRewriteConstantScatterND;  // a selection needs no ScatterND (it may refuse: then named)
      else if ((op == "Shape" || op == "Size") && p_.static_shapes) {
        if (!static_inputs_) no_fix = "give --input-shapes: with static inputs, simplify folds shape arithmetic";
        else step = Step::kSimplify;
      } else if (op == "If" && IsConstant(n.input(0))) step = Step::kSimplify;
      else if (absl::StartsWith(m.when, "input:")) {
        // The op's earlier form takes no such input (ReduceSum before 13: axes an attribute).
        int64_t before = OpsetBeforeForm(n);
        if (before >= p_.opset_min) step = Step::kConvertOpsetBeforeForm;
        else
          no_fix = absl::StrCat("the form of ", op, " without input ", m.when.substr(6), " is older than opset ",
                                before + 1, ", outside the target's opsets ", p_.opset_min, "..", p_.opset_max);
      } else if (every_op && absl::StartsWith(m.when, "compute-dtype:"))
        no_fix = absl::StrCat("onnxsurgeon does not widen a model's compute type; export it in another type than ",
                              m.when.substr(14));
      else if (m.when == "vector-minuend") step = Step::kFixLayerNorm;  // a LayerNorm's beta - mean * scale
      else if (m.when == "square-ncw-input") step = Step::kSimplify;    // fuse-reshapes runs the region 2-D
      else if (m.when == "outer-scope-input" && op == "Loop") step = Step::kLoopCarryOuterValues;
      else if (m.when == "outer-scope-input")
        no_fix = absl::StrCat("no onnxsurgeon pass makes a ", op, " subgraph carry the outer values it reads");
      else if (m.when == "channel-axis-equals-spatial")
        no_fix =
            "no exact rewrite removes the ambiguity; input shapes whose H and W differ from the channel count "
            "avoid it";
      Block(&n, detail.empty() ? op : absl::StrCat(op, " (", detail, ")"),
            Fact(absl::StrCat("lacks ", every_op ? "every op" : op,
                              m.when.empty() ? "" : absl::StrCat(" when ", m.when))),
            m.source, step, no_fix);
    }
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
      f.step = Step::kNone;
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
          f.step = Step::kSetInputShape;
          f.fix = "set-input-shape (from --input-shapes)";
        } else {
          f.step = Step::kNone;
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
        f.step = Step::kNone;
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
  const Profile& p_;
  const CheckOptions& o_;
  TypeFacts types_;  // inference runs only if a rule asks about an unannotated value
  const bool static_inputs_;
  CheckReport report_;
};

}  // namespace

std::string Finding::Describe() const {
  std::string head = node.empty() ? where : absl::StrCat(op.empty() ? "" : op + " ", "'", node, "' in ", where);
  return absl::StrCat(head, ": ", reason, " [", fact, "; source: ", source, "] -> ", fix);
}

std::string StepText(Step step, const Profile& p, const Model& model, const std::string& input_shapes) {
  switch (step) {
    case Step::kInlineFunctions: return "inline-functions";
    case Step::kRewriteIndexPut: return "rewrite-index-put";
    case Step::kFixLayerNorm:
      return p.layernorm == Form::kDecomposed ? "fix-layernorm(to=decomposed)" : "fix-layernorm";
    case Step::kCanonicalLayerNorm:
      // fix-layernorm(to=decomposed) keeps a hand decomposition that is already standard;
      // fusing first rewrites it over the last axis (the form the backends ran).
      return p.layernorm == Form::kDecomposed ? "fix-layernorm(to=op),decompose-layernorm" : "fix-layernorm";
    case Step::kConvertOpset: {
      int64_t opset = model.OpsetVersion("");
      int64_t goal = std::clamp<int64_t>(opset, p.opset_min, p.opset_max);
      // A node whose form at this opset the target refuses (kConvertOpsetBeforeForm: ReduceSum-13's
      // axes input) needs an opset below that form: one conversion there, not two (17 -> 13 -> 12).
      if (int64_t before = OpsetBeforeForms(p, model); before >= p.opset_min && before < goal) goal = before;
      int64_t ml = model.OpsetVersion("ai.onnx.ml");
      if (ml >= 0 && p.ml_opset_max >= 0 && ml > p.ml_opset_max)
        return absl::StrCat("convert-opset(opset=", goal, ",ml-opset=", p.ml_opset_max, ")");
      return absl::StrCat("convert-opset=", goal);
    }
    case Step::kConvertOpsetBeforeForm: {
      int64_t goal = std::clamp<int64_t>(model.OpsetVersion(""), p.opset_min, p.opset_max);
      int64_t before = OpsetBeforeForms(p, model);
      if (before >= p.opset_min) goal = std::min(goal, before);
      return absl::StrCat("convert-opset=", goal);
    }
    case Step::kDecomposeLayerNorm: return "decompose-layernorm";
    case Step::kRewriteGelu: return "rewrite-gelu";
    case Step::kRewriteErf: return "rewrite-erf";
    case Step::kRewriteReciprocal: return "rewrite-reciprocal";
    case Step::kRewriteGlobalPool: return "rewrite-global-pool";
    case Step::kSplitGroupedConvTranspose: return "split-grouped-convtranspose";
    case Step::kLoopCarryOuterValues: return "loop-carry-outer-values";
    case Step::kDropReshapeAllowzero: return "drop-reshape-allowzero";
    case Step::kExtractConstants: return "extract-constants";
    // The lowerings write CastLike where a type was unknown, with a Cast to the stash type
    // before it: once typed, both are often identities (onnx2tf mistranslated them, measured).
    case Step::kRewriteCastLike: return "rewrite-castlike,strip-identity-cast";
    case Step::kLowerScatterND: return "lower-scatternd-reduction";
    case Step::kRewriteConstantScatterND: return "rewrite-constant-scatternd";
    case Step::kSetInputShape:
      return input_shapes.empty() ? "set-input-shape" : absl::StrCat("set-input-shape(shapes=", input_shapes, ")");
    // Annotations re-inferred before (set-input-shape or convert-opset made them stale) and
    // after (simplify's folds did): the result carries the types a reload would infer.
    case Step::kSimplify: return "infer-shapes(reset=true),simplify,infer-shapes(reset=true)";
    case Step::kReshapeToUnsqueeze: {
      // The least rank the profile's fact names ("Reshape when inserts-unit-dims:4").
      int64_t min_rank = 0;
      for (const MissingOp& m : p.missing)
        if (std::find(m.ops.begin(), m.ops.end(), "Reshape") != m.ops.end() &&
            absl::StartsWith(m.when, "inserts-unit-dims:") && absl::SimpleAtoi(m.when.substr(18), &min_rank))
          break;
      return min_rank > 0 ? absl::StrCat("reshape-to-unsqueeze(min-rank=", min_rank, ")") : "reshape-to-unsqueeze";
    }
    case Step::kTransposeToReshape: return "transpose-to-reshape";
    case Step::kAnnotateShapes: return "infer-shapes(reset=true)";
    case Step::kInlineWeights: return "inline-weights";
    case Step::kPruneImports: return "prune-opset-imports";
    case Step::kLowerIr:
      return p.ir_max >= 0 ? absl::StrCat("lower-ir-version(max=", p.ir_max, ")") : "lower-ir-version";
    case Step::kNone: return "";
  }
  return "";
}

CheckReport CheckTarget(const Model& model, const Profile& profile, const CheckOptions& options) {
  return Checker(model, profile, options).Run();
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
                          {"fixable", f.step != Step::kNone}});
    }
    j[key] = findings;
  }
  return DumpJson(j);
}

}  // namespace onnxsurgeon::target

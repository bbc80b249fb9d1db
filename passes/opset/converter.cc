// The opset converter's driver and its schema-derived generic step (see converter.h).
#include "passes/opset/converter.h"
#include "passes/opset/ir_version.h"

#include "core/interop/onnx_interop.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/io/importer.h"
#include "onnx/defs/data_type_utils.h"
#include "onnx/shape_inference/implementation.h"
#include "passes/opset/step.h"

namespace onnxsurgeon::opset {

// ---------------------------------------------------------------- schema versions

namespace {

using VersionIndex = std::map<std::pair<std::string, std::string>, std::vector<int>>;

// (domain, op) -> every since_version, ascending.
const VersionIndex& Versions() {
  static const VersionIndex* index = [] {
    auto* idx = new VersionIndex;
    for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history())
      (*idx)[{s.domain(), s.Name()}].push_back(s.since_version());
    for (auto& [k, v] : *idx) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    return idx;
  }();
  return *index;
}

const onnx::OpSchema* SchemaAt(const std::string& domain, const std::string& op, int64_t opset) {
  return onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), domain);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string DomainName(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

}  // namespace

int64_t LatestOpset(const std::string& domain) {
  const auto& m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().LastReleaseVersionMap();
  auto it = m.find(domain.empty() ? std::string(onnx::ONNX_DOMAIN) : domain);
  return it == m.end() ? -1 : it->second;
}

std::string Blocker::Describe() const {
  return absl::StrCat("node '", node, "' (", op, ") in ", where, ": opset ", from, " -> ", to, ": ", why);
}

std::string DescribeNode(const Node& node) {
  return node.name().empty() ? absl::StrCat("<unnamed ", node.op_type(), ">") : node.name();
}

// ---------------------------------------------------------------- types

void TypeOracle::Build(const Model& model) {
  // Shape inference needs no weights: large initializers go in as metadata only. Where
  // it fails, types stay unknown and the checks that need them refuse.
  InferShapesOptions options;
  auto inferred = InferredCopy(model, options);
  onnx::ModelProto proto = inferred.ok() ? *std::move(inferred) : onnx::ModelProto();
  std::function<void(const onnx::GraphProto&)> collect = [&](const onnx::GraphProto& g) {
    for (const auto& vi : g.input()) if (vi.has_type()) types_[vi.name()] = vi.type();
    for (const auto& vi : g.output()) if (vi.has_type()) types_[vi.name()] = vi.type();
    for (const auto& vi : g.value_info()) if (vi.has_type()) types_[vi.name()] = vi.type();
    for (const auto& t : g.initializer()) {
      onnx::TypeProto tp;
      auto* tt = tp.mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      auto* shape = tt->mutable_shape();
      for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
      types_.try_emplace(t.name(), std::move(tp));
    }
    for (const auto& n : g.node())
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect(a.g());
        for (const auto& sg : a.graphs()) collect(sg);
      }
  };
  collect(proto.graph());
  for (const auto& f : proto.functions())
    for (const auto& vi : f.value_info()) if (vi.has_type()) types_[vi.name()] = vi.type();
}

const onnx::TypeProto* TypeOracle::Find(const Value* v) const {
  if (!v) return nullptr;
  if (v->has_type()) return v->type();
  auto it = types_.find(v->name());
  return it == types_.end() ? nullptr : &it->second;
}

int32_t TypeOracle::ElemType(const Value* v) const {
  if (v && v->initializer()) return v->initializer()->meta().data_type();
  const onnx::TypeProto* t = Find(v);
  return t && t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
}

std::optional<std::vector<int64_t>> TypeOracle::Dims(const Value* v) const {
  if (v && v->initializer()) {
    const auto& d = v->initializer()->meta().dims();
    return std::vector<int64_t>(d.begin(), d.end());
  }
  const onnx::TypeProto* t = Find(v);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : t->tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

void TypeOracle::Alias(const Value* old, const Value* replacement) {
  if (!old || !replacement || Find(replacement)) return;
  if (const onnx::TypeProto* t = Find(old)) types_[replacement->name()] = *t;
}

void TypeOracle::InferNode(const Node& node, const std::string& domain, int64_t opset) {
  const onnx::OpSchema* s = SchemaAt(domain, node.op_type(), opset);
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
      onnx::TypeProto tp;
      tp.mutable_tensor_type()->set_elem_type(ElemType(v));
      auto* shape = tp.mutable_tensor_type()->mutable_shape();
      for (int64_t d : v->initializer()->meta().dims()) shape->add_dim()->set_dim_value(d);
      input_types.push_back(tp);
      types[v->name()] = &input_types.back();
    }
    if (v->initializer() && v->initializer()->raw_bytes().size() <= 4096) {
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
    return;
  }
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    Value* v = node.output(i);
    const onnx::TypeProto* t = ctx.getOutputType(i);
    if (v && t && t->value_case() != onnx::TypeProto::VALUE_NOT_SET && !Find(v)) types_[v->name()] = *t;
  }
}

int64_t TypeOracle::Rank(const Value* v) const {
  auto d = Dims(v);
  return d ? static_cast<int64_t>(d->size()) : -1;
}

// ---------------------------------------------------------------- constants

namespace {
template <typename T>
std::optional<std::vector<T>> ConstantElements(const Value* v, int depth) {
  if (!v || depth > 8) return std::nullopt;
  if (auto c = GetConstant(v)) {
    if constexpr (std::is_same_v<T, int64_t>) return c->AsInt64s();
    else return c->AsDoubles();
  }
  Node* p = v->producer();
  if (!p || !CanonicalDomain(p->domain()).empty()) return std::nullopt;
  const std::string& op = p->op_type();
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" || op == "Identity")
    return ConstantElements<T>(p->input(0), depth + 1);
  if (op == "Cast") {
    int64_t to = p->GetInt("to", 0);
    bool integral = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32;
    if (!integral && !(std::is_same_v<T, double> && (to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE)))
      return std::nullopt;
    auto inner = ConstantElements<T>(p->input(0), depth + 1);
    if (inner && integral)
      for (auto& x : *inner) x = static_cast<T>(static_cast<int64_t>(x));
    return inner;
  }
  if (op == "Concat") {
    std::vector<T> all;
    for (Value* in : p->inputs()) {
      auto part = ConstantElements<T>(in, depth + 1);
      if (!part) return std::nullopt;
      all.insert(all.end(), part->begin(), part->end());
    }
    return all;
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::vector<int64_t>> ConstantInts(const Value* v) { return ConstantElements<int64_t>(v, 0); }
std::optional<std::vector<double>> ConstantDoubles(const Value* v) { return ConstantElements<double>(v, 0); }

// ---------------------------------------------------------------- step helpers

int64_t StepContext::to_opset() const {
  // The `to` schema is in force from its since_version up to the next version's - 1.
  const auto& versions = Versions().at({domain, node->op_type()});
  auto it = std::upper_bound(versions.begin(), versions.end(), to->since_version());
  return it == versions.end() ? to->since_version() : *it - 1;
}

Status StepContext::Refuse(const std::string& why) const {
  return absl::FailedPreconditionError(absl::StrCat(node->op_type(), "-", from->since_version(), " -> ",
                                                    node->op_type(), "-", to->since_version(), ": ", why));
}

onnx::AttributeProto TensorAttr(const std::string& name, const onnx::TensorProto& t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = t;
  return a;
}

Value* MakeConstant(Rewriter& rewriter, Node* before, onnx::TensorProto tensor, const std::string& hint) {
  Graph* g = before->graph();
  if (g->root()->kind() == GraphKind::kFunctionBody) {
    tensor.clear_name();
    Node* c = rewriter.Create("Constant", {}, {TensorAttr("value", tensor)});
    return c->output(0);
  }
  StatusOr<Value*> c = rewriter.Constant(Tensor::FromProto(std::move(tensor)), hint);
  return c.ok() ? *c : nullptr;  // null like its neighbours: the callers' tensors always have a type
}

namespace {

onnx::TensorProto EncodeDoubles(const std::vector<double>& v, int32_t dt, bool scalar) {
  onnx::TensorProto t;
  t.set_data_type(dt);
  if (!scalar) t.add_dims(static_cast<int64_t>(v.size()));
  std::string raw;
  auto put = [&raw](const auto& x) { raw.append(reinterpret_cast<const char*>(&x), sizeof(x)); };
  for (double d : v) {
    switch (dt) {
      case onnx::TensorProto::FLOAT: put(static_cast<float>(d)); break;
      case onnx::TensorProto::DOUBLE: put(d); break;
      case onnx::TensorProto::INT64: put(static_cast<int64_t>(d)); break;
      case onnx::TensorProto::INT32: put(static_cast<int32_t>(d)); break;
      case onnx::TensorProto::INT16: put(static_cast<int16_t>(d)); break;
      case onnx::TensorProto::INT8: put(static_cast<int8_t>(d)); break;
      case onnx::TensorProto::UINT64: put(static_cast<uint64_t>(d)); break;
      case onnx::TensorProto::UINT32: put(static_cast<uint32_t>(d)); break;
      case onnx::TensorProto::UINT16: put(static_cast<uint16_t>(d)); break;
      case onnx::TensorProto::UINT8: put(static_cast<uint8_t>(d)); break;
      case onnx::TensorProto::BOOL: put(static_cast<uint8_t>(d != 0)); break;
      case onnx::TensorProto::FLOAT16: put(FloatToHalf(static_cast<float>(d))); break;
      case onnx::TensorProto::BFLOAT16: put(FloatToBFloat16(static_cast<float>(d))); break;
      default: return onnx::TensorProto();  // data_type 0: caller refuses
    }
  }
  t.set_raw_data(raw);
  return t;
}

}  // namespace

Value* StepContext::Int64s(const std::vector<int64_t>& v, bool scalar) {
  std::vector<double> d(v.begin(), v.end());
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t.add_dims(static_cast<int64_t>(v.size()));
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t)));
  Value* c = MakeConstant(*rewriter, node, std::move(t), "ints");
  return c;
}

Value* StepContext::Scalar(double v, int32_t data_type) {
  onnx::TensorProto t = EncodeDoubles({v}, data_type, /*scalar=*/true);
  if (t.data_type() == 0) return nullptr;
  return MakeConstant(*rewriter, node, std::move(t), "scalar");
}

Value* StepContext::Tensor1D(const std::vector<double>& v, int32_t data_type) {
  onnx::TensorProto t = EncodeDoubles(v, data_type, /*scalar=*/false);
  if (t.data_type() == 0) return nullptr;
  return MakeConstant(*rewriter, node, std::move(t), "values");
}

Node* StepContext::Emit(const std::string& op, std::vector<Value*> inputs, std::vector<onnx::AttributeProto> attributes,
                        int num_outputs) {
  Node* n = rewriter->Create(op, std::move(inputs), std::move(attributes), num_outputs, domain);
  emitted->push_back({n, to_opset()});
  return n;
}

// ---------------------------------------------------------------- the generic step

namespace {

// Attribute <-> input pairs whose names differ between versions.
std::string CanonicalParam(const std::string& op, const std::string& name) {
  std::string n = Lower(name);
  if (op == "Pad" && n == "value") return "constant_value";
  return n;
}

bool SameAttributeValue(const onnx::AttributeProto& a, const onnx::AttributeProto& b) {
  onnx::AttributeProto x = a, y = b;
  x.clear_name();
  y.clear_name();
  x.clear_doc_string();
  y.clear_doc_string();
  return x.SerializeAsString() == y.SerializeAsString();
}

// The node's inputs, grouped by formal parameter (the variadic last one takes the rest).
std::vector<std::vector<Value*>> GroupInputs(const Node& node, const onnx::OpSchema& schema) {
  const auto& formals = schema.inputs();
  std::vector<std::vector<Value*>> groups(formals.size());
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    size_t k = std::min(i, formals.empty() ? 0 : formals.size() - 1);
    if (formals.empty()) break;
    if (i >= formals.size() && formals.back().GetOption() != onnx::OpSchema::Variadic) {
      groups.back().push_back(node.input(i));  // too many inputs: kept, refused later
      continue;
    }
    groups[k].push_back(node.input(i));
  }
  return groups;
}

bool AnyPresent(const std::vector<Value*>& v) {
  return std::any_of(v.begin(), v.end(), [](Value* x) { return x != nullptr; });
}

std::string AttrText(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return absl::StrCat(a.i());
    case onnx::AttributeProto::FLOAT: return absl::StrCat(a.f());
    case onnx::AttributeProto::STRING: return absl::StrCat("\"", a.s(), "\"");
    case onnx::AttributeProto::INTS: return absl::StrCat("[", absl::StrJoin(a.ints(), ","), "]");
    default: return "(set)";
  }
}

// Attribute value -> constant input for the `to` schema's formal parameter.
StatusOr<Value*> AttributeToInput(StepContext& ctx, const onnx::AttributeProto& a, const onnx::OpSchema::FormalParameter& p) {
  const auto& allowed = p.GetTypes();
  auto allows = [&](int32_t dt) {
    onnx::TypeProto tp;
    tp.mutable_tensor_type()->set_elem_type(dt);
    return allowed.count(onnx::Utils::DataTypeUtils::ToType(tp)) > 0;
  };
  switch (a.type()) {
    case onnx::AttributeProto::INTS:
    case onnx::AttributeProto::INT: {
      if (!allows(onnx::TensorProto::INT64))
        return ctx.Refuse(absl::StrCat("attribute '", a.name(), "' becomes input '", p.GetName(), "', which takes no int64"));
      if (a.type() == onnx::AttributeProto::INTS) return ctx.Int64s({a.ints().begin(), a.ints().end()});
      // TopK's K is a 1-D tensor of one element; other int inputs (DFT's axis) are scalars.
      return ctx.Int64s({a.i()}, /*scalar=*/Lower(p.GetName()) != "k");
    }
    case onnx::AttributeProto::FLOAT: {
      int32_t dt = ctx.types->ElemType(ctx.node->input(0));
      if (dt == 0 || !allows(dt)) dt = onnx::TensorProto::FLOAT;
      if (!allows(dt))
        return ctx.Refuse(absl::StrCat("attribute '", a.name(), "' becomes input '", p.GetName(),
                                       "', whose type is unknown (run shape inference on the model first)"));
      Value* v = ctx.Scalar(a.f(), dt);
      if (!v) return ctx.Refuse(absl::StrCat("cannot encode '", a.name(), "' as a constant of type ", dt));
      return v;
    }
    default:
      return ctx.Refuse(absl::StrCat("attribute '", a.name(), "' of this kind cannot become an input"));
  }
}

// Constant input -> attribute of the `to` schema.
StatusOr<onnx::AttributeProto> InputToAttribute(StepContext& ctx, Value* v, const onnx::OpSchema::Attribute& spec,
                                                const std::string& input_name) {
  auto ints = ConstantInts(v);
  auto doubles = ConstantDoubles(v);
  if (!ints && !doubles) {
    return ctx.Refuse(absl::StrCat("input '", input_name, "' ('", v->name(), "') must be a constant to become attribute '",
                                   spec.name, "', and it is computed at run time"));
  }
  onnx::AttributeProto a;
  a.set_name(spec.name);
  a.set_type(spec.type);
  switch (spec.type) {
    case onnx::AttributeProto::INTS: {
      if (!ints) return ctx.Refuse(absl::StrCat("input '", input_name, "' holds no integers"));
      for (int64_t x : *ints) a.add_ints(x);
      return a;
    }
    case onnx::AttributeProto::INT: {
      if (!ints || ints->size() != 1) return ctx.Refuse(absl::StrCat("input '", input_name, "' is not one integer"));
      a.set_i((*ints)[0]);
      return a;
    }
    case onnx::AttributeProto::FLOAT: {
      if (!doubles || doubles->size() != 1) return ctx.Refuse(absl::StrCat("input '", input_name, "' is not one number"));
      a.set_f(static_cast<float>((*doubles)[0]));
      return a;
    }
    case onnx::AttributeProto::FLOATS: {
      if (!doubles) return ctx.Refuse(absl::StrCat("input '", input_name, "' holds no numbers"));
      for (double x : *doubles) a.add_floats(static_cast<float>(x));
      return a;
    }
    default:
      return ctx.Refuse(absl::StrCat("input '", input_name, "' cannot become an attribute of this kind"));
  }
}

// Opset 11 allowed negative axes almost everywhere; below it they must be made positive.
Status NormalizeNegativeAxes(StepContext& ctx) {
  Node* n = ctx.node;
  auto rank_for = [&]() -> int64_t {
    // Unsqueeze's and OneHot's axes index the output, one rank more (OneHot) or several.
    if (n->op_type() == "Unsqueeze") return ctx.types->Rank(n->output(0));
    if (n->op_type() == "OneHot") {
      int64_t in = ctx.types->Rank(n->input(0));
      return in < 0 ? -1 : in + 1;
    }
    return ctx.types->Rank(n->input(0));
  };
  for (const char* name : {"axis", "axes"}) {
    Attribute* a = n->FindAttribute(name);
    if (!a) continue;
    auto& p = a->mutable_proto();
    bool negative = (p.type() == onnx::AttributeProto::INT && p.i() < 0) ||
                    std::any_of(p.ints().begin(), p.ints().end(), [](int64_t x) { return x < 0; });
    if (!negative) continue;
    int64_t r = rank_for();
    if (r < 0) return ctx.Refuse(absl::StrCat("negative '", name, "' needs the input's rank, which is unknown"));
    if (p.type() == onnx::AttributeProto::INT) p.set_i(p.i() + r);
    for (auto& x : *p.mutable_ints())
      if (x < 0) x += r;
  }
  // Inputs named axes (Slice) that are constants.
  const auto& formals = ctx.from->inputs();
  for (size_t i = 0; i < formals.size() && i < n->num_inputs(); ++i) {
    if (Lower(formals[i].GetName()) != "axes" || !n->input(i)) continue;
    auto ints = ConstantInts(n->input(i));
    if (!ints || std::none_of(ints->begin(), ints->end(), [](int64_t x) { return x < 0; })) continue;
    int64_t r = rank_for();
    if (r < 0) return ctx.Refuse("negative axes need the input's rank, which is unknown");
    for (auto& x : *ints)
      if (x < 0) x += r;
    n->SetInput(i, ctx.Int64s(*ints));
  }
  return absl::OkStatus();
}

// Rebuilds `node` with only its first `keep` outputs (the rest must be unused).
StatusOr<Node*> DropOutputs(StepContext& ctx, size_t keep) {
  Node* n = ctx.node;
  for (size_t i = keep; i < n->num_outputs(); ++i)
    if (n->output(i) && n->output(i)->HasUsers())
      return ctx.Refuse(absl::StrCat("output ", i, " ('", n->output(i)->name(), "') is used, and ", n->op_type(), "-",
                                     ctx.to->since_version(), " has only ", keep, " outputs"));
  bool trailing_only = true;
  for (size_t i = keep; i < n->num_outputs(); ++i) trailing_only &= n->output(i) == nullptr;
  if (trailing_only && n->num_outputs() == keep) return n;
  if (!n->subgraphs().empty()) return ctx.Refuse("cannot drop outputs of a node with subgraphs");
  std::vector<Value*> inputs(n->inputs().begin(), n->inputs().end());
  Node* fresh = n->graph()->CreateNode(n->op_type(), inputs, 0, n->domain(), n, n->name());
  for (size_t i = 0; i < keep && i < n->num_outputs(); ++i) {
    if (n->output(i)) fresh->AddOutput();
    else fresh->AddOmittedOutput();
  }
  for (const Attribute& a : n->attributes()) fresh->SetAttribute(a.proto());
  std::string name = n->name();
  *fresh->mutable_proto().mutable_metadata_props() = n->proto().metadata_props();
  for (size_t i = 0; i < keep && i < n->num_outputs(); ++i)
    if (n->output(i)) OS_RETURN_IF_ERROR(n->output(i)->ReplaceAllUsesWith(fresh->output(i), true));
  OS_RETURN_IF_ERROR(n->graph()->EraseNode(n, /*force=*/true));
  fresh->set_name(name);
  return fresh;
}

Status GenericStep(StepContext& ctx) {
  Node* n = ctx.node;
  const onnx::OpSchema& from = *ctx.from;
  const onnx::OpSchema& to = *ctx.to;
  const std::string& op = n->op_type();
  if (ctx.down() && from.since_version() >= 11 && to.since_version() < 11) OS_RETURN_IF_ERROR(NormalizeNegativeAxes(ctx));

  // ---- inputs, matched by name
  auto groups = GroupInputs(*n, from);
  const auto& fin = from.inputs();
  const auto& tin = to.inputs();
  std::map<std::string, size_t> from_index, to_index;
  for (size_t k = 0; k < fin.size(); ++k) from_index[CanonicalParam(op, fin[k].GetName())] = k;
  for (size_t k = 0; k < tin.size(); ++k) to_index[CanonicalParam(op, tin[k].GetName())] = k;
  std::map<std::string, std::string> from_attr, to_attr;  // canonical -> real name
  for (const auto& [name, spec] : from.attributes()) from_attr[CanonicalParam(op, name)] = name;
  for (const auto& [name, spec] : to.attributes()) to_attr[CanonicalParam(op, name)] = name;

  // Inputs renamed between versions (BatchNormalization's mean -> input_mean): a name
  // neither side knows is matched by position.
  auto known_to_from = [&](const std::string& key) { return from_index.count(key) || from_attr.count(key); };
  auto known_to_to = [&](const std::string& key) { return to_index.count(key) || to_attr.count(key); };
  for (size_t j = 0; j < tin.size() && j < fin.size(); ++j) {
    std::string tkey = CanonicalParam(op, tin[j].GetName()), fkey = CanonicalParam(op, fin[j].GetName());
    if (tkey != fkey && !known_to_from(tkey) && !known_to_to(fkey)) {
      from_index.erase(fkey);
      from_index[tkey] = j;
    }
  }
  std::vector<Value*> inputs;
  std::vector<std::string> attrs_to_remove;
  for (size_t j = 0; j < tin.size(); ++j) {
    std::string key = CanonicalParam(op, tin[j].GetName());
    std::vector<Value*> values;
    if (auto it = from_index.find(key); it != from_index.end()) {
      values = groups[it->second];
      if (values.size() > 1 && tin[j].GetOption() != onnx::OpSchema::Variadic)
        return ctx.Refuse(absl::StrCat("input '", tin[j].GetName(), "' takes one value at the target, the node gives ", values.size()));
    } else if (auto at = from_attr.find(key); at != from_attr.end()) {
      const onnx::OpSchema::Attribute& spec = from.attributes().at(at->second);
      const Attribute* given = n->FindAttribute(at->second);
      if (given || spec.default_value.has_type() || spec.default_value.type() != onnx::AttributeProto::UNDEFINED) {
        onnx::AttributeProto value = given ? given->proto() : spec.default_value;
        bool has_value = given != nullptr || spec.default_value.type() != onnx::AttributeProto::UNDEFINED;
        if (has_value) {
          OS_ASSIGN_OR_RETURN(Value * c, AttributeToInput(ctx, value, tin[j]));
          values.push_back(c);
        }
      }
      if (given) attrs_to_remove.push_back(at->second);
    }
    if (values.empty()) values.push_back(nullptr);
    if (!AnyPresent(values) && tin[j].GetOption() == onnx::OpSchema::Single)
      return ctx.Refuse(absl::StrCat("input '", tin[j].GetName(), "' is required at the target and the node has no value for it"));
    for (Value* v : values) inputs.push_back(v);
  }
  // Inputs the target lacks: an attribute there (constant), or absent.
  std::vector<onnx::AttributeProto> attrs_to_set;
  std::set<size_t> consumed;
  for (size_t j = 0; j < tin.size(); ++j)
    if (auto it = from_index.find(CanonicalParam(op, tin[j].GetName())); it != from_index.end()) consumed.insert(it->second);
  for (size_t k = 0; k < fin.size(); ++k) {
    std::string key = CanonicalParam(op, fin[k].GetName());
    if (consumed.count(k) || !AnyPresent(groups[k])) continue;
    auto at = to_attr.find(key);
    if (at == to_attr.end())
      return ctx.Refuse(absl::StrCat("input '", fin[k].GetName(), "' is given and ", op, "-", to.since_version(),
                                     " has no such input or attribute"));
    OS_ASSIGN_OR_RETURN(onnx::AttributeProto a, InputToAttribute(ctx, groups[k][0], to.attributes().at(at->second), fin[k].GetName()));
    if (a.type() == onnx::AttributeProto::INTS && a.ints_size() == 0) continue;  // empty: the attribute's absence
    attrs_to_set.push_back(std::move(a));
  }

  // ---- attributes
  for (const Attribute& a : n->attributes()) {
    if (std::find(attrs_to_remove.begin(), attrs_to_remove.end(), a.name()) != attrs_to_remove.end()) continue;
    if (to.attributes().count(a.name())) {
      const auto& spec = to.attributes().at(a.name());
      if (!a.is_ref() && spec.type != a.type())
        return ctx.Refuse(absl::StrCat("attribute '", a.name(), "' changes kind between the versions"));
      continue;
    }
    auto fs = from.attributes().find(a.name());
    bool is_default = fs != from.attributes().end() && fs->second.default_value.type() != onnx::AttributeProto::UNDEFINED &&
                      SameAttributeValue(fs->second.default_value, a.proto());
    if (a.is_ref())
      return ctx.Refuse(absl::StrCat("attribute '", a.name(), "' (a function attribute reference) does not exist at the target"));
    if ((a.name() == "dilations" || a.name() == "strides") && a.type() == onnx::AttributeProto::INTS &&
        std::all_of(a.proto().ints().begin(), a.proto().ints().end(), [](int64_t x) { return x == 1; }))
      is_default = true;  // all ones: what the older version does
    if (!is_default)
      return ctx.Refuse(absl::StrCat("attribute ", a.name(), "=", AttrText(a.proto()), " has no equivalent in ", op, "-",
                                     to.since_version()));
    attrs_to_remove.push_back(a.name());
  }
  // Defaults that changed, and attributes that became required: written explicitly.
  for (const auto& [name, spec] : to.attributes()) {
    if (n->FindAttribute(name)) continue;
    if (std::any_of(attrs_to_set.begin(), attrs_to_set.end(), [&](const auto& a) { return a.name() == name; })) continue;
    auto fs = from.attributes().find(name);
    bool from_has_default = fs != from.attributes().end() && fs->second.default_value.type() != onnx::AttributeProto::UNDEFINED;
    bool to_has_default = spec.default_value.type() != onnx::AttributeProto::UNDEFINED;
    if (from_has_default && (!to_has_default || !SameAttributeValue(fs->second.default_value, spec.default_value))) {
      onnx::AttributeProto a = fs->second.default_value;
      a.set_name(name);
      attrs_to_set.push_back(a);
    } else if (spec.required && !std::any_of(attrs_to_set.begin(), attrs_to_set.end(), [&](const auto& a) { return a.name() == name; })) {
      return ctx.Refuse(absl::StrCat("attribute '", name, "' is required at the target and the node has none"));
    }
  }

  // ---- apply
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < n->num_inputs()) {
      if (n->input(i) != inputs[i]) n->SetInput(i, inputs[i]);
    } else {
      n->AddInput(inputs[i]);
    }
  }
  while (n->num_inputs() > inputs.size()) n->RemoveInput(n->num_inputs() - 1);
  for (const auto& name : attrs_to_remove) n->RemoveAttribute(name);
  for (auto& a : attrs_to_set) n->SetAttribute(std::move(a));

  // ---- outputs
  if (to.max_output() >= 0 && n->num_outputs() > static_cast<size_t>(to.max_output())) {
    OS_ASSIGN_OR_RETURN(Node * fresh, DropOutputs(ctx, static_cast<size_t>(to.max_output())));
    ctx.replacement = fresh;
  }
  return absl::OkStatus();
}

// The node's actual types must be allowed by the target schema; arity and attributes
// must fit it.
Status CheckAtTarget(const Node& n, const onnx::OpSchema& s, const TypeOracle& types, int64_t opset) {
  auto refuse = [&](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat(n.op_type(), "-", s.since_version(), " (opset ", opset, "): ", why));
  };
  auto check = [&](const Value* v, const std::vector<onnx::OpSchema::FormalParameter>& formals, size_t i,
                   const char* what) -> Status {
    if (!v || formals.empty()) return absl::OkStatus();
    size_t k = std::min(i, formals.size() - 1);
    const onnx::TypeProto* t = types.Find(v);
    if (!t || t->value_case() == onnx::TypeProto::VALUE_NOT_SET) return absl::OkStatus();
    if (t->has_tensor_type() && t->tensor_type().elem_type() == 0) return absl::OkStatus();
    onnx::TypeProto bare = *t;
    if (bare.has_tensor_type()) bare.mutable_tensor_type()->clear_shape();
    onnx::DataType dt;
    try {
      dt = onnx::Utils::DataTypeUtils::ToType(bare);
    } catch (const std::exception&) {
      return absl::OkStatus();
    }
    if (!formals[k].GetTypes().count(dt))
      return refuse(absl::StrCat(what, " ", i, " ('", v->name(), "') is ", *dt, ", which opset ", opset, "'s ",
                                 n.op_type(), " does not accept"));
    return absl::OkStatus();
  };
  for (size_t i = 0; i < n.num_inputs(); ++i) OS_RETURN_IF_ERROR(check(n.input(i), s.inputs(), i, "input"));
  for (size_t i = 0; i < n.num_outputs(); ++i) OS_RETURN_IF_ERROR(check(n.output(i), s.outputs(), i, "output"));
  size_t given_inputs = n.num_inputs();
  if (static_cast<int>(given_inputs) > s.max_input() || static_cast<int>(given_inputs) < s.min_input())
    return refuse(absl::StrCat(given_inputs, " inputs, the schema takes ", s.min_input(), "..", s.max_input()));
  if (static_cast<int>(n.num_outputs()) > s.max_output())
    return refuse(absl::StrCat(n.num_outputs(), " outputs, the schema gives at most ", s.max_output()));
  for (const Attribute& a : n.attributes())
    if (!s.attributes().count(a.name()))
      return refuse(absl::StrCat("attribute '", a.name(), "' is not defined there"));
  for (const auto& [name, spec] : s.attributes())
    if (spec.required && !n.FindAttribute(name)) return refuse(absl::StrCat("required attribute '", name, "' is missing"));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- the driver

struct Scope {
  Graph* root;               // main graph or function body
  Function* function = nullptr;
  std::string where;
};

class Converter {
 public:
  Converter(Model& model, TypeOracle& types) : model_(model), types_(types) {}

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
    if (g && g->parent_node()) return absl::StrCat("subgraph of node '", DescribeNode(*g->parent_node()), "' in ", scope.where);
    return scope.where;
  }

  Status ConvertNode(Pending p, const std::string& domain, int64_t target, std::vector<Pending>& emitted) {
    Node* node = p.node;
    failed_name_ = DescribeNode(*node);
    failed_op_ = node->op_type();
    failed_graph_ = node->graph();
    const std::string op = node->op_type();
    auto vit = Versions().find({domain, op});
    if (vit == Versions().end())
      return absl::FailedPreconditionError(absl::StrCat(op, " is not an operator of ", DomainName(domain)));
    const onnx::OpSchema* from = SchemaAt(domain, op, p.opset);
    if (!from) {
      return absl::FailedPreconditionError(absl::StrCat(op, " does not exist at opset ", p.opset, " (it was introduced at ",
                                                        vit->second.front(), ")"));
    }
    if (p.opset != -1 && std::any_of(node->outputs().begin(), node->outputs().end(),
                                     [&](Value* v) { return v && !types_.Find(v); }))
      types_.InferNode(*node, domain, p.opset);  // a node made during conversion
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
                            : to->Deprecated() ? absl::StrCat(op, " is deprecated at opset ", target)
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
                                 absl::StrCat("no usable ", op, " version between opsets ", cur->since_version(), " and ",
                                              to->since_version()));
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
        if (s.ok()) report_.counts[absl::StrCat("adapter:", op, "-", cur->since_version(), "-to-", next->since_version())]++;
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
  TypeOracle& types_;
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
  for (Graph* g : model.AllGraphs()) {
    std::vector<Value*> inits = g->initializers();
    for (Value* v : inits) {
      if (v->HasUsers() || v->IsGraphInput()) continue;
      if (used_before.count(v) || !all_before.count(v)) removed += g->RemoveInitializer(v).ok();
    }
    for (Node* n = g->first_node(); n;) {
      Node* next = n->next();
      if (n->Is("Constant") && n->output(0) && !n->output(0)->HasUsers() &&
          (used_before.count(n->output(0)) || !all_before.count(n->output(0))))
        removed += g->EraseNode(n).ok();
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
  TypeOracle types;
  types.Build(model);
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
  if (int removed = RemoveDroppedConstants(model, used_before, all_before)) report.counts["constants-removed"] += removed;
  // The lowest IR version the new imports and the model's features allow (ir_version.h):
  // a downgrade for an older runtime must lower it too, or the runtime still refuses the file.
  if (report.source != target) LowerIrVersion(model).IgnoreError();  // no limit asked: cannot fail
  return report;
}

StatusOr<std::unique_ptr<Model>> CopyForTrial(const Model& model) {
  // Weights are not needed to plan: large initializers travel as metadata only.
  ExportOptions options;
  options.main_initializer_writer = [](const Value& v, const Tensor& t, onnx::TensorProto* out) {
    if (t.raw_bytes().size() <= 4096 || !t.has_raw_bytes()) {
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

Status BlockersToError(const ConvertReport& r) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < r.blockers.size() && i < 20; ++i) lines.push_back(r.blockers[i].Describe());
  if (r.blockers.size() > 20) lines.push_back(absl::StrCat("... and ", r.blockers.size() - 20, " more"));
  return absl::FailedPreconditionError(absl::StrCat("cannot convert to opset ", r.target, " (", r.blockers.size(),
                                                    " node(s); allow-partial converts the rest):\n  ",
                                                    absl::StrJoin(lines, "\n  ")));
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
    return absl::InvalidArgumentError(absl::StrCat("target opset ", options.target, " is outside 1..", latest,
                                                   " (what the linked onnx knows)"));
  if (options.target < 7) return absl::InvalidArgumentError("opsets below 7 are not supported (onnxruntime's floor)");
  if (options.direction == Direction::kDownOnly && options.target > source)
    return absl::InvalidArgumentError(absl::StrCat("downgrade-opset=", options.target, " but the model is at opset ", source,
                                                   " (use upgrade-opset or convert-opset)"));
  if (options.direction == Direction::kUpOnly && options.target < source)
    return absl::InvalidArgumentError(absl::StrCat("upgrade-opset=", options.target, " but the model is at opset ", source,
                                                   " (use downgrade-opset or convert-opset)"));
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

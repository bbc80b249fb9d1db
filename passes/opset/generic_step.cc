#include "passes/opset/generic_step.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "core/interop/onnx_interop.h"
#include "onnx/defs/data_type_utils.h"

namespace onnxsurgeon::opset {
namespace {

// Attribute <-> input pairs whose names differ between versions.
std::string CanonicalParam(const std::string& op, const std::string& name) {
  std::string n = absl::AsciiStrToLower(name);
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
StatusOr<Value*> AttributeToInput(StepContext& ctx, const onnx::AttributeProto& a,
                                  const onnx::OpSchema::FormalParameter& p) {
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
        return ctx.Refuse(
            absl::StrCat("attribute '", a.name(), "' becomes input '", p.GetName(), "', which takes no int64"));
      if (a.type() == onnx::AttributeProto::INTS) return ctx.Int64s({a.ints().begin(), a.ints().end()});
      // TopK's K is a 1-D tensor of one element; other int inputs (DFT's axis) are scalars.
      return ctx.Int64s({a.i()}, /*scalar=*/!absl::EqualsIgnoreCase(p.GetName(), "k"));
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
    case onnx::AttributeProto::FLOATS: {
      // Upsample-7's scales -> Upsample-9's scales input (float only): a 1-D tensor.
      int32_t dt = ctx.types->ElemType(ctx.node->input(0));
      if (dt == 0 || !allows(dt)) dt = onnx::TensorProto::FLOAT;
      if (!allows(dt))
        return ctx.Refuse(absl::StrCat("attribute '", a.name(), "' becomes input '", p.GetName(),
                                       "', whose type is unknown (run shape inference on the model first)"));
      Value* v = ctx.Tensor1D({a.floats().begin(), a.floats().end()}, dt);
      if (!v) return ctx.Refuse(absl::StrCat("cannot encode '", a.name(), "' as a constant of type ", dt));
      return v;
    }
    default: return ctx.Refuse(absl::StrCat("attribute '", a.name(), "' of this kind cannot become an input"));
  }
}

// Constant input -> attribute of the `to` schema.
StatusOr<onnx::AttributeProto> InputToAttribute(StepContext& ctx, Value* v, const onnx::OpSchema::Attribute& spec,
                                                const std::string& input_name) {
  auto ints = ConstantInts(v);
  auto doubles = ConstantDoubles(v);
  if (!ints && !doubles) {
    return ctx.Refuse(absl::StrCat("input '", input_name, "' ('", v->name(),
                                   "') must be a constant to become attribute '", spec.name,
                                   "', and it is computed at run time"));
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
      if (!doubles || doubles->size() != 1)
        return ctx.Refuse(absl::StrCat("input '", input_name, "' is not one number"));
      a.set_f(static_cast<float>((*doubles)[0]));
      return a;
    }
    case onnx::AttributeProto::FLOATS: {
      if (!doubles) return ctx.Refuse(absl::StrCat("input '", input_name, "' holds no numbers"));
      for (double x : *doubles) a.add_floats(static_cast<float>(x));
      return a;
    }
    default: return ctx.Refuse(absl::StrCat("input '", input_name, "' cannot become an attribute of this kind"));
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
    const Attribute* a = n->FindAttribute(name);
    if (!a) continue;
    onnx::AttributeProto p = a->proto();
    bool negative = (p.type() == onnx::AttributeProto::INT && p.i() < 0) ||
                    std::any_of(p.ints().begin(), p.ints().end(), [](int64_t x) { return x < 0; });
    if (!negative) continue;
    int64_t r = rank_for();
    if (r < 0) return ctx.Refuse(absl::StrCat("negative '", name, "' needs the input's rank, which is unknown"));
    if (p.type() == onnx::AttributeProto::INT) p.set_i(p.i() + r);
    for (auto& x : *p.mutable_ints())
      if (x < 0) x += r;
    ctx.rewriter->SetAttribute(n, std::move(p));
  }
  // Inputs named axes (Slice) that are constants.
  const auto& formals = ctx.from->inputs();
  for (size_t i = 0; i < formals.size() && i < n->num_inputs(); ++i) {
    if (!absl::EqualsIgnoreCase(formals[i].GetName(), "axes") || !n->input(i)) continue;
    auto ints = ConstantInts(n->input(i));
    if (!ints || std::none_of(ints->begin(), ints->end(), [](int64_t x) { return x < 0; })) continue;
    int64_t r = rank_for();
    if (r < 0) return ctx.Refuse("negative axes need the input's rank, which is unknown");
    for (auto& x : *ints)
      if (x < 0) x += r;
    ctx.rewriter->SetInput(n, i, ctx.Int64s(*ints));
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
  return ctx.rewriter->DropOutputs(n, keep);
}

}  // namespace

Status GenericStep(StepContext& ctx) {
  Node* n = ctx.node;
  const onnx::OpSchema& from = *ctx.from;
  const onnx::OpSchema& to = *ctx.to;
  const std::string& op = n->op_type();
  if (ctx.down() && from.since_version() >= 11 && to.since_version() < 11)
    OS_RETURN_IF_ERROR(NormalizeNegativeAxes(ctx));

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
        return ctx.Refuse(absl::StrCat("input '", tin[j].GetName(), "' takes one value at the target, the node gives ",
                                       values.size()));
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
      return ctx.Refuse(
          absl::StrCat("input '", tin[j].GetName(), "' is required at the target and the node has no value for it"));
    for (Value* v : values) inputs.push_back(v);
  }
  // Inputs the target lacks: an attribute there (constant), or absent.
  std::vector<onnx::AttributeProto> attrs_to_set;
  std::set<size_t> consumed;
  for (size_t j = 0; j < tin.size(); ++j)
    if (auto it = from_index.find(CanonicalParam(op, tin[j].GetName())); it != from_index.end())
      consumed.insert(it->second);
  for (size_t k = 0; k < fin.size(); ++k) {
    std::string key = CanonicalParam(op, fin[k].GetName());
    if (consumed.count(k) || !AnyPresent(groups[k])) continue;
    auto at = to_attr.find(key);
    if (at == to_attr.end())
      return ctx.Refuse(absl::StrCat("input '", fin[k].GetName(), "' is given and ", op, "-", to.since_version(),
                                     " has no such input or attribute"));
    OS_ASSIGN_OR_RETURN(onnx::AttributeProto a,
                        InputToAttribute(ctx, groups[k][0], to.attributes().at(at->second), fin[k].GetName()));
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
    bool is_default = fs != from.attributes().end() &&
                      fs->second.default_value.type() != onnx::AttributeProto::UNDEFINED &&
                      SameAttributeValue(fs->second.default_value, a.proto());
    if (a.is_ref())
      return ctx.Refuse(
          absl::StrCat("attribute '", a.name(), "' (a function attribute reference) does not exist at the target"));
    if ((a.name() == "dilations" || a.name() == "strides") && a.type() == onnx::AttributeProto::INTS &&
        std::all_of(a.proto().ints().begin(), a.proto().ints().end(), [](int64_t x) { return x == 1; }))
      is_default = true;  // all ones: what the older version does
    if (!is_default)
      return ctx.Refuse(absl::StrCat("attribute ", a.name(), "=", AttrText(a.proto()), " has no equivalent in ", op,
                                     "-", to.since_version()));
    attrs_to_remove.push_back(a.name());
  }
  // Defaults that changed, and attributes that became required: written explicitly.
  for (const auto& [name, spec] : to.attributes()) {
    if (n->FindAttribute(name)) continue;
    if (std::any_of(attrs_to_set.begin(), attrs_to_set.end(), [&](const auto& a) { return a.name() == name; }))
      continue;
    auto fs = from.attributes().find(name);
    bool from_has_default =
        fs != from.attributes().end() && fs->second.default_value.type() != onnx::AttributeProto::UNDEFINED;
    bool to_has_default = spec.default_value.type() != onnx::AttributeProto::UNDEFINED;
    if (from_has_default && (!to_has_default || !SameAttributeValue(fs->second.default_value, spec.default_value))) {
      onnx::AttributeProto a = fs->second.default_value;
      a.set_name(name);
      attrs_to_set.push_back(a);
    } else if (spec.required && !std::any_of(attrs_to_set.begin(), attrs_to_set.end(),
                                             [&](const auto& a) { return a.name() == name; })) {
      return ctx.Refuse(absl::StrCat("attribute '", name, "' is required at the target and the node has none"));
    }
  }

  // ---- apply
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < n->num_inputs()) {
      if (n->input(i) != inputs[i]) ctx.rewriter->SetInput(n, i, inputs[i]);
    } else {
      ctx.rewriter->AddInput(n, inputs[i]);
    }
  }
  while (n->num_inputs() > inputs.size()) ctx.rewriter->RemoveInput(n, n->num_inputs() - 1);
  for (const auto& name : attrs_to_remove) ctx.rewriter->RemoveAttribute(n, name);
  for (auto& a : attrs_to_set) ctx.rewriter->SetAttribute(n, std::move(a));

  // ---- outputs
  if (to.max_output() >= 0 && n->num_outputs() > static_cast<size_t>(to.max_output())) {
    OS_ASSIGN_OR_RETURN(Node * fresh, DropOutputs(ctx, static_cast<size_t>(to.max_output())));
    ctx.replacement = fresh;
  }
  return absl::OkStatus();
}

Status CheckAtTarget(const Node& n, const onnx::OpSchema& s, const TypeFacts& types, int64_t opset) {
  auto refuse = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat(n.op_type(), "-", s.since_version(), " (opset ", opset, "): ", why));
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
    if (!s.attributes().count(a.name())) return refuse(absl::StrCat("attribute '", a.name(), "' is not defined there"));
  for (const auto& [name, spec] : s.attributes())
    if (spec.required && !n.FindAttribute(name))
      return refuse(absl::StrCat("required attribute '", name, "' is missing"));
  return absl::OkStatus();
}

}  // namespace onnxsurgeon::opset

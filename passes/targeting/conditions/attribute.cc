// attribute:NAME (set to a value other than its default) and attribute:NAME=V (set to V, or
// absent when V is its default: "direction=forward" holds for an LSTM that sets none).
#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "onnx/defs/schema.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

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

// Scalars as text (ints and strings compare as written in the profile).
std::string AttrText(const Attribute& a) {
  const auto& p = a.proto();
  if (p.has_s()) return p.s();
  if (p.type() == onnx::AttributeProto::INT) return absl::StrCat(p.i());
  if (p.type() == onnx::AttributeProto::FLOAT) return absl::StrCat(p.f());
  return "<non-scalar>";
}

class AttributeCondition : public Condition {
 public:
  AttributeCondition(std::string name, std::optional<std::string> value)
      : name_(std::move(name)), value_(std::move(value)) {}

  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    const Attribute* a = n.FindAttribute(name_);
    if (!a) {
      if (!value_ || value_->empty() || DefaultOf(n, name_) != *value_) return false;
      *detail = absl::StrCat(name_, "=", *value_, " (the default)");
      return true;
    }
    std::string actual = AttrText(*a);
    if (value_ ? actual != *value_ : actual == DefaultOf(n, name_)) return false;
    *detail = absl::StrCat(name_, "=", actual);
    return true;
  }

 private:
  std::string name_;
  std::optional<std::string> value_;  // none: any value but the default
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  OS_RETURN_IF_ERROR(NeedArgument(args, "attribute:"));
  size_t eq = args.find('=');
  if (eq == absl::string_view::npos) return std::make_unique<AttributeCondition>(std::string(args), std::nullopt);
  return std::make_unique<AttributeCondition>(std::string(args.substr(0, eq)), std::string(args.substr(eq + 1)));
}

}  // namespace

extern const ConditionKind kAttribute = {
    "attribute:", "attribute:NAME, attribute:NAME=V",
    "NAME set to a value other than its default; with =V, set to V (ints and strings), or absent when V is its "
    "default",
    "", Parse};

}  // namespace onnxsurgeon::target

#include "core/pattern/pattern.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace onnxsurgeon::pattern {

ValueRef OpRef::Out(int i) const {
  Pattern::PValue v;
  v.kind = Pattern::ValueKind::kOpOutput;
  v.op = id_;
  v.output_index = i;
  return {pattern_->AddValue(std::move(v))};
}

OpRef& OpRef::Domain(std::string domain) {
  pattern_->ops_[id_].domain = domain == "ai.onnx" ? "" : std::move(domain);
  return *this;
}
OpRef& OpRef::Opset(int64_t min_version, int64_t max_version) {
  pattern_->ops_[id_].opset_min = min_version;
  pattern_->ops_[id_].opset_max = max_version;
  return *this;
}
OpRef& OpRef::Commutative() {
  pattern_->ops_[id_].commutative = true;
  return *this;
}
OpRef& OpRef::Attr(std::string name, AttrPredicate predicate) {
  pattern_->ops_[id_].attrs.push_back({std::move(name), std::move(predicate), {}});
  return *this;
}
OpRef& OpRef::AttrInt(std::string name, int64_t expected, std::optional<int64_t> default_value) {
  return Attr(std::move(name), IntIs(expected, default_value));
}
OpRef& OpRef::CaptureAttr(std::string name, std::string capture) {
  pattern_->ops_[id_].attrs.push_back({std::move(name), nullptr, std::move(capture)});
  return *this;
}
OpRef& OpRef::Capture(std::string name) {
  pattern_->ops_[id_].capture = std::move(name);
  return *this;
}
OpRef& OpRef::AllowExternalUses() {
  pattern_->ops_[id_].allow_external_uses = true;
  return *this;
}
OpRef& OpRef::AnyNumberOfInputs() {
  pattern_->ops_[id_].exact_inputs = false;
  return *this;
}

int Pattern::AddValue(PValue v) {
  values_.push_back(std::move(v));
  return static_cast<int>(values_.size() - 1);
}

ValueRef Pattern::Any(std::string capture) {
  PValue v;
  v.kind = ValueKind::kAny;
  v.capture = std::move(capture);
  return {AddValue(std::move(v))};
}

ValueRef Pattern::Const(std::string capture, ConstPredicate predicate) {
  PValue v;
  v.kind = ValueKind::kConst;
  v.capture = std::move(capture);
  v.const_predicate = std::move(predicate);
  return {AddValue(std::move(v))};
}

ValueRef Pattern::ScalarNear(std::string capture, double value, double tolerance) {
  return Const(std::move(capture), [value, tolerance](const ConstantData& c, std::string* why) {
    auto s = c.ScalarAsDouble();
    if (!s) {
      if (why) *why = absl::StrCat("constant has ", c.num_elements(), " elements, wants a scalar ", value);
      return false;
    }
    if (std::abs(*s - value) > tolerance * std::max(1.0, std::abs(value))) {
      if (why) *why = absl::StrCat("constant is ", *s, ", wants ", value);
      return false;
    }
    return true;
  });
}

ValueRef Pattern::Or(std::vector<ValueRef> alternatives, std::string capture) {
  PValue v;
  v.kind = ValueKind::kOr;
  v.capture = std::move(capture);
  for (ValueRef a : alternatives) v.alternatives.push_back(a.id);
  return {AddValue(std::move(v))};
}

ValueRef Pattern::Where(ValueRef inner, ValuePredicate predicate, std::string description) {
  PValue v;
  v.kind = ValueKind::kWhere;
  v.inner = inner.id;
  v.value_predicate = std::move(predicate);
  v.description = std::move(description);
  return {AddValue(std::move(v))};
}

OpRef Pattern::Op(std::string op_type, std::vector<ValueRef> inputs, int num_outputs) {
  POp op;
  op.op_type = std::move(op_type);
  for (ValueRef v : inputs) op.inputs.push_back(v.id);
  op.num_outputs = num_outputs;
  ops_.push_back(std::move(op));
  return OpRef(this, static_cast<int>(ops_.size() - 1));
}

AttrPredicate IntIs(int64_t expected, std::optional<int64_t> default_value) {
  return [expected, default_value](const Attribute* a, std::string* why) {
    std::optional<int64_t> got = a ? std::optional<int64_t>(a->i()) : default_value;
    if (got == expected) return true;
    if (why) *why = got ? absl::StrCat("is ", *got, ", wants ", expected) : absl::StrCat("is absent, wants ", expected);
    return false;
  };
}

}  // namespace onnxsurgeon::pattern

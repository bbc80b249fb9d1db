// Declarative DAG patterns over the IR.
//
// A pattern reads like the math it matches. LayerNorm's variance, for example:
//
//   Pattern p("variance");
//   ValueRef x = p.Any("x");
//   ValueRef mean = p.Op("ReduceMean", {x});
//   ValueRef d = p.Op("Sub", {x, mean});
//   ValueRef sq = p.Or({p.Op("Mul", {d, d}), p.Op("Pow", {d, p.ScalarNear("two", 2.0)})});
//   OpRef var = p.Op("ReduceMean", {sq}).Capture("var");
//
// Operands are sub-patterns, captured values (Any), constants with a predicate (Const,
// ScalarNear), or alternatives (Or). A value used twice (`d` above) must be the same graph
// value. Ops may be commutative (Add/Mul match either operand order), constrained by
// domain, opset range and attribute predicates, and by default every intermediate op may
// only feed other ops of the match (so a rewrite can delete them). A failed match says
// why (see Matcher::Explain).
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/constant.h"
#include "core/ir/value.h"

namespace onnxsurgeon::pattern {

class Pattern;

// Predicates return false and may say why through `why`.
using ConstPredicate = std::function<bool(const ConstantData&, std::string* why)>;
using ValuePredicate = std::function<bool(const Value*, std::string* why)>;
// `attr` is null when the node does not carry the attribute (the schema default applies).
using AttrPredicate = std::function<bool(const Attribute* attr, std::string* why)>;

struct ValueRef {
  int id = -1;
};

class OpRef {
 public:
  OpRef(Pattern* p, int id) : pattern_(p), id_(id) {}
  int id() const { return id_; }
  // Output `i` of the op as an operand for other ops.
  ValueRef Out(int i = 0) const;
  operator ValueRef() const { return Out(0); }  // NOLINT: reads like math

  // Constraints, chainable.
  OpRef& Domain(std::string domain);
  OpRef& Opset(int64_t min_version, int64_t max_version = INT64_MAX);
  OpRef& Commutative();  // binary op: try both operand orders
  OpRef& Attr(std::string name, AttrPredicate predicate);
  OpRef& AttrInt(std::string name, int64_t expected, std::optional<int64_t> default_value = std::nullopt);
  OpRef& CaptureAttr(std::string name, std::string capture);  // the attribute (may be absent)
  OpRef& Capture(std::string name);                           // the matched node
  OpRef& AllowExternalUses();                                 // its outputs may feed ops outside the match
  OpRef& AnyNumberOfInputs();                                 // do not require exactly the listed inputs

 private:
  Pattern* pattern_;
  int id_;
};

// A whole pattern: values and ops, built with the methods below.
class Pattern {
 public:
  explicit Pattern(std::string name = "pattern") : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  ValueRef Any(std::string capture = {});
  ValueRef Const(std::string capture = {}, ConstPredicate predicate = {});
  // A constant with exactly one element within `tolerance` (relative) of `value`.
  ValueRef ScalarNear(std::string capture, double value, double tolerance = 1e-6);
  ValueRef Or(std::vector<ValueRef> alternatives, std::string capture = {});
  // `v` with a predicate on the graph value (type, rank, ...).
  ValueRef Where(ValueRef v, ValuePredicate predicate, std::string description);
  OpRef Op(std::string op_type, std::vector<ValueRef> inputs, int num_outputs = -1);

  // ---- representation (read by the Matcher) --------------------------------------
  enum class ValueKind { kAny, kConst, kOpOutput, kOr, kWhere };
  struct PValue {
    ValueKind kind;
    std::string capture;
    ConstPredicate const_predicate;
    int op = -1;
    int output_index = 0;
    std::vector<int> alternatives;
    int inner = -1;
    ValuePredicate value_predicate;
    std::string description;
  };
  struct AttrCheck {
    std::string name;
    AttrPredicate predicate;  // null: capture only
    std::string capture;
  };
  struct POp {
    std::string op_type;
    std::string domain;
    int64_t opset_min = 0;
    int64_t opset_max = INT64_MAX;
    std::vector<int> inputs;
    int num_outputs = -1;
    bool commutative = false;
    bool exact_inputs = true;
    bool allow_external_uses = false;
    std::vector<AttrCheck> attrs;
    std::string capture;
  };
  const std::vector<PValue>& values() const { return values_; }
  const std::vector<POp>& ops() const { return ops_; }
  POp& op(int id) { return ops_[id]; }

 private:
  friend class OpRef;
  int AddValue(PValue v);
  std::string name_;
  std::vector<PValue> values_;
  std::vector<POp> ops_;
};

// Common attribute predicates.
AttrPredicate IntIs(int64_t expected, std::optional<int64_t> default_value = std::nullopt);

}  // namespace onnxsurgeon::pattern

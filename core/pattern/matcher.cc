#include "core/pattern/matcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"

namespace onnxsurgeon::pattern {

// ---- Match ---------------------------------------------------------------------------

namespace {
[[noreturn]] void NoCapture(std::string_view capture) {
  throw std::out_of_range(absl::StrCat("pattern has no capture '", std::string(capture), "'"));
}
}  // namespace

Value* Match::value(std::string_view capture) const {
  const auto& values = pattern_->values();
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].capture == capture && values_[i]) return values_[i];
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].capture == capture) return values_[i];
  NoCapture(capture);
}

Node* Match::node(std::string_view capture) const {
  const auto& ops = pattern_->ops();
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].capture == capture) return ops_[i];
  NoCapture(capture);
}

const Attribute* Match::attr(std::string_view capture) const {
  for (const auto& [name, a] : attrs_)
    if (name == capture) return a;
  NoCapture(capture);
}

const ConstantData& Match::constant(std::string_view capture) const {
  const auto& values = pattern_->values();
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].capture == capture && constants_[i]) return *constants_[i];
  NoCapture(capture);
}

double Match::scalar(std::string_view capture) const {
  auto s = constant(capture).ScalarAsDouble();
  if (!s) throw std::out_of_range(absl::StrCat("capture '", std::string(capture), "' is not a scalar"));
  return *s;
}

bool Match::has(std::string_view capture) const {
  const auto& values = pattern_->values();
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].capture == capture && values_[i]) return true;
  const auto& ops = pattern_->ops();
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].capture == capture && ops_[i]) return true;
  for (const auto& [name, a] : attrs_)
    if (name == capture) return true;
  return false;
}

std::vector<Node*> Match::nodes() const {
  std::vector<Node*> out;
  for (Node* n : ops_)
    if (n) out.push_back(n);
  return out;
}

// ---- Matcher -------------------------------------------------------------------------

std::string Matcher::DescribeOp(int id) const {
  const auto& op = pattern_.ops()[id];
  return absl::StrCat(op.domain.empty() ? "" : op.domain + "::", op.op_type,
                      op.capture.empty() ? "" : " '" + op.capture + "'");
}

int Matcher::BoundOps() const {
  return static_cast<int>(std::count_if(ops_.begin(), ops_.end(), [](Node* n) { return n != nullptr; }));
}

bool Matcher::Fail(std::string reason) {
  if (explain_) {
    int depth = BoundOps();
    if (depth > best_depth_) {
      best_depth_ = depth;
      explanation_ = absl::StrCat("matched ", depth, " of ", pattern_.ops().size(), " ops, then: ", reason);
    }
  }
  return false;
}

bool Matcher::MatchAt(Node* root, Match& out, bool explain) {
  explain_ = explain;
  best_depth_ = -1;
  explanation_.clear();
  values_.assign(pattern_.values().size(), nullptr);
  ops_.assign(pattern_.ops().size(), nullptr);
  constants_.assign(pattern_.values().size(), std::nullopt);
  attrs_.clear();
  goals_.clear();
  goals_.push_back({true, root_op_, nullptr, root});
  if (!Solve()) return false;
  out.pattern_ = &pattern_;
  out.root_ = root;
  out.values_ = values_;
  out.ops_ = ops_;
  out.constants_ = constants_;
  out.attrs_ = attrs_;
  return true;
}

bool Matcher::Solve() {
  if (goals_.empty()) return Finish();
  Goal g = goals_.back();
  goals_.pop_back();
  bool ok = g.is_op ? SolveOp(g.id, g.node) : SolveValue(g.id, g.value);
  if (!ok) goals_.push_back(g);
  return ok;
}

bool Matcher::SolveValue(int id, Value* v) {
  const Pattern::PValue& pv = pattern_.values()[id];
  if (values_[id]) {
    if (values_[id] != v)
      return Fail(absl::StrCat("a value used twice by the pattern is two different values ('", values_[id]->name(),
                               "' and '", v ? v->name() : "", "')"));
    return Solve();
  }
  if (!v) return Fail("an input the pattern needs is omitted");
  values_[id] = v;
  bool ok = false;
  switch (pv.kind) {
    case Pattern::ValueKind::kAny: ok = Solve(); break;
    case Pattern::ValueKind::kConst: {
      auto c = GetConstant(v);
      if (!c) {
        ok = Fail(absl::StrCat("'", v->name(), "' is not a constant"));
        break;
      }
      std::string why;
      if (pv.const_predicate && !pv.const_predicate(*c, explain_ ? &why : nullptr)) {
        ok = Fail(
            absl::StrCat("constant '", v->name(), "'", pv.capture.empty() ? "" : " (" + pv.capture + ")", ": ", why));
        break;
      }
      constants_[id] = std::move(c);
      ok = Solve();
      if (!ok) constants_[id].reset();
      break;
    }
    case Pattern::ValueKind::kOpOutput: {
      Node* producer = v->producer();
      if (!producer || v->producer_output_index() != pv.output_index) {
        ok = Fail(absl::StrCat("'", v->name(), "' is not produced by ", DescribeOp(pv.op),
                               producer ? " (its producer is " + producer->op_type() + ")" : " (it has no producer)"));
        break;
      }
      goals_.push_back({true, pv.op, nullptr, producer});
      ok = Solve();
      if (!ok) goals_.pop_back();
      break;
    }
    case Pattern::ValueKind::kOr:
      for (int alt : pv.alternatives) {
        goals_.push_back({false, alt, v, nullptr});
        ok = Solve();
        if (ok) break;
        goals_.pop_back();
      }
      break;
    case Pattern::ValueKind::kWhere: {
      std::string why;
      if (!pv.value_predicate(v, explain_ ? &why : nullptr)) {
        ok = Fail(absl::StrCat("'", v->name(), "' is not ", pv.description, why.empty() ? "" : ": " + why));
        break;
      }
      goals_.push_back({false, pv.inner, v, nullptr});
      ok = Solve();
      if (!ok) goals_.pop_back();
      break;
    }
  }
  if (!ok) values_[id] = nullptr;
  return ok;
}

bool Matcher::SolveOp(int id, Node* n) {
  const Pattern::POp& po = pattern_.ops()[id];
  if (ops_[id]) {
    if (ops_[id] != n) return Fail(absl::StrCat(DescribeOp(id), " is used twice but matches two different nodes"));
    return Solve();
  }
  if (std::find(ops_.begin(), ops_.end(), n) != ops_.end()) {
    return Fail(absl::StrCat("node '", n->name(), "' would match two pattern ops"));
  }
  if (!n->Is(po.op_type, po.domain)) {
    return Fail(absl::StrCat("node '", n->name(), "' is ", n->op_type(), ", wants ", DescribeOp(id)));
  }
  if (po.opset_min > 0 || po.opset_max != INT64_MAX) {
    int64_t v = n->graph()->OpsetVersion(po.domain);
    if (v < po.opset_min || v > po.opset_max) {
      return Fail(
          absl::StrCat(DescribeOp(id), " at opset ", v, " is outside [", po.opset_min, ", ", po.opset_max, "]"));
    }
  }
  // Trailing omitted inputs do not count.
  size_t n_inputs = n->num_inputs();
  while (n_inputs > 0 && n->input(n_inputs - 1) == nullptr) --n_inputs;
  if (po.exact_inputs ? n_inputs != po.inputs.size() : n_inputs < po.inputs.size()) {
    return Fail(absl::StrCat("node '", n->name(), "' (", n->op_type(), ") has ", n_inputs, " inputs, wants ",
                             po.inputs.size()));
  }
  if (po.num_outputs >= 0 && static_cast<int>(n->num_outputs()) != po.num_outputs) {
    return Fail(absl::StrCat("node '", n->name(), "' has ", n->num_outputs(), " outputs, wants ", po.num_outputs));
  }
  size_t attrs_before = attrs_.size();
  for (const auto& check : po.attrs) {
    const Attribute* a = n->FindAttribute(check.name);
    std::string why;
    if (check.predicate && !check.predicate(a, explain_ ? &why : nullptr)) {
      attrs_.resize(attrs_before);
      return Fail(absl::StrCat("attribute '", check.name, "' of node '", n->name(), "' ", why));
    }
    if (!check.capture.empty()) attrs_.emplace_back(check.capture, a);
  }
  ops_[id] = n;
  auto try_order = [&](bool swapped) {
    size_t pushed = 0;
    for (size_t i = po.inputs.size(); i-- > 0;) {
      size_t k = (swapped && po.inputs.size() == 2) ? 1 - i : i;
      goals_.push_back({false, po.inputs[i], n->input(k), nullptr});
      ++pushed;
    }
    if (Solve()) return true;
    goals_.resize(goals_.size() - pushed);
    return false;
  };
  bool ok = try_order(false) || (po.commutative && po.inputs.size() == 2 && try_order(true));
  if (!ok) {
    ops_[id] = nullptr;
    attrs_.resize(attrs_before);
  }
  return ok;
}

// Every intermediate op may only feed the match, unless the pattern says otherwise:
// a rewrite replaces the root and deletes the rest.
bool Matcher::Finish() {
  for (size_t i = 0; i < ops_.size(); ++i) {
    Node* n = ops_[i];
    if (!n || static_cast<int>(i) == root_op_ || pattern_.ops()[i].allow_external_uses) continue;
    for (Value* out : n->outputs()) {
      if (!out) continue;
      if (out->IsGraphOutput()) {
        return Fail(absl::StrCat("intermediate '", out->name(), "' of ", DescribeOp(static_cast<int>(i)),
                                 " is a graph output"));
      }
      for (const Use& u : out->uses()) {
        if (std::find(ops_.begin(), ops_.end(), u.node) == ops_.end()) {
          return Fail(absl::StrCat("intermediate '", out->name(), "' of ", DescribeOp(static_cast<int>(i)),
                                   " is also used by node '", u.node->name(), "' (", u.node->op_type(),
                                   ") outside the match"));
        }
      }
    }
  }
  return true;
}

}  // namespace onnxsurgeon::pattern

// absorb-inputs: an op takes over what a node before it computes, where the op's own
// attributes or defaults say exactly the same. Two rules:
//
// pad-into-window: a constant-mode Pad that pads only the spatial axes, by non-negative
// amounts, goes into the pads of the Conv, AveragePool or MaxPool that reads it, when the
// value it pads with is the one that op's own padding means:
//   - Conv: 0 (a Conv pads with zeros);
//   - AveragePool: 0, and the pool counts padding (count_include_pad=1), or had no padding
//     of its own (then it is set to 1: every window it saw was all real elements and zeros
//     the Pad wrote, so the divisor was the whole window, as count_include_pad=1 says);
//     not with ceil_mode=1 (a last window past the padding is divided differently);
//   - MaxPool: -inf (MaxPool's padding never wins a max), or a value the input is known
//     never to be below (0 after a ReLU: a zero never beats the window's real elements),
//     dilations 1, each side's pad
//     below the kernel (every window keeps a real element: a window of padding alone would
//     give the lowest float, not -inf), not ceil_mode, the Indices output unread (its
//     offsets are into the unpadded input).
// Refused: another mode or value, a computed pads or value, a pad on the batch or channel
// axis, a negative pad (a crop), auto_pad SAME_UPPER/SAME_LOWER (their pads depend on the
// input size the Pad changed). auto_pad=VALID is no padding: it becomes NOTSET with pads.
// The Pad stays while something else reads it. Exact: the op sees the same padded input.
//   Before:  p = Pad(x, [0,0,1,1,0,0,1,1])    y = Conv<pads=[0,0,0,0]>(p, W, B)
//   After:   y = Conv<pads=[1,1,1,1]>(x, W, B)
//
// zero-rnn-state: initial_h / initial_c of LSTM, GRU or RNN that is all zeros is dropped:
// the ONNX spec says an omitted initial state is 0 ("If not specified - assumed to be
// 0"). All zeros: a constant of zeros, a ConstantOfShape of zero (or without a value, which
// is a float 0), or Expand/Tile/Reshape/Squeeze/Unsqueeze/Flatten/Identity/Transpose/Cast/
// Slice/Gather/Split/Concat of all-zero values, however their shape is computed (Keras and torch build it from
// the batch size: Shape -> Gather -> Concat -> ConstantOfShape); the shape computation is
// left unread and dce takes it. A -0.0 state differs only in the sign of a zero result.
//   Before:  z = ConstantOfShape<value=0>(Concat([1], Gather(Shape(x), 1), [16]))
//            y, yh, yc = LSTM(x, W, R, B, , z, z)
//   After:   y, yh, yc = LSTM(x, W, R, B)
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/domains.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// ---- pad-into-window --------------------------------------------------------------------

struct PadFacts {
  std::vector<int64_t> begin, end;  // per axis of the Pad's input
  double value = 0;
};

// The constant pads (per axis, begin and end) and value of a constant-mode Pad, or why not.
Verdict<PadFacts> ReadPad(const Node& pad, int64_t rank) {
  const int64_t opset = pad.graph()->OpsetVersion("");
  if (const Attribute* m = pad.FindAttribute("mode"); m && m->s() != "constant")
    return Refuse(absl::StrCat("the Pad's mode is ", m->s(), ", not constant"));
  std::vector<int64_t> pads;
  PadFacts f;
  if (opset < 11) {
    const Attribute* a = pad.FindAttribute("pads");
    if (!a) return Refuse("the Pad has no pads");
    pads = a->ints();
    if (const Attribute* v = pad.FindAttribute("value")) f.value = v->f(0);
  } else {
    auto p = pad.input(1) ? ConstantInt64s(pad.input(1)) : std::nullopt;
    if (!p) return Refuse("the Pad's pads are not a constant");
    pads = *p;
    if (pad.num_inputs() > 2 && pad.input(2)) {
      auto c = GetConstant(pad.input(2));
      auto v = c ? c->ScalarAsDouble() : std::nullopt;
      if (!v) return Refuse("the Pad's constant_value is not a constant scalar");
      f.value = *v;
    }
  }
  f.begin.assign(static_cast<size_t>(rank), 0);
  f.end.assign(static_cast<size_t>(rank), 0);
  std::vector<int64_t> axes;
  if (pad.num_inputs() > 3 && pad.input(3)) {
    auto a = ConstantInt64s(pad.input(3));
    if (!a) return Refuse("the Pad's axes are not a constant");
    axes = *a;
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size())
    return Refuse(absl::StrCat("the Pad's ", pads.size(), " pads do not fit its input's rank ", rank));
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return Refuse("a Pad axis is out of range");
    f.begin[static_cast<size_t>(a)] += pads[i];
    f.end[static_cast<size_t>(a)] += pads[i + axes.size()];
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (f.begin[i] < 0 || f.end[i] < 0) return Refuse("the Pad crops (a negative pad)");
    if (i < 2 && (f.begin[i] != 0 || f.end[i] != 0)) return Refuse("the Pad pads the batch or channel axis");
  }
  return f;
}

// A number every element of `v` is known to be at least, from the op that makes it: a ReLU,
// sigmoid, absolute value or exponential (0), a Clip with a constant min.
std::optional<double> LowerBound(const Value* v) {
  const Node* p = v ? v->producer() : nullptr;
  if (!p || !CanonicalDomain(p->domain()).empty()) return std::nullopt;
  if (p->Is("Relu") || p->Is("Sigmoid") || p->Is("HardSigmoid") || p->Is("Abs") || p->Is("Exp") || p->Is("Softplus"))
    return 0.0;
  if (p->Is("Clip")) {
    if (p->graph()->OpsetVersion("") < 11) {
      const Attribute* min = p->FindAttribute("min");
      return min ? std::optional<double>(min->f(0)) : std::nullopt;
    }
    auto c = p->num_inputs() > 1 && p->input(1) ? GetConstant(p->input(1)) : std::nullopt;
    return c ? c->ScalarAsDouble() : std::nullopt;
  }
  return std::nullopt;
}

struct WindowPlan {
  Node* pad = nullptr;
  std::vector<int64_t> pads;  // the op's new pads attribute
  bool set_count_include_pad = false;
};

class PadIntoWindowRule : public NodeRule<WindowPlan> {
 public:
  explicit PadIntoWindowRule(std::string op) : NodeRule("pad-into-window", op, "", 2), op_(std::move(op)) {}

 protected:
  Verdict<WindowPlan> Check(Node* n, RewriteFacts&) const override {
    Node* pad = n->input(0) ? n->input(0)->producer() : nullptr;
    if (!pad || !pad->Is("Pad") || pad->graph() != n->graph()) return Refuse("the input is not a Pad's output");
    // The spatial rank: kernel_shape, else the Conv weight's rank.
    int64_t spatial = -1;
    if (const Attribute* k = n->FindAttribute("kernel_shape")) spatial = static_cast<int64_t>(k->ints().size());
    std::vector<int64_t> kernel;
    if (const Attribute* k = n->FindAttribute("kernel_shape")) kernel = k->ints();
    if (spatial < 0 && n->input(1)) {
      auto w = GetConstantTypeAndDims(n->input(1));
      auto s = w ? std::optional<Shape>() : ShapeOf(n->input(1));
      if (w) spatial = static_cast<int64_t>(w->second.size()) - 2;
      else if (s) spatial = static_cast<int64_t>(s->size()) - 2;
    }
    if (spatial < 1) return Refuse(absl::StrCat("the ", op_, "'s spatial rank is unknown"));
    const int64_t rank = spatial + 2;
    Verdict<PadFacts> facts = ReadPad(*pad, rank);
    if (!facts) return Refuse(facts.reason());
    const PadFacts& f = *facts;
    const std::string auto_pad = n->FindAttribute("auto_pad") ? n->FindAttribute("auto_pad")->s() : "NOTSET";
    if (auto_pad != "NOTSET" && auto_pad != "VALID")
      return Refuse(absl::StrCat("auto_pad is ", auto_pad, ": its pads depend on the input size the Pad changes"));
    std::vector<int64_t> own(static_cast<size_t>(2 * spatial), 0);
    if (const Attribute* p = n->FindAttribute("pads"); p && auto_pad == "NOTSET") {
      own = p->ints();
      if (own.size() != static_cast<size_t>(2 * spatial)) return Refuse("the pads attribute does not fit the rank");
    }
    const bool own_zero = std::all_of(own.begin(), own.end(), [](int64_t v) { return v == 0; });
    WindowPlan plan{pad, own};
    for (int64_t i = 0; i < spatial; ++i) {
      plan.pads[i] += f.begin[i + 2];
      plan.pads[i + spatial] += f.end[i + 2];
    }
    const Attribute* ceil = n->FindAttribute("ceil_mode");
    const bool ceil_mode = ceil && ceil->i(0) != 0;
    if (op_ == "Conv") {
      if (f.value != 0) return Refuse(absl::StrCat("the Pad's value is ", f.value, ", not the 0 a Conv pads with"));
    } else if (op_ == "AveragePool") {
      if (f.value != 0) return Refuse(absl::StrCat("the Pad's value is ", f.value, ", not 0"));
      if (ceil_mode) return Refuse("ceil_mode=1: a window past the padding is divided by its in-range count");
      const Attribute* cip = n->FindAttribute("count_include_pad");
      if (!(cip && cip->i(0) != 0)) {
        if (!own_zero) return Refuse("the pool pads too and does not count padding (count_include_pad=0)");
        plan.set_count_include_pad = true;
      }
    } else {  // MaxPool
      // A value no real element is below never wins a max either: a ReLU's 0.
      const std::optional<double> low = LowerBound(pad->input(0));
      if (!(std::isinf(f.value) && f.value < 0) && !(low && *low >= f.value))
        return Refuse(absl::StrCat("the Pad's value is ", f.value,
                                   ", not -inf (MaxPool's padding) nor known to be at most the input's every element"));
      if (ceil_mode) return Refuse("ceil_mode=1: a last window may hold padding alone");
      if (const Attribute* d = n->FindAttribute("dilations"))
        for (int64_t v : d->ints())
          if (v != 1) return Refuse("dilations above 1");
      if (kernel.size() != static_cast<size_t>(spatial)) return Refuse("kernel_shape is missing");
      for (int64_t i = 0; i < spatial; ++i)
        if (plan.pads[i] >= kernel[i] || plan.pads[i + spatial] >= kernel[i])
          return Refuse("a pad reaches the kernel's size: a window could hold padding alone");
      if (n->num_outputs() > 1 && n->output(1) && n->output(1)->HasUsers())
        return Refuse("the Indices output is read (its offsets are into the unpadded input)");
    }
    return plan;
  }

  Status Replace(Node* n, WindowPlan plan, Rewriter& rw) const override {
    rw.SetInput(n, 0, plan.pad->input(0));
    rw.RemoveAttribute(n, "auto_pad");
    rw.SetAttribute(n, Rewriter::AttrInts("pads", plan.pads));
    if (plan.set_count_include_pad) rw.SetAttribute(n, Rewriter::AttrInt("count_include_pad", 1));
    rw.EraseDead({plan.pad});
    return absl::OkStatus();
  }

 private:
  std::string op_;
};

// ---- zero-rnn-state ---------------------------------------------------------------------

// True when every element of `v` is provably 0.
bool AllZero(const Value* v, int depth = 0) {
  if (!v || depth > 16) return false;
  if (auto c = GetConstant(v)) {
    auto d = c->AsDoubles();
    return d && std::all_of(d->begin(), d->end(), [](double x) { return x == 0; });
  }
  const Node* p = v->producer();
  if (!p || !CanonicalDomain(p->domain()).empty()) return false;
  const std::string& op = p->op_type();
  if (op == "ConstantOfShape") {
    const Attribute* value = p->FindAttribute("value");
    if (!value) return true;  // a float 0
    auto c = GetConstant(value->proto().t());
    auto d = c ? c->AsDoubles() : std::nullopt;
    return d && std::all_of(d->begin(), d->end(), [](double x) { return x == 0; });
  }
  if (op == "Expand" || op == "Tile" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" ||
      op == "Identity" || op == "Transpose" || op == "Cast" || op == "Slice" || op == "Gather" || op == "Split")
    return AllZero(p->input(0), depth + 1);
  if (op == "Concat") {
    for (size_t i = 0; i < p->num_inputs(); ++i)
      if (p->input(i) && !AllZero(p->input(i), depth + 1)) return false;
    return p->num_inputs() > 0;
  }
  return false;
}

class ZeroRnnStateRule : public NodeRule<std::vector<size_t>> {
 public:
  explicit ZeroRnnStateRule(std::string op) : NodeRule("zero-rnn-state", op, "", 2) {}

 protected:
  Verdict<std::vector<size_t>> Check(Node* n, RewriteFacts&) const override {
    // initial_h is input 5; initial_c (LSTM only) input 6.
    std::vector<size_t> zero;
    size_t last = n->Is("LSTM") ? 6 : 5;
    for (size_t i = 5; i <= last; ++i)
      if (n->input(i) && AllZero(n->input(i))) zero.push_back(i);
    if (zero.empty()) return Refuse("no initial state that is provably all zeros");
    return zero;
  }

  Status Replace(Node* n, std::vector<size_t> zero, Rewriter& rw) const override {
    for (size_t i : zero) rw.SetInput(n, i, nullptr);
    while (n->num_inputs() > 0 && !n->input(n->num_inputs() - 1)) rw.RemoveInput(n, n->num_inputs() - 1);
    return absl::OkStatus();
  }
};

class AbsorbInputsPass : public PatternPass {
 public:
  AbsorbInputsPass() {
    for (const char* op : {"Conv", "AveragePool", "MaxPool"}) AddRule(std::make_unique<PadIntoWindowRule>(op));
    for (const char* op : {"LSTM", "GRU", "RNN"}) AddRule(std::make_unique<ZeroRnnStateRule>(op));
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateAbsorbInputsPass(const PassOptions&) {
  return std::make_unique<AbsorbInputsPass>();
}

}  // namespace onnxsurgeon::passes

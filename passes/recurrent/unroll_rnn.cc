// unroll-rnn: writes an LSTM, GRU or RNN whose sequence length is static as its steps,
// for targets without these ops (ort-mobile, nncase k230) or that run them wrong (nncase
// k210's GRU). Per direction, the input projection of every step is one MatMul of X (plus
// the biases that do not depend on the state); each step then picks its row with Gather,
// adds MatMul(H, R^T), splits the gates and applies the ONNX equations:
//   LSTM  i = f(Xi + Hi + Pi*C)  f' = f(Xf + Hf + Pf*C)  c = g(Xc + Hc)
//         C' = f'*C + i*c        o = f(Xo + Ho + Po*C')  H' = o*h(C')
//   GRU   z = f(Xz + Hz)  r = f(Xr + Hr)
//         n = g(Xh + (r*H) Rh^T + Rbh)          (linear_before_reset=0)
//         n = g(Xh + r*(H Rh^T + Rbh))          (linear_before_reset=1)
//         H' = (1 - z)*n + z*H
//   RNN   H' = f(Xi + Hi)
// where Xg = X Wg^T + Wbg (+ Rbg where it does not depend on the state) and Hg = H Rg^T.
// clip bounds every activation's input. Without initial states the first step drops the
// terms in H and C (they are zero): the same values exactly.
//
// Exact up to the order of float additions (biases summed once, in double). Refused, with
// the reason: weights or biases computed at run time; a sequence length that is not static,
// or steps (length x directions) above max-steps; sequence_lens that is not a constant equal
// to the length everywhere; input_forget=1; activations other than Sigmoid, Tanh and Relu,
// or activation_alpha/beta; element types other than float (onnxruntime, the reference the
// rewrite was checked against, runs these ops in float only).
//
// Options:
//   max-steps=256   largest sequence length x directions one node is unrolled to
//
// Given:  %Y, %Yh = RNN<hidden_size=2>(%X, %W, %R)             X: float[2,1,3]
// Result: %xw = MatMul(%X, W^T)
//         %h0 = Tanh(Gather(%xw, 0))
//         %h1 = Tanh(Add(Gather(%xw, 1), MatMul(%h0, R^T)))
//         %Y = Reshape(Concat<axis=0>(%h0, %h1), [2, 1, -1, 2])  %Yh = Reshape(%h1, [1, -1, 2])
#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/recurrent/emit.h"
#include "passes/recurrent/rnn_node.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using recurrent::RnnKind;
using recurrent::RnnShape;

// One direction's constants, in the layouts the steps read.
struct Direction {
  std::vector<double> wt;     // [I, G*H]: W^T
  std::vector<double> rt;     // [H, G*H]: R^T
  std::vector<double> xbias;  // [G*H]: Wb (+ Rb where it does not depend on the state)
  std::vector<double> rbh;    // [H]: GRU with linear_before_reset=1, Rbh; else empty
  std::vector<double> peep;   // [3H]: LSTM P (i, o, f), or empty
  std::vector<std::string> acts;
};

struct UnrollPlan {
  RnnShape shape;
  std::optional<float> clip;
  bool lbr = false;
  std::vector<Direction> dirs;
};

std::optional<std::vector<double>> Doubles(const Value* v) {
  std::optional<ConstantData> c = GetConstant(v);
  if (!c) return std::nullopt;
  return c->AsDoubles();
}

// Rows x cols block `d` of `m` ([dirs, rows, cols]) transposed to [cols, rows].
std::vector<double> Transposed(const std::vector<double>& m, int64_t d, int64_t rows, int64_t cols) {
  std::vector<double> t(static_cast<size_t>(rows * cols));
  const double* block = m.data() + d * rows * cols;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = block[r * cols + c];
  return t;
}

std::string Canonical(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name == "sigmoid") return "Sigmoid";
  if (name == "tanh") return "Tanh";
  if (name == "relu") return "Relu";
  return name;
}

// The activations per direction, or a refusal.
Verdict<std::vector<std::vector<std::string>>> ReadActivations(const Node& n, const RnnShape& s) {
  const std::vector<std::string> defaults = recurrent::DefaultActivations(s.kind);
  std::vector<std::vector<std::string>> acts(static_cast<size_t>(s.dirs), defaults);
  if (n.FindAttribute("activation_alpha") || n.FindAttribute("activation_beta"))
    return Refuse("activation_alpha/activation_beta are not unrolled");
  const Attribute* a = n.FindAttribute("activations");
  if (!a) return acts;
  const auto& names = a->proto().strings();
  if (static_cast<size_t>(names.size()) != defaults.size() * acts.size())
    return Refuse(absl::StrCat("it lists ", names.size(), " activations, not ", defaults.size() * acts.size()));
  for (size_t i = 0; i < static_cast<size_t>(names.size()); ++i) {
    std::string name = Canonical(names[static_cast<int>(i)]);
    if (!recurrent::IsPlainActivation(name))
      return Refuse(
          absl::StrCat("activation '", names[static_cast<int>(i)], "' is not unrolled (Sigmoid, Tanh, Relu)"));
    acts[i / defaults.size()][i % defaults.size()] = name;
  }
  return acts;
}

Verdict<UnrollPlan> Plan(const Node& n, int64_t max_steps) {
  Verdict<RnnShape> read = recurrent::ReadRnn(n);
  if (!read) return Refuse(read.reason());
  UnrollPlan plan{*read, std::nullopt, false, {}};
  const RnnShape& s = plan.shape;
  if (s.type != onnx::TensorProto::FLOAT) {
    if (s.type == 0) return Refuse(lowering::WhyNotFloat(n, n.input(recurrent::kX)));
    return Refuse("its element type is not float (the only one checked against onnxruntime)");
  }
  if (s.seq < 1) return Refuse("its sequence length is not static (set-input-shape first)");
  if (s.seq * s.dirs > max_steps)
    return Refuse(absl::StrCat(s.seq, " steps x ", s.dirs, " directions exceed max-steps=", max_steps));
  std::string why;
  if (!recurrent::SequenceLensAreFull(n, s.seq, &why)) return Refuse(why);
  if (const Attribute* a = n.FindAttribute("input_forget"); a && a->i() != 0)
    return Refuse("input_forget=1 is not unrolled");
  if (const Attribute* a = n.FindAttribute("clip")) plan.clip = a->f();
  if (const Attribute* a = n.FindAttribute("linear_before_reset")) plan.lbr = a->i() != 0;
  Verdict<std::vector<std::vector<std::string>>> acts = ReadActivations(n, s);
  if (!acts) return Refuse(acts.reason());
  const int64_t g = s.gates, h = s.hidden;
  auto w = Doubles(n.input(recurrent::kW));
  auto r = Doubles(n.input(recurrent::kR));
  if (!w || !r) return Refuse("its W or R is not a numeric constant");
  std::vector<double> b(static_cast<size_t>(s.dirs * 2 * g * h), 0.0);
  if (const Value* bv = n.input(recurrent::kB)) {
    auto bd = Doubles(bv);
    if (!bd) return Refuse("its bias B is computed at run time");
    if (bd->size() != b.size()) return Refuse("its bias B does not have 2 x gates x hidden entries per direction");
    b = *std::move(bd);
  }
  std::vector<double> p;
  if (const Value* pv = n.input(recurrent::kP); pv && s.kind == RnnKind::kLstm) {
    auto pd = Doubles(pv);
    if (!pd) return Refuse("its peepholes P are computed at run time");
    if (pd->size() != static_cast<size_t>(s.dirs * 3 * h))
      return Refuse("its peepholes P are not 3 x hidden per direction");
    p = *std::move(pd);
  }
  for (int64_t d = 0; d < s.dirs; ++d) {
    Direction dir;
    dir.wt = Transposed(*w, d, g * h, s.input);
    dir.rt = Transposed(*r, d, g * h, h);
    const double* wb = b.data() + d * 2 * g * h;
    const double* rb = wb + g * h;
    dir.xbias.resize(static_cast<size_t>(g * h));
    for (int64_t i = 0; i < g * h; ++i) {
      // GRU's Rbh stays with the state term when linear_before_reset=1.
      const bool state_side = s.kind == RnnKind::kGru && plan.lbr && i >= 2 * h;
      dir.xbias[i] = wb[i] + (state_side ? 0.0 : rb[i]);
    }
    if (s.kind == RnnKind::kGru && plan.lbr) dir.rbh.assign(rb + 2 * h, rb + 3 * h);
    if (!p.empty()) dir.peep.assign(p.begin() + d * 3 * h, p.begin() + (d + 1) * 3 * h);
    dir.acts = (*acts)[static_cast<size_t>(d)];
    plan.dirs.push_back(std::move(dir));
  }
  return plan;
}

bool AllZero(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0; });
}

// The state values of one direction at one step.
struct State {
  Value* h = nullptr;  // nullptr: zero (no initial state, first step)
  Value* c = nullptr;
};

class StepWriter {
 public:
  StepWriter(recurrent::Emitter& e, const UnrollPlan& plan, const Direction& dir) : e_(e), plan_(plan), dir_(dir) {}

  StatusOr<State> Step(Value* x, State in, Value* rt) {
    switch (plan_.shape.kind) {
      case RnnKind::kLstm: return Lstm(x, in, rt);
      case RnnKind::kGru: return Gru(x, in, rt);
      case RnnKind::kRnn: break;
    }
    Value* pre = in.h ? Add(x, Mul(in.h, rt, "MatMul")) : x;
    OS_ASSIGN_OR_RETURN(Value * h, e_.Activation(dir_.acts[0], pre, plan_.clip));
    return State{h, nullptr};
  }

  // The constants a direction's steps share, made once.
  Status Prepare(bool reads_state) {
    const int64_t h = plan_.shape.hidden;
    if (reads_state && plan_.shape.kind == RnnKind::kGru && !plan_.lbr) {
      // R^T's z and r columns for the gates, its h columns for (r*H) Rh^T.
      std::vector<double> zr, hh;
      for (int64_t row = 0; row < h; ++row) {
        const double* src = dir_.rt.data() + row * 3 * h;
        zr.insert(zr.end(), src, src + 2 * h);
        hh.insert(hh.end(), src + 2 * h, src + 3 * h);
      }
      OS_ASSIGN_OR_RETURN(rt_zr_, e_.Floats(zr, {h, 2 * h}, "R_zr"));
      OS_ASSIGN_OR_RETURN(rt_h_, e_.Floats(hh, {h, h}, "R_h"));
    }
    if (!dir_.rbh.empty() && !AllZero(dir_.rbh)) {
      OS_ASSIGN_OR_RETURN(rbh_, e_.Floats(dir_.rbh, {h}, "Rbh"));
    }
    if (!dir_.peep.empty()) {
      for (int i = 0; i < 3; ++i) {
        std::vector<double> part(dir_.peep.begin() + i * h, dir_.peep.begin() + (i + 1) * h);
        OS_ASSIGN_OR_RETURN(peep_[i], e_.Floats(part, {h}, "P"));
      }
    }
    if (plan_.shape.kind == RnnKind::kGru) {
      OS_ASSIGN_OR_RETURN(one_, e_.Floats({1.0}, {}, "one"));
    }
    return absl::OkStatus();
  }

 private:
  Value* Add(Value* a, Value* b) { return e_.rw().Op("Add", {a, b}); }
  Value* Mul(Value* a, Value* b, const char* op = "Mul") { return e_.rw().Op(op, {a, b}); }

  StatusOr<State> Lstm(Value* x, State in, Value* rt) {
    const int64_t h = plan_.shape.hidden;
    Value* gates = in.h ? Add(x, Mul(in.h, rt, "MatMul")) : x;
    std::vector<Value*> g = e_.Split(gates, 1, {h, h, h, h});  // i, o, f, c
    Value* gi = g[0];
    Value* gf = g[2];
    if (peep_[0] && in.c) {
      gi = Add(gi, Mul(peep_[0], in.c));
      gf = Add(gf, Mul(peep_[2], in.c));
    }
    OS_ASSIGN_OR_RETURN(Value * i, e_.Activation(dir_.acts[0], gi, plan_.clip));
    OS_ASSIGN_OR_RETURN(Value * c_new, e_.Activation(dir_.acts[1], g[3], plan_.clip));
    Value* c = Mul(i, c_new);
    if (in.c) {
      OS_ASSIGN_OR_RETURN(Value * f, e_.Activation(dir_.acts[0], gf, plan_.clip));
      c = Add(Mul(f, in.c), c);
    }
    Value* go = peep_[1] ? Add(g[1], Mul(peep_[1], c)) : g[1];
    OS_ASSIGN_OR_RETURN(Value * o, e_.Activation(dir_.acts[0], go, plan_.clip));
    OS_ASSIGN_OR_RETURN(Value * hc, e_.Activation(dir_.acts[2], c, std::nullopt));
    return State{Mul(o, hc), c};
  }

  StatusOr<State> Gru(Value* x, State in, Value* rt) {
    const int64_t h = plan_.shape.hidden;
    std::vector<Value*> xs = e_.Split(x, 1, {h, h, h});  // z, r, h
    Value* gz = xs[0];
    Value* gr = xs[1];
    Value* hh = nullptr;  // the state's part of n's input, before r
    if (in.h) {
      std::vector<Value*> hs = plan_.lbr ? e_.Split(Mul(in.h, rt, "MatMul"), 1, {h, h, h})
                                         : e_.Split(Mul(in.h, rt_zr_, "MatMul"), 1, {h, h});
      gz = Add(gz, hs[0]);
      gr = Add(gr, hs[1]);
      if (plan_.lbr) hh = rbh_ ? Add(hs[2], rbh_) : hs[2];
    } else if (plan_.lbr) {
      hh = rbh_;
    }
    OS_ASSIGN_OR_RETURN(Value * z, e_.Activation(dir_.acts[0], gz, plan_.clip));
    OS_ASSIGN_OR_RETURN(Value * r, e_.Activation(dir_.acts[0], gr, plan_.clip));
    Value* gn = xs[2];
    if (plan_.lbr && hh) gn = Add(gn, Mul(r, hh));
    if (!plan_.lbr && in.h) gn = Add(gn, Mul(Mul(r, in.h), rt_h_, "MatMul"));
    OS_ASSIGN_OR_RETURN(Value * n, e_.Activation(dir_.acts[1], gn, plan_.clip));
    Value* out = Mul(e_.rw().Op("Sub", {one_, z}), n);
    if (in.h) out = Add(out, Mul(z, in.h));
    return State{out, nullptr};
  }

  recurrent::Emitter& e_;
  const UnrollPlan& plan_;
  const Direction& dir_;
  Value* rt_zr_ = nullptr;
  Value* rt_h_ = nullptr;
  Value* rbh_ = nullptr;
  Value* peep_[3] = {nullptr, nullptr, nullptr};
  Value* one_ = nullptr;
};

// Y, Y_h and Y_c of one direction: the states in time order and the last ones.
struct DirOutputs {
  std::vector<Value*> hs;
  State last;
};

StatusOr<DirOutputs> UnrollDirection(recurrent::Emitter& e, const Node& n, const UnrollPlan& plan, int64_t d) {
  const RnnShape& s = plan.shape;
  const Direction& dir = plan.dirs[static_cast<size_t>(d)];
  const int64_t gh = s.gates * s.hidden;
  const int64_t seq_axis = s.layout == 0 ? 0 : 1;
  const int64_t dir_axis = s.layout == 0 ? 0 : 1;  // of initial_h / initial_c
  OS_ASSIGN_OR_RETURN(Value * wt, e.Floats(dir.wt, {s.input, gh}, "W_t"));
  Value* xw = e.rw().Op("MatMul", {n.input(recurrent::kX), wt});
  if (!AllZero(dir.xbias)) {
    OS_ASSIGN_OR_RETURN(Value * bias, e.Floats(dir.xbias, {gh}, "bias"));
    xw = e.rw().Op("Add", {xw, bias});
  }
  State state;
  if (Value* h0 = n.input(recurrent::kInitialH)) {
    OS_ASSIGN_OR_RETURN(state.h, e.Pick(h0, d, dir_axis));
  }
  StepWriter writer(e, plan, dir);
  const bool reads_state = state.h || s.seq > 1;
  OS_RETURN_IF_ERROR(writer.Prepare(reads_state));
  if (Value* c0 = n.input(recurrent::kInitialC); c0 && s.kind == RnnKind::kLstm) {
    OS_ASSIGN_OR_RETURN(state.c, e.Pick(c0, d, dir_axis));
  }
  if (s.kind == RnnKind::kLstm && state.h && !state.c) {
    OS_ASSIGN_OR_RETURN(state.c, e.Floats({0.0}, {}, "c0"));
  }
  // R^T whole, unless no step reads it (one step from a zero state; GRU with
  // linear_before_reset=0 reads its parts).
  Value* rt = nullptr;
  if (reads_state && !(s.kind == RnnKind::kGru && !plan.lbr)) {
    OS_ASSIGN_OR_RETURN(rt, e.Floats(dir.rt, {s.hidden, gh}, "R_t"));
  }
  const bool backward = s.reverse || d == 1;
  DirOutputs out;
  out.hs.assign(static_cast<size_t>(s.seq), nullptr);
  for (int64_t k = 0; k < s.seq; ++k) {
    const int64_t t = backward ? s.seq - 1 - k : k;
    OS_ASSIGN_OR_RETURN(Value * xt, e.Pick(xw, t, seq_axis));
    OS_ASSIGN_OR_RETURN(state, writer.Step(xt, state, rt));
    out.hs[static_cast<size_t>(t)] = state.h;
  }
  out.last = state;
  return out;
}

class UnrollRnnRule : public NodeRule<UnrollPlan> {
 public:
  UnrollRnnRule(std::string op, int64_t max_steps)
      : NodeRule(absl::StrCat("unroll-", absl::AsciiStrToLower(op)), op), max_steps_(max_steps) {}

 protected:
  Verdict<UnrollPlan> Check(Node* node, RewriteFacts&) const override { return Plan(*node, max_steps_); }

  Status Replace(Node* node, UnrollPlan plan, Rewriter& rw) const override {
    const RnnShape& s = plan.shape;
    recurrent::Emitter e(rw, node->graph()->OpsetVersion(""), s.type);
    std::vector<DirOutputs> dirs;
    for (int64_t d = 0; d < s.dirs; ++d) {
      OS_ASSIGN_OR_RETURN(DirOutputs o, UnrollDirection(e, *node, plan, d));
      dirs.push_back(std::move(o));
    }
    // Y: [seq, dirs, batch, H] (layout 0) or [batch, seq, dirs, H] (layout 1), each
    // direction's steps concatenated and reshaped; Y_h, Y_c: [dirs, batch, H] or [batch, dirs, H].
    const int64_t h = s.hidden;
    const int64_t dir_axis = s.layout == 0 ? 0 : 1;
    std::vector<Value*> outs(node->num_outputs(), nullptr);
    auto join = [&](std::vector<Value*> parts, int64_t axis) {
      return parts.size() == 1 ? parts[0] : rw.Op("Concat", std::move(parts), {Rewriter::AttrInt("axis", axis)});
    };
    if (s.used[0]) {
      std::vector<Value*> ys;
      for (const DirOutputs& d : dirs) {
        Value* all = join(d.hs, s.layout == 0 ? 0 : 1);
        ys.push_back(s.layout == 0 ? e.Reshape(all, {s.seq, 1, -1, h}) : e.Reshape(all, {-1, s.seq, 1, h}));
      }
      outs[0] = join(ys, s.layout == 0 ? 1 : 2);
    }
    for (size_t k = 1; k <= 2 && k < outs.size(); ++k) {
      if (!s.used[k]) continue;
      std::vector<Value*> parts;
      for (const DirOutputs& d : dirs) {
        Value* v = k == 1 ? d.last.h : d.last.c;
        parts.push_back(s.layout == 0 ? e.Reshape(v, {1, -1, h}) : e.Reshape(v, {-1, 1, h}));
      }
      outs[k] = join(parts, dir_axis);
    }
    return rw.ReplaceNode(node, outs);
  }

 private:
  int64_t max_steps_;
};

class UnrollRnnPass : public PatternPass {
 public:
  explicit UnrollRnnPass(int64_t max_steps) {
    for (const char* op : {"LSTM", "GRU", "RNN"}) AddRule(std::make_unique<UnrollRnnRule>(op, max_steps));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    for (const char* op : {"LSTM", "GRU", "RNN"}) lowering::InferTypesIfNeeded(model, op);
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateUnrollRnnPass(const PassOptions& o) {
  return std::make_unique<UnrollRnnPass>(o.Int("max-steps"));
}

}  // namespace onnxsurgeon::passes

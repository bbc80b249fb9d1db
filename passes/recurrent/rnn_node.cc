#include "passes/recurrent/rnn_node.h"

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"

namespace onnxsurgeon::passes::recurrent {

int64_t GateCount(RnnKind kind) {
  switch (kind) {
    case RnnKind::kLstm: return 4;
    case RnnKind::kGru: return 3;
    case RnnKind::kRnn: return 1;
  }
  return 1;
}

std::vector<std::string> DefaultActivations(RnnKind kind) {
  switch (kind) {
    case RnnKind::kLstm: return {"Sigmoid", "Tanh", "Tanh"};
    case RnnKind::kGru: return {"Sigmoid", "Tanh"};
    case RnnKind::kRnn: return {"Tanh"};
  }
  return {};
}

Verdict<RnnShape> ReadRnn(const Node& node) {
  RnnShape s;
  if (!node.domain().empty() && node.domain() != "ai.onnx") return Refuse("not an ai.onnx op");
  if (node.op_type() == "LSTM") s.kind = RnnKind::kLstm;
  else if (node.op_type() == "GRU") s.kind = RnnKind::kGru;
  else if (node.op_type() == "RNN") s.kind = RnnKind::kRnn;
  else return Refuse("not an LSTM, GRU or RNN");
  s.gates = GateCount(s.kind);
  for (const Attribute& a : node.attributes())
    if (a.is_ref()) return Refuse(absl::StrCat("its attribute ", a.name(), " is a function attribute reference"));
  std::string direction = "forward";
  if (const Attribute* a = node.FindAttribute("direction")) direction = a->s();
  if (direction == "bidirectional") s.dirs = 2;
  else if (direction == "reverse") s.reverse = true;
  else if (direction != "forward") return Refuse(absl::StrCat("direction '", direction, "' is unknown"));
  if (const Attribute* a = node.FindAttribute("layout")) s.layout = a->i();
  if (s.layout != 0 && s.layout != 1) return Refuse(absl::StrCat("layout=", s.layout, " is neither 0 nor 1"));
  if (!node.input(kX) || !node.input(kW) || !node.input(kR)) return Refuse("it lacks X, W or R");
  auto w = GetConstantTypeAndDims(node.input(kW));
  auto r = GetConstantTypeAndDims(node.input(kR));
  if (!w || !r) return Refuse("its weights W and R are computed at run time");
  if (w->second.size() != 3 || r->second.size() != 3) return Refuse("its W or R is not of rank 3");
  s.hidden = r->second[2];
  s.input = w->second[2];
  if (const Attribute* a = node.FindAttribute("hidden_size"); a && a->i() != s.hidden)
    return Refuse(absl::StrCat("hidden_size=", a->i(), " but R is ", r->second[1], "x", s.hidden));
  if (w->second[0] != s.dirs || r->second[0] != s.dirs || w->second[1] != s.gates * s.hidden ||
      r->second[1] != s.gates * s.hidden)
    return Refuse("its W or R does not have the shape its direction and hidden size give");
  std::optional<Shape> x = ShapeOf(node.input(kX));
  if (!x) return Refuse("the shape of its X is unknown (run infer-shapes first)");
  const std::vector<int64_t> dims = DimsOrMinusOne(*x);
  if (dims.size() != 3) return Refuse(absl::StrCat("its X has rank ", dims.size(), ", not 3"));
  s.seq = dims[s.layout == 0 ? 0 : 1];
  s.batch = dims[s.layout == 0 ? 1 : 0];
  s.type = ElementType(node.input(kX));
  for (size_t i = 0; i < 3; ++i)
    s.used.push_back(i < node.num_outputs() && node.output(i) && node.output(i)->HasUsers());
  return s;
}

bool SequenceLensAreFull(const Node& node, int64_t seq, std::string* why) {
  const Value* lens = node.input(kSeqLens);
  if (!lens) return true;
  std::optional<std::vector<int64_t>> values = ConstantInt64s(lens);
  if (!values) return Refuse(why, "its sequence_lens is computed at run time");
  for (int64_t v : *values)
    if (v != seq) return Refuse(why, absl::StrCat("its sequence_lens holds ", v, ", not the sequence length ", seq));
  return true;
}

}  // namespace onnxsurgeon::passes::recurrent

// split-rnn-batch: writes an LSTM, GRU or RNN over a static batch B > 1 as B of the same
// node over one batch row each, their outputs concatenated on the batch axis, for runtimes
// that handle batch 1 only (nncase 1.9 refuses an LSTM over a batch above 1: 'Shape and
// data size don't match'; at batch 1 it matches, targets/probes/edge_models.py lstm_*).
//
// Exact: the rows of a batch never meet in these ops (every gate is per row), so each
// row's outputs are those of the node run on that row alone, with the same weights. X,
// sequence_lens, initial_h and initial_c are split on their batch axis (X: 1 for layout
// 0, 0 for layout 1; the states: 1 or 0; sequence_lens: 0); Y is joined on axis 2
// (layout 0) or 0, Y_h and Y_c on 1 or 0. Refused when the batch is not static or is 1,
// or above max-batch.
//
// Options:
//   max-batch=64   largest batch split into nodes
//
// Given:  %Y = LSTM<hidden_size=4>(%X, %W, %R)                 X: float[3,2,5]
// Result: %x0, %x1 = Split<axis=1>(%X, [1,1])
//         %y0 = LSTM<hidden_size=4>(%x0, %W, %R)   %y1 = LSTM<hidden_size=4>(%x1, %W, %R)
//         %Y = Concat<axis=2>(%y0, %y1)
#include "absl/strings/str_cat.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/recurrent/emit.h"
#include "passes/recurrent/rnn_node.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using recurrent::RnnShape;

class SplitRnnBatchRule : public NodeRule<RnnShape> {
 public:
  SplitRnnBatchRule(std::string op, int64_t max_batch)
      : NodeRule(absl::StrCat("split-batch-", op), op), max_batch_(max_batch) {}

 protected:
  Verdict<RnnShape> Check(Node* node, RewriteFacts&) const override {
    Verdict<RnnShape> s = recurrent::ReadRnn(*node);
    if (!s) return s;
    if (s->batch < 1) return Refuse("its batch is not static (set-input-shape first)");
    if (s->batch == 1) return Refuse("its batch is 1");
    if (s->batch > max_batch_) return Refuse(absl::StrCat("its batch ", s->batch, " exceeds max-batch=", max_batch_));
    return s;
  }

  Status Replace(Node* node, RnnShape s, Rewriter& rw) const override {
    recurrent::Emitter e(rw, node->graph()->OpsetVersion(""), s.type);
    const std::vector<int64_t> ones(static_cast<size_t>(s.batch), 1);
    const int64_t x_axis = s.layout == 0 ? 1 : 0;
    const int64_t state_axis = s.layout == 0 ? 1 : 0;
    // Per input: its B pieces, or empty where it is shared (weights) or absent.
    std::vector<std::vector<Value*>> pieces(node->num_inputs());
    for (size_t i = 0; i < node->num_inputs(); ++i) {
      Value* v = node->input(i);
      if (!v) continue;
      if (i == recurrent::kX) pieces[i] = e.Split(v, x_axis, ones);
      if (i == recurrent::kSeqLens) pieces[i] = e.Split(v, 0, ones);
      if (i == recurrent::kInitialH || i == recurrent::kInitialC) pieces[i] = e.Split(v, state_axis, ones);
    }
    std::vector<onnx::AttributeProto> attrs;
    for (const Attribute& a : node->attributes()) attrs.push_back(a.proto());
    std::vector<std::vector<Value*>> outs(node->num_outputs());
    for (int64_t b = 0; b < s.batch; ++b) {
      std::vector<Value*> inputs;
      for (size_t i = 0; i < node->num_inputs(); ++i)
        inputs.push_back(pieces[i].empty() ? node->input(i) : pieces[i][static_cast<size_t>(b)]);
      Node* row = rw.Create(node->op_type(), std::move(inputs), attrs, static_cast<int>(node->num_outputs()));
      for (size_t k = 0; k < node->num_outputs(); ++k) outs[k].push_back(row->output(k));
    }
    std::vector<Value*> joined(node->num_outputs(), nullptr);
    for (size_t k = 0; k < node->num_outputs(); ++k) {
      if (!node->output(k) || !node->output(k)->HasUsers()) continue;
      const int64_t axis = k == 0 ? (s.layout == 0 ? 2 : 0) : state_axis;
      joined[k] = rw.Op("Concat", outs[k], {Rewriter::AttrInt("axis", axis)});
    }
    return rw.ReplaceNode(node, joined);
  }

 private:
  int64_t max_batch_;
};

class SplitRnnBatchPass : public PatternPass {
 public:
  explicit SplitRnnBatchPass(int64_t max_batch) {
    for (const char* op : {"LSTM", "GRU", "RNN"}) AddRule(std::make_unique<SplitRnnBatchRule>(op, max_batch));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    for (const char* op : {"LSTM", "GRU", "RNN"}) lowering::InferTypesIfNeeded(model, op);
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateSplitRnnBatchPass(const PassOptions& o) {
  return std::make_unique<SplitRnnBatchPass>(o.Int("max-batch"));
}

}  // namespace onnxsurgeon::passes

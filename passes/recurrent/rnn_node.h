// What the recurrent passes (unroll-rnn, split-rnn-batch) read from an ONNX LSTM, GRU or
// RNN node: its kind, direction, layout, static sizes and which outputs are used, each
// checked with a reason when it cannot be read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/node.h"
#include "core/rewrite/rule.h"

namespace onnxsurgeon::passes::recurrent {

enum class RnnKind { kLstm, kGru, kRnn };

// The inputs by position, as in the ONNX schemas (P exists for LSTM only).
enum RnnInput { kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitialH = 5, kInitialC = 6, kP = 7 };

struct RnnShape {
  RnnKind kind = RnnKind::kLstm;
  int64_t gates = 4;     // weight blocks per direction: LSTM 4 (iofc), GRU 3 (zrh), RNN 1
  int64_t dirs = 1;      // 2 for bidirectional
  bool reverse = false;  // direction=reverse (one direction, run from the last step)
  int64_t layout = 0;    // 0: X is [seq, batch, input]; 1: [batch, seq, input]
  int64_t seq = -1;      // static sequence length, or -1
  int64_t batch = -1;    // static batch, or -1
  int64_t hidden = 0;
  int64_t input = 0;
  int32_t type = 0;        // element type of X
  std::vector<bool> used;  // per output (Y, Y_h, Y_c): read by a node or a graph output
};

// The gates of `kind` per direction, and its default activations.
int64_t GateCount(RnnKind kind);
std::vector<std::string> DefaultActivations(RnnKind kind);

// Reads `node` (an LSTM, GRU or RNN of the default domain): refuses when an attribute is
// a function reference, direction is unknown, W/R are not constants of the shapes the
// schema states, or X's rank is not 3. seq and batch may stay -1 (not static).
Verdict<RnnShape> ReadRnn(const Node& node);

// True when the constant sequence_lens is absent or every entry equals `seq`; else the
// reason in `why`.
bool SequenceLensAreFull(const Node& node, int64_t seq, std::string* why);

}  // namespace onnxsurgeon::passes::recurrent

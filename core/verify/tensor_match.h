// Which tensor of model B is which tensor of model A, for `compare`: the first tensor whose
// values drift is only found if tensors are paired across the rewrite that made B.
//
// Pairs are intermediate values of the main graphs (node outputs; Constant nodes' outputs
// are weights, not computed, and are left out), found in this order, each value paired at
// most once:
//   1. graph outputs, by name (they are the interface);
//   2. by name: the value exists in both (rules keep the names of what they replace at
//      graph outputs, and leave what they do not touch alone);
//   3. by provenance: a node of B a Rewriter made records the value of the original model
//      each output replaced (kReplacedKey, core/rewrite/rewriter.h);
//   4. at a changed region's boundary: a node both models hold (same name, op and arity)
//      reads the value the region hands on, renamed or not recorded (a hand edit, another
//      tool's rewrite): that input in A is that input in B.
// The pairs come in A's topological order, so the first one that differs is where the
// models part.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/model.h"

namespace onnxsurgeon {

struct TensorPair {
  std::string a, b;      // value names in A and in B
  std::string how;       // "output", "name", "provenance", "boundary"
  int64_t position = 0;  // A's producer's index in A's topological order
  std::string a_node, a_op, b_node, b_op;
  std::string b_rule;  // the rule that made B's producer (kProvenanceKey), "" when original
};

// Given two models whose main graphs are topologically sorted. Result the pairs, in A's
// order (graph outputs with their producers' place).
std::vector<TensorPair> MatchTensors(const Model& a, const Model& b);

// The rule recorded on a node (kProvenanceKey), "" when none.
std::string RuleOf(const Node& node);

}  // namespace onnxsurgeon

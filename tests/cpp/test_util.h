// Helpers for tests written as ONNX text.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/interop/onnx_interop.h"
#include "core/ir/model.h"

namespace onnxsurgeon::testing {

inline std::unique_ptr<Model> Parse(const std::string& text) {
  auto m = ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *std::move(m) : nullptr;
}

inline Node* FindNode(Graph& g, const std::string& name) {
  for (Node* n : g.nodes())
    if (n->name() == name) return n;
  return nullptr;
}

// Every use recorded on a value is matched by the node's input slot and vice versa.
inline void ExpectUseListsConsistent(const Graph& g) {
  for (Node* n : g.nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      Value* v = n->input(i);
      if (!v) continue;
      int count = 0;
      for (const Use& u : v->uses()) count += (u.node == n && u.input_index == static_cast<int>(i));
      EXPECT_EQ(count, 1) << "node " << n->name() << " input " << i;
    }
    for (Value* out : n->outputs()) {
      if (!out) continue;
      EXPECT_EQ(out->producer(), n);
      for (const Use& u : out->uses()) EXPECT_EQ(u.node->input(u.input_index), out);
    }
    for (Graph* sub : n->subgraphs()) ExpectUseListsConsistent(*sub);
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    bool found = false;
    for (const auto& o : g.outputs()[i]->graph_outputs())
      found |= (o.graph == &g && o.output_index == static_cast<int>(i));
    EXPECT_TRUE(found) << "graph output " << i;
  }
}

}  // namespace onnxsurgeon::testing

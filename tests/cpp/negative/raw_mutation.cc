// A pass-like translation unit: it holds a graph, a node and values, and changes them.
// Compiled once per RAW_MUTATION_CASE by tests/cpp/negative/CMakeLists.txt:
//   0  through the Rewriter: must compile (the control: the includes and flags are right)
//   1+ a raw IR mutation or a forged key: must NOT compile, with an error naming
//      MutationKey (core/ir/mutation_key.h); each case is its own ctest.
#include "core/ir/clone.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/rewrite/rewriter.h"

#ifndef RAW_MUTATION_CASE
#error "RAW_MUTATION_CASE is not set"
#endif

namespace onnxsurgeon {

void PassLike(Model& model, Node* n, Value* v, Value* w) {
  Graph& g = model.graph();
  Rewriter rw;
  rw.SetRule("negative-test");
  rw.SetInsertionPoint(n);
#if RAW_MUTATION_CASE == 0
  rw.SetInput(n, 0, v);
  rw.Op("Relu", {v});
  (void)rw.ReplaceAllUsesWith(v, w, GraphOutputs::kRefuse);
  (void)rw.EraseNode(n);
  (void)rw.AddGraphInput(&g, "x");
  rw.AddGraphOutput(&g, w);
#elif RAW_MUTATION_CASE == 1
  n->SetInput(0, v);  // a node's input rewired behind the Rewriter's back
#elif RAW_MUTATION_CASE == 2
  Value* in[] = {v};
  g.CreateNode("Relu", in, 1);  // a node without provenance
#elif RAW_MUTATION_CASE == 3
  (void)v->ReplaceAllUsesWith(w);  // uses moved without the listener
#elif RAW_MUTATION_CASE == 4
  MutationKey key;  // forging a key: its constructor is private
  n->SetInput(key, 0, v);
#elif RAW_MUTATION_CASE == 5
  n->SetInput({}, 0, v);  // nor can braces make one
#elif RAW_MUTATION_CASE == 6
  (void)g.AddInput("x");  // the graph's interface changed without the Rewriter
#elif RAW_MUTATION_CASE == 7
  ValueMap map;
  (void)CloneNode(*n, g, n, map);  // cloning: Rewriter::Clone
#else
#error "unknown RAW_MUTATION_CASE"
#endif
}

}  // namespace onnxsurgeon

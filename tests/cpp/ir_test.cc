// IR mutators keep use lists, names and order consistent.
#include <gtest/gtest.h>

#include "core/io/exporter.h"
#include "core/ir/shape.h"
#include "tests/cpp/ir_test_access.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {
using testing::ExpectUseListsConsistent;
using testing::FindNode;
using testing::Parse;

constexpr const char* kChain = R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[N,C] X) => (float[N,C] Y) {
  [a] A = Relu(X)
  [b] B = Neg(A)
  [c] Y = Add(A, B)
}
)";

TEST(Value, UsesAndProducer) {
  auto m = Parse(kChain);
  Graph& g = m->graph();
  Value* a = g.FindValue("A");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->producer(), FindNode(g, "a"));
  ASSERT_EQ(a->uses().size(), 2u);
  EXPECT_EQ(a->uses()[0].node, FindNode(g, "b"));
  EXPECT_EQ(a->uses()[1].node, FindNode(g, "c"));
  EXPECT_EQ(a->uses()[1].input_index, 0);
  EXPECT_TRUE(g.FindValue("Y")->IsGraphOutput());
  EXPECT_TRUE(g.FindValue("X")->IsGraphInput());
  ExpectUseListsConsistent(g);
}

TEST(Value, ReplaceAllUsesWithRewiresEveryUse) {
  auto m = Parse(kChain);
  Graph& g = m->graph();
  Value* a = g.FindValue("A");
  Value* x = g.FindValue("X");
  ASSERT_TRUE(a->ReplaceAllUsesWith(IrTestAccess::Key(), x).ok());
  EXPECT_TRUE(a->uses().empty());
  EXPECT_EQ(x->uses().size(), 3u);
  EXPECT_EQ(FindNode(g, "b")->input(0), x);
  EXPECT_EQ(FindNode(g, "c")->input(0), x);
  ExpectUseListsConsistent(g);
}

TEST(Value, ReplaceAllUsesWithRefusesGraphOutputsUnlessAsked) {
  auto m = Parse(kChain);
  Graph& g = m->graph();
  Value* y = g.FindValue("Y");
  Value* b = g.FindValue("B");
  Status s = y->ReplaceAllUsesWith(IrTestAccess::Key(), b);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("graph output"), std::string::npos);
  EXPECT_EQ(g.outputs()[0], y);  // nothing changed

  ASSERT_TRUE(y->ReplaceAllUsesWith(IrTestAccess::Key(), b, /*allow_graph_outputs=*/true).ok());
  EXPECT_EQ(g.outputs()[0], b);
  EXPECT_EQ(b->name(), "Y") << "the replacement keeps the model's output name";
  EXPECT_NE(y->name(), "Y");
  EXPECT_FALSE(y->IsGraphOutput());
  ExpectUseListsConsistent(g);
}

TEST(Graph, EraseNodeRefusesWhileUsed) {
  auto m = Parse(kChain);
  Graph& g = m->graph();
  Node* a = FindNode(g, "a");
  EXPECT_FALSE(g.EraseNode(IrTestAccess::Key(), a).ok());
  EXPECT_EQ(g.num_nodes(), 3u);
  // Make b dead, then erase it.
  Node* c = FindNode(g, "c");
  c->SetInput(IrTestAccess::Key(), 1, g.FindValue("A"));
  Node* b = FindNode(g, "b");
  ASSERT_TRUE(g.EraseNode(IrTestAccess::Key(), b).ok());
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.FindValue("B"), nullptr);
  EXPECT_EQ(g.FindValue("A")->uses().size(), 2u);
  ExpectUseListsConsistent(g);
}

TEST(Graph, CreateNodeInsertsAndNamesUniquely) {
  auto m = Parse(kChain);
  Graph& g = m->graph();
  Node* c = FindNode(g, "c");
  Value* x = g.FindValue("X");
  Value* inputs[] = {x};
  Node* n = g.CreateNode(IrTestAccess::Key(), "Relu", inputs, 1, "", c, "a");
  EXPECT_NE(n->name(), "a") << "node names are unique";
  EXPECT_EQ(n->next(), c);
  EXPECT_EQ(n->output(0)->producer(), n);
  EXPECT_EQ(x->uses().size(), 2u);
  Node* n2 = g.CreateNode(IrTestAccess::Key(), "Relu", inputs, 1);
  EXPECT_NE(n2->output(0)->name(), n->output(0)->name());
  EXPECT_EQ(g.last_node(), n2);
  ExpectUseListsConsistent(g);
}

TEST(Graph, TopologicalSortRestoresOrderStably) {
  auto m = Parse(kChain);
  Graph& g = m->graph();
  g.MoveBefore(IrTestAccess::Key(), FindNode(g, "c"), FindNode(g, "a"));  // c first: invalid order
  EXPECT_FALSE(g.IsTopologicallySorted());
  ASSERT_TRUE(g.TopologicalSort().ok());
  EXPECT_TRUE(g.IsTopologicallySorted());
  std::vector<std::string> order;
  for (Node* n : g.nodes()) order.push_back(n->name());
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Graph, SubgraphReadsOfOuterValuesAreUses) {
  auto m = Parse(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (bool cond, float[2] X) => (float[2] Y) {
  [r] R = Relu(X)
  [iff] Y = If(cond) <
    then_branch = t () => (float[2] T) { [tn] T = Neg(R) },
    else_branch = e () => (float[2] E) { [en] E = Abs(R) }
  >
}
)");
  Graph& g = m->graph();
  Value* r = g.FindValue("R");
  ASSERT_EQ(r->uses().size(), 2u);
  EXPECT_EQ(r->uses()[0].node->graph()->parent_node(), FindNode(g, "iff"));
  // Replacing R rewires the subgraph nodes too.
  ASSERT_TRUE(r->ReplaceAllUsesWith(IrTestAccess::Key(), g.FindValue("X")).ok());
  EXPECT_EQ(g.FindValue("X")->uses().size(), 3u);
  // The If can't move above R's replacement's producer... X is an input: any order works.
  ASSERT_TRUE(g.EraseNode(IrTestAccess::Key(), FindNode(g, "r")).ok());
  ExpectUseListsConsistent(g);
  // Erasing the If drops its subgraphs' uses of outer values.
  Node* iff = FindNode(g, "iff");
  ASSERT_TRUE(g.EraseNode(IrTestAccess::Key(), iff, /*force=*/true).ok());
  EXPECT_TRUE(g.FindValue("X")->uses().empty());
}

TEST(Graph, RemoveInputOfInitializerKeepsTensor) {
  auto m = Parse(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X, float[2] W) => (float[2] Y) <float[2] W = {1, 2}> {
  Y = Add(X, W)
}
)");
  Graph& g = m->graph();
  Value* w = g.FindValue("W");
  EXPECT_TRUE(w->IsGraphInput());
  EXPECT_TRUE(w->IsInitializer());
  ASSERT_TRUE(g.RemoveInput(IrTestAccess::Key(), w).ok());
  EXPECT_EQ(g.inputs().size(), 1u);
  EXPECT_TRUE(w->IsInitializer());
  EXPECT_FALSE(g.RemoveInitializer(IrTestAccess::Key(), w).ok()) << "still used by Add";
  EXPECT_FALSE(g.RemoveInput(IrTestAccess::Key(), g.FindValue("X")).ok()) << "still used";
}

TEST(Model, UniqueNamesNeverCollide) {
  auto m = Parse(kChain);
  std::set<std::string> seen = {"X", "A", "B", "Y", "a", "b", "c"};
  for (int i = 0; i < 100; ++i) {
    std::string n = m->UniqueName("A");
    EXPECT_TRUE(seen.insert(n).second) << n;
  }
}

TEST(Value, RenameFollowsEverywhere) {
  auto m = Parse(kChain);
  Graph& g = m->graph();
  ASSERT_TRUE(g.FindValue("A")->SetName("hidden").ok());
  EXPECT_FALSE(g.FindValue("B")->SetName("hidden").ok()) << "taken";
  onnx::ModelProto p = ExportModel(*m);
  EXPECT_EQ(p.graph().node(0).output(0), "hidden");
  EXPECT_EQ(p.graph().node(1).input(0), "hidden");
  EXPECT_EQ(p.graph().node(2).input(0), "hidden");
}

TEST(Node, RemoveInputShiftsUses) {
  auto m = Parse(kChain);
  Graph& g = m->graph();
  Node* c = FindNode(g, "c");
  c->RemoveInput(IrTestAccess::Key(), 0);
  EXPECT_EQ(c->num_inputs(), 1u);
  EXPECT_EQ(c->input(0), g.FindValue("B"));
  ASSERT_EQ(g.FindValue("B")->uses().size(), 1u);
  EXPECT_EQ(g.FindValue("B")->uses()[0].input_index, 0);
  ExpectUseListsConsistent(g);
}

TEST(Shape, StaticSymbolicAndUnknownDims) {
  auto m = Parse(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[N,4] X, float[N,4] Z, float[M,?] W) => (float[N,4] Y) <int64[2] s = {2, 3}> {
  c = Constant <value = float[1,5] {1, 2, 3, 4, 5}> ()
  Y = Add(X, Z)
}
)");
  Graph& g = m->graph();
  auto x = ShapeOf(g.FindValue("X")), z = ShapeOf(g.FindValue("Z")), w = ShapeOf(g.FindValue("W"));
  ASSERT_TRUE(x && z && w);
  EXPECT_EQ(ShapeToString(*x), "[N,4]");
  EXPECT_EQ(ShapeToString(*w), "[M,?]");
  // Two graph inputs declaring one dim_param are not thereby one size: runtimes do not
  // check it and real models break it (InputSymbol). X's own dims are equal to X's.
  EXPECT_EQ(ShapeToString(*z), "[N@Z,4]");
  EXPECT_FALSE(SameShape(*x, *z));
  EXPECT_TRUE(SameShape(*x, *ShapeOf(g.FindValue("X"))));
  EXPECT_FALSE(SameShape(*x, *w));
  EXPECT_FALSE((*w)[1].SameAs((*w)[1]));  // unknown dims are never provably equal
  EXPECT_EQ(StaticShapeOf(g.FindValue("s")), (std::vector<int64_t>{2}));
  EXPECT_EQ(StaticShapeOf(g.FindValue("c")), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(StaticShapeOf(g.FindValue("X")), std::nullopt);
  EXPECT_EQ(NumElements(ShapeOf(g.FindValue("c")).value()), 5);
  EXPECT_EQ(ShapeOf(g.FindValue("Y"))->size(), 2u);  // the graph output's declared type
}

}  // namespace
}  // namespace onnxsurgeon

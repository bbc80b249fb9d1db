// TypeFacts (core/analysis/type_facts.h), the one type and shape service, and the op
// table behind its local rules (core/shape/op_table.h).
#include <gtest/gtest.h>

#include "core/analysis/type_facts.h"
#include "core/eval/kernel.h"
#include "core/rewrite/facts.h"
#include "core/shape/op_table.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {

using onnx::TensorProto;

// Values named alike in sibling branches: `t` is int64 in one and float16 in the other, `r`
// of rank 3 in one and rank 2 in the other. Nothing is annotated inside the branches.
constexpr const char* kSiblings = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4] x, bool c) => (float[N,4] y) {
  a = If(c) <
    then_branch = t1 () => (ta) {
      t = Cast<to = 7>(x)  ax = Constant<value = int64[1] {0}>()  r = Unsqueeze(x, ax)  ta = Identity(x) },
    else_branch = e1 () => (ea) { t = Cast<to = 10>(x)  r = Transpose(x)  ea = Identity(x) }
  >
  y = Relu(x)
})";

Value* Named(Graph& g, const char* name) {
  for (Node* n : g.nodes())
    for (Value* v : n->outputs())
      if (v && v->name() == name) return v;
  return nullptr;
}

TEST(TypeFacts, SiblingBranchesAreDifferentValues) {
  auto m = testing::Parse(kSiblings);
  ASSERT_TRUE(m);
  Node* iff = nullptr;
  for (Node* n : m->graph().nodes())
    if (n->Is("If")) iff = n;
  ASSERT_TRUE(iff);
  Graph& then_branch = *iff->subgraphs()[0];
  Graph& else_branch = *iff->subgraphs()[1];
  TypeFacts facts(*m);
  EXPECT_EQ(facts.ElemType(Named(then_branch, "t")), TensorProto::INT64);
  EXPECT_EQ(facts.ElemType(Named(else_branch, "t")), TensorProto::FLOAT16);
  EXPECT_EQ(facts.Rank(Named(then_branch, "r")), 3);
  EXPECT_EQ(facts.Rank(Named(else_branch, "r")), 2);
  // Inferred up front (the converter's way), the branches stay apart too.
  TypeFacts inferred(*m, {.derive = false, .infer_up_front = true});
  EXPECT_EQ(inferred.ElemType(Named(then_branch, "t")), TensorProto::INT64);
  EXPECT_EQ(inferred.ElemType(Named(else_branch, "t")), TensorProto::FLOAT16);
  EXPECT_EQ(inferred.Dims(Named(then_branch, "r")), (std::vector<int64_t>{1, -1, 4}));
  EXPECT_EQ(inferred.Dims(Named(else_branch, "r")), (std::vector<int64_t>{4, -1}));
}

TEST(TypeFacts, DimsKeepSymbolsAndInitializersWin) {
  auto m = testing::Parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4] x) => (float[N,4] y) <float[4] w = {1, 2, 3, 4}> { y = Add(x, w) })");
  ASSERT_TRUE(m);
  TypeFacts facts(*m);
  auto x = facts.DimsOf(m->graph().FindValue("x"));
  ASSERT_TRUE(x);
  EXPECT_EQ(ShapeToString(*x), "[N,4]");
  EXPECT_EQ(facts.Dims(m->graph().FindValue("w")), (std::vector<int64_t>{4}));
  EXPECT_EQ(facts.ElemType(m->graph().FindValue("w")), TensorProto::FLOAT);
  EXPECT_TRUE(facts.ConstantValue(m->graph().FindValue("w")));
  EXPECT_FALSE(facts.ConstantValue(m->graph().FindValue("x")));
}

TEST(TypeFacts, SchemaInferenceTypesWhatAStepCreates) {
  auto m = testing::Parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[3,2] y) { y = Transpose(x) })");
  ASSERT_TRUE(m);
  TypeFacts facts(*m, {.derive = false, .infer_up_front = true});
  Rewriter rw(&facts);
  rw.SetInsertionPointAtEnd(&m->graph());
  Node* neg = rw.Create("Neg", {m->graph().FindValue("y")});
  EXPECT_EQ(facts.ElemType(neg->output(0)), 0);  // no derivation in this mode
  facts.InferBySchema(*neg, "", 17);
  EXPECT_EQ(facts.Dims(neg->output(0)), (std::vector<int64_t>{3, 2}));
  Node* id = rw.Create("Identity", {neg->output(0)});
  EXPECT_EQ(facts.Find(id->output(0)), nullptr);
  facts.Alias(neg->output(0), id->output(0));  // a copy, though the map grows while taking it
  EXPECT_EQ(facts.ElemType(id->output(0)), TensorProto::FLOAT);
}

// A fact that listens: RewriteFacts passes the driver's events on to it.
struct CountingFact : RewriteListener {
  explicit CountingFact(const Model&) {}
  void NodeCreated(Node*) override { ++created; }
  int created = 0;
};

TEST(TypeFacts, RewriteFactsPassEventsToFactsThatListen) {
  auto m = testing::Parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) { y = Relu(x) })");
  ASSERT_TRUE(m);
  RewriteFacts facts(*m);
  CountingFact& counting = facts.Get<CountingFact>();
  Rewriter rw(&facts);
  rw.SetInsertionPointAtEnd(&m->graph());
  rw.Create("Neg", {m->graph().FindValue("x")});
  EXPECT_EQ(counting.created, 1);
}

TEST(TypeFacts, NodesARewriteCreatesAreTypedByTheirRule) {
  auto m = testing::Parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y) { y = Relu(x) })");
  ASSERT_TRUE(m);
  RewriteFacts facts(*m);
  TypeFacts& types = facts.Get<TypeFacts>();
  EXPECT_EQ(types.Rank(m->graph().FindValue("y")), 2);  // the local rules ran: y is annotated anyway
  Rewriter rw(&facts);
  rw.SetInsertionPointAtEnd(&m->graph());
  Node* t = rw.Create("Transpose", {m->graph().FindValue("x")});
  Node* u = rw.Create("Unsqueeze", {t->output(0), rw.Int64s({0})});
  EXPECT_EQ(types.Dims(u->output(0)), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(types.ElemType(t->output(0)), TensorProto::FLOAT);
}

// The symbolic analysis is one of the service's questions, keyed by value like the others:
// `s` is Shape(x) in one branch and a constant in its sibling.
TEST(TypeFacts, SymbolicVectorsOfSiblingBranchesAreDifferentValues) {
  auto m = testing::Parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] x, bool c) => (int64[?] y) {
  y = If(c) <
    then_branch = t1 () => (s) { s = Shape(x) },
    else_branch = e1 () => (s) { s = Constant<value = int64[1] {7}>() }
  >
})");
  ASSERT_TRUE(m);
  Node* iff = *m->graph().nodes().begin();
  Value* then_s = Named(*iff->subgraphs()[0], "s");
  Value* else_s = Named(*iff->subgraphs()[1], "s");
  TypeFacts facts(*m);
  EXPECT_EQ(facts.Symbolic().Int64s(then_s), (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(facts.Symbolic().IsComputed(then_s));
  EXPECT_EQ(facts.Symbolic().Int64s(else_s), (std::vector<int64_t>{7}));
  EXPECT_FALSE(facts.Symbolic().IsComputed(else_s));
}

// The types set on the model's values that a rewrite may have made decidable are dropped
// below the nodes whose inputs it changed (the listener saw them); static ones and the
// values above stay.
TEST(TypeFacts, ForgetsTheModelsTypesBelowRewrites) {
  auto m = testing::Parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4] x) => (float[N,4] y) { a = Neg(x)  b = Abs(a)  c = Relu(a)  y = Add(b, c) })");
  ASSERT_TRUE(m);
  Graph& g = m->graph();
  auto set_type = [](Value* v, const char* dims) {
    auto* t = v->mutable_info()->mutable_type()->mutable_tensor_type();
    t->set_elem_type(TensorProto::FLOAT);
    for (const char* d = dims; *d; ++d) {
      if (*d == 'N') t->mutable_shape()->add_dim()->set_dim_param("N");
      else t->mutable_shape()->add_dim()->set_dim_value(*d - '0');
    }
  };
  set_type(g.FindValue("a"), "N4");
  set_type(g.FindValue("b"), "N4");
  set_type(g.FindValue("c"), "24");  // static: stays true under any rewrite
  RewriteFacts facts(*m);
  TypeFacts& types = facts.Get<TypeFacts>();
  EXPECT_EQ(types.ForgetBelowRewrites(), 0);
  Rewriter rw(&facts);
  Node* abs = g.FindValue("b")->producer();
  rw.SetInput(abs, 0, g.FindValue("x"));
  EXPECT_EQ(types.ForgetBelowRewrites(), 1);
  EXPECT_FALSE(g.FindValue("b")->has_type());  // below the rewrite
  EXPECT_TRUE(g.FindValue("a")->has_type());   // above it
  EXPECT_TRUE(g.FindValue("c")->has_type());
  EXPECT_TRUE(g.FindValue("y")->has_type());  // a graph output: declared
  EXPECT_EQ(types.ForgetBelowRewrites(), 0);  // nothing since
}

TEST(OpTable, OneEntryPerOpWithItsRules) {
  const shape_ops::OpRules* relu = shape_ops::FindOpRules("Relu");
  ASSERT_TRUE(relu);
  EXPECT_TRUE(relu->shape);
  EXPECT_FALSE(relu->symbolic);
  const shape_ops::OpRules* shape = shape_ops::FindOpRules("Shape");
  ASSERT_TRUE(shape);
  EXPECT_TRUE(shape->shape && shape->symbolic);
  EXPECT_TRUE(shape_ops::FindOpRules("Constant")->shape_reads_no_inputs);
  // Integer data (a Reshape target's -1) and computed shapes are columns of the same table.
  const shape_ops::OpRules* reshape = shape_ops::FindOpRules("Reshape");
  ASSERT_TRUE(reshape);
  EXPECT_TRUE(reshape->shape && reshape->symbolic && reshape->computed);
  EXPECT_FALSE(reshape->ints);
  EXPECT_TRUE(shape_ops::FindOpRules("Concat")->ints);
  EXPECT_TRUE(shape_ops::FindOpRules("ConstantOfShape")->computed);
  // Constant evaluation's kernels are keyed by the same op, in core/eval.
  EXPECT_TRUE(shape_ops::FindOpRules("Add"));
  EXPECT_NE(eval::FindKernel("Add", "", 18), nullptr);
  EXPECT_EQ(shape_ops::FindOpRules("NoSuchOp"), nullptr);
}

}  // namespace
}  // namespace onnxsurgeon

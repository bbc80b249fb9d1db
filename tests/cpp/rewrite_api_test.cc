// The rule API (core/rewrite/rule.h, facts.h) and the Rewriter's explicit operations.
#include <gtest/gtest.h>

#include "core/rewrite/greedy_driver.h"
#include "core/rewrite/rule.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {
using pattern::Match;
using pattern::Pattern;
using testing::Parse;

Node* FindOp(Model& m, const std::string& op) {
  for (Node* n : m.graph().nodes())
    if (n->op_type() == op) return n;
  return nullptr;
}

constexpr const char* kNegNeg = R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { a = Neg(X)  b = Neg(a)  Y = Relu(b) })";

struct NeverMade {};

TEST(RuleApi, CheckComputesThePlanOnceAndReplaceConsumesIt) {
  Pattern p("double-neg");
  int root = p.Op("Neg", {p.Op("Neg", {p.Any("x")})}).id();
  // The plan (x) reaches replace as the check computed it.
  int replaced_with_plan = -1;
  PatternRule<Value*> rule(
      "double-neg", std::move(p), root, [](const Match& m) -> Verdict<Value*> { return m.value("x"); },
      [&](const Match&, Value* x, Rewriter&) -> StatusOr<std::vector<Value*>> {
        replaced_with_plan = x->name() == "X";
        return std::vector<Value*>{x};
      });
  auto m = Parse(kNegNeg);
  auto counts = ApplyRulesGreedily(*m, {&rule});
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ((*counts)["double-neg"], 1);
  EXPECT_EQ(replaced_with_plan, 1);
  EXPECT_EQ(FindOp(*m, "Relu")->input(0)->name(), "X");
}

TEST(RuleApi, RefusalReasonReachesExplainAndNothingChanges) {
  Pattern p("double-neg");
  int root = p.Op("Neg", {p.Op("Neg", {p.Any("x")})}).id();
  PatternRule<> rule(
      "double-neg", std::move(p), root, [](const Match&) -> Verdict<> { return Refuse("x is not worth it"); },
      [](const Match& m, NoPlan, Rewriter&) -> StatusOr<std::vector<Value*>> {
        return std::vector<Value*>{m.value("x")};
      });
  auto m = Parse(kNegNeg);
  std::vector<std::string> reasons;
  GreedyOptions options;
  options.explain = [&](const std::string&, const Node&, const std::string& why) { reasons.push_back(why); };
  auto counts = ApplyRulesGreedily(*m, {&rule}, options);
  ASSERT_TRUE(counts.ok());
  EXPECT_TRUE(counts->empty());
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "x is not worth it"), reasons.end());
  EXPECT_EQ(m->graph().num_nodes(), 3u);
}

TEST(RuleApi, CheckErrorFailsThePassWithTheRuleAndNode) {
  Pattern p("bad");
  int root = p.Op("Relu", {p.Any("x")}).id();
  PatternRule<> rule(
      "bad", std::move(p), root,
      [](const Match&) -> Verdict<> { return absl::InvalidArgumentError("the model is broken here"); },
      [](const Match& m, NoPlan, Rewriter&) -> StatusOr<std::vector<Value*>> {
        return std::vector<Value*>{m.value("x")};
      });
  auto m = Parse(kNegNeg);
  auto counts = ApplyRulesGreedily(*m, {&rule});
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("rule 'bad'"), std::string::npos);
  EXPECT_NE(counts.status().message().find("the model is broken here"), std::string::npos);
}

// A fact seeded by the pass and a memo built on first use, both seen by every check.
struct Threshold {
  int value = 0;
};
struct Seen {
  int checks = 0;
};

class ReluRule : public NodeRule<> {
 public:
  ReluRule() : NodeRule("relu-if-allowed", "Relu") {}

 protected:
  Verdict<> Check(Node*, RewriteFacts& facts) const override {
    ++facts.Get<Seen>().checks;
    if (facts.Get<Threshold>().value < 1) return Refuse("not allowed by the pass");
    return Matched();
  }
  Status Replace(Node* relu, NoPlan, Rewriter& rw) const override { return rw.ReplaceNode(relu, {relu->input(0)}); }
};

TEST(RuleApi, FactsAreSharedByReferenceForOneRun) {
  ReluRule rule;
  auto m = Parse(kNegNeg);
  RewriteFacts facts(*m);
  facts.Emplace<Threshold>(0);
  auto counts = ApplyRulesGreedily(*m, {&rule}, facts);
  ASSERT_TRUE(counts.ok());
  EXPECT_TRUE(counts->empty());
  EXPECT_EQ(facts.Get<Seen>().checks, 1);
  facts.Emplace<Threshold>(1);
  counts = ApplyRulesGreedily(*m, {&rule}, facts);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)["relu-if-allowed"], 1);
  EXPECT_EQ(facts.Get<Seen>().checks, 2);
  EXPECT_EQ(facts.Find<NeverMade>(), nullptr);
}

TEST(Rewriter, ConstantsOfUnhandledTypesAreErrorsNotEmptyBytes) {
  auto m = Parse(kNegNeg);
  Rewriter rw;
  rw.SetRule("test");
  rw.SetInsertionPoint(m->graph().first_node());
  auto bad = rw.ScalarFloat(1.0f, onnx::TensorProto::INT32);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("element type 6"), std::string::npos);
  Tensor untyped;
  EXPECT_FALSE(rw.Constant(std::move(untyped)).ok());
  Rewriter nowhere;
  Tensor t;
  t.mutable_meta().set_data_type(onnx::TensorProto::FLOAT);
  t.SetRawBytes(std::string(4, '\0'));
  EXPECT_FALSE(nowhere.Constant(std::move(t)).ok());
  auto half = rw.ScalarFloat(1.0f, onnx::TensorProto::FLOAT16);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ((*half)->initializer()->raw_bytes().size(), 2u);
}

TEST(Rewriter, GraphOutputReplacementIsExplicit) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { a = Neg(X)  Y = Neg(a) })");
  Rewriter rw;
  rw.SetRule("test");
  Value* y = m->graph().outputs()[0];
  rw.SetInsertionPoint(y->producer());
  Status refused = rw.ReplaceAllUsesWith(y, m->graph().inputs()[0], GraphOutputs::kRefuse);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("graph output"), std::string::npos);
  EXPECT_EQ(m->graph().outputs()[0], y) << "a refusal changes nothing";
  // X is a graph input and cannot be renamed: an Identity keeps the name Y.
  ASSERT_TRUE(rw.ReplaceAllUsesWith(y, m->graph().inputs()[0], GraphOutputs::kKeepNames).ok());
  EXPECT_EQ(m->graph().outputs()[0]->name(), "Y");
  EXPECT_EQ(m->graph().outputs()[0]->producer()->op_type(), "Identity");
}

TEST(Rewriter, InsertAfterRoutesEveryUseThroughTheNewNodeAndStampsIt) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { a = Neg(X)  Y = Relu(a) })");
  Rewriter rw;
  rw.SetRule("opset/test");
  Value* a = FindOp(*m, "Neg")->output(0);
  auto inserted = rw.InsertAfter(a, "Abs", {a});
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  Node* abs = *inserted;
  EXPECT_EQ(abs->prev(), a->producer());
  ASSERT_EQ(a->uses().size(), 1u);
  EXPECT_EQ(a->uses()[0].node, abs);
  EXPECT_EQ(FindOp(*m, "Relu")->input(0), abs->output(0));
  ASSERT_EQ(abs->proto().metadata_props_size(), 1);
  EXPECT_EQ(abs->proto().metadata_props(0).value(), "opset/test");
  testing::ExpectUseListsConsistent(m->graph());
}

// What the listener (the greedy driver) hears from the operations passes used to do raw.
struct Recorder : RewriteListener {
  std::vector<std::string> events;
  void NodeCreated(Node* n) override { events.push_back("created " + n->op_type()); }
  void NodeErased(Node* n) override { events.push_back("erased " + n->op_type()); }
  void NodeModified(Node* n) override { events.push_back("modified " + n->op_type()); }
  void UseRemoved(Value* v) override { events.push_back("use-removed " + v->name()); }
};

TEST(Rewriter, InterfaceAndEraseOperationsTellTheListener) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { a = Neg(X)  Y = Relu(a) })");
  Graph& g = m->graph();
  Recorder rec;
  Rewriter rw(&rec);
  rw.SetRule("test");
  Value* a = FindOp(*m, "Neg")->output(0);
  Value* y = g.outputs()[0];
  rw.SetGraphOutput(&g, 0, a);  // Y lost its only user
  EXPECT_EQ(g.outputs()[0], a);
  EXPECT_EQ(rec.events, (std::vector<std::string>{"use-removed Y"}));
  rec.events.clear();
  ASSERT_TRUE(rw.EraseNode(y->producer()).ok());
  EXPECT_EQ(rec.events, (std::vector<std::string>{"erased Relu", "use-removed a"}));
  rw.AddGraphOutput(&g, g.inputs()[0]);
  rw.RemoveGraphOutput(&g, 1);
  EXPECT_EQ(rec.events.back(), "use-removed X");
  auto w = rw.AddGraphInput(&g, "W");
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE((*w)->IsGraphInput());
  EXPECT_FALSE(rw.AddGraphInput(&g, "W").ok()) << "the name is taken";
  ASSERT_TRUE(rw.RemoveGraphInput(*w).ok());
  Tensor t;
  t.mutable_meta().set_data_type(onnx::TensorProto::FLOAT);
  t.SetRawBytes(std::string(4, '\0'));
  auto init = rw.AddInitializer(&g, "w0", std::move(t));
  ASSERT_TRUE(init.ok());
  EXPECT_EQ((*init)->name(), "w0") << "exactly the name asked for";
  ASSERT_TRUE(rw.RemoveInitializer(*init).ok());
  // Erasing a node whose output is still read leaves the read dangling for the caller.
  rec.events.clear();
  Node* neg = FindOp(*m, "Neg");
  ASSERT_TRUE(rw.EraseNodeLeavingUses(neg).ok());
  EXPECT_EQ(rec.events, (std::vector<std::string>{"erased Neg", "use-removed X"}));
  EXPECT_EQ(g.num_nodes(), 0u);
}

TEST(Rewriter, DropOutputsRebuildsTheNodeKeepingNameAndMetadata) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 12]>
g (float[N] X) => (float[N] Y) { [drop] Y, mask = Dropout(X)  })");
  Node* dropout = FindOp(*m, "Dropout");
  auto* meta = dropout->mutable_proto().add_metadata_props();
  meta->set_key("origin");
  meta->set_value("model");
  Recorder rec;
  Rewriter rw(&rec);
  rw.SetRule("opset/test");
  auto fresh = rw.DropOutputs(dropout, 1);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ((*fresh)->name(), "drop");
  EXPECT_EQ((*fresh)->num_outputs(), 1u);
  EXPECT_EQ((*fresh)->output(0)->name(), "Y");
  EXPECT_EQ(m->graph().outputs()[0], (*fresh)->output(0));
  ASSERT_EQ((*fresh)->proto().metadata_props_size(), 1) << "the node's own metadata, no new provenance";
  EXPECT_EQ((*fresh)->proto().metadata_props(0).key(), "origin");
  EXPECT_EQ(rec.events, (std::vector<std::string>{"erased Dropout", "created Dropout"}));
  EXPECT_EQ(m->graph().num_nodes(), 1u);
  testing::ExpectUseListsConsistent(m->graph());
  // An output still read cannot be dropped; nothing changes.
  auto m2 = Parse(R"(<ir_version: 10, opset_import: ["" : 12]>
g (float[N] X) => (float[N] Y, bool[N] M) { Y, M = Dropout(X) })");
  Node* d2 = FindOp(*m2, "Dropout");
  EXPECT_FALSE(rw.DropOutputs(d2, 1).ok());
  EXPECT_EQ(FindOp(*m2, "Dropout"), d2);
  EXPECT_EQ(d2->num_outputs(), 2u);
}

TEST(Rewriter, CloneKeepsTheSourceNodeAndTellsTheListener) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { [n] a = Neg(X)  Y = Relu(a) })");
  Node* neg = FindOp(*m, "Neg");
  Recorder rec;
  Rewriter rw(&rec);
  rw.SetRule("test");
  rw.SetInsertionPoint(neg);
  ValueMap map{{neg->input(0), neg->input(0)}};
  auto clone = rw.Clone(*neg, map, "copy/");
  ASSERT_TRUE(clone.ok()) << clone.status();
  EXPECT_EQ((*clone)->next(), neg);
  EXPECT_EQ((*clone)->name(), "copy/n");
  EXPECT_EQ((*clone)->proto().metadata_props_size(), 0) << "a clone is the source's node, not the rule's";
  EXPECT_EQ(map.at(neg->output(0)), (*clone)->output(0));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"created Neg"}));
  testing::ExpectUseListsConsistent(m->graph());
}

}  // namespace
}  // namespace onnxsurgeon

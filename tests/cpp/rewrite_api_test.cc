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

}  // namespace
}  // namespace onnxsurgeon

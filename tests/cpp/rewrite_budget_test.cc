// The greedy driver's clean stop after N rewrites (RewriteBudget, for bisect) and the
// Rewriter's record of the values a node it made replaced (kReplacedKey, for compare).
#include <gtest/gtest.h>

#include "core/pass/pass_manager.h"
#include "core/pass/pipeline.h"
#include "core/rewrite/greedy_driver.h"
#include "core/rewrite/rule.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {
using pattern::Match;
using pattern::Pattern;
using testing::Parse;

// Neg(x) -> Mul(x, -1): one rewrite per Neg, each making one node.
std::unique_ptr<PatternRule<>> NegToMul() {
  Pattern p("neg-to-mul");
  int root = p.Op("Neg", {p.Any("x")}).id();
  return std::make_unique<PatternRule<>>(
      "neg-to-mul", std::move(p), root, [](const Match&) -> Verdict<> { return NoPlan{}; },
      [](const Match& m, NoPlan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
        OS_ASSIGN_OR_RETURN(Value * minus_one, rw.ScalarFloat(-1.0f));
        return std::vector<Value*>{rw.Op("Mul", {m.value("x"), minus_one})};
      });
}

constexpr const char* kThreeNegs = R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { a = Neg(X)  b = Neg(a)  c = Neg(b)  Y = Relu(c) })";

int Count(const Model& m, const std::string& op) {
  int n = 0;
  for (Node* node : m.graph().nodes()) n += node->op_type() == op;
  return n;
}

TEST(RewriteBudget, DriverStopsCleanlyAfterNRewrites) {
  auto rule = NegToMul();
  for (int64_t n : {0, 1, 2, 3, 10}) {
    auto m = Parse(kThreeNegs);
    RewriteBudget budget(n);
    GreedyOptions options;
    options.budget = &budget;
    auto counts = ApplyRulesGreedily(*m, {rule.get()}, options);
    ASSERT_TRUE(counts.ok()) << counts.status();  // a stop, not an error (max_rewrites is one)
    const int64_t done = std::min<int64_t>(n, 3);
    EXPECT_EQ(budget.spent(), done);
    EXPECT_EQ(Count(*m, "Mul"), done) << "after " << n;
    EXPECT_EQ(Count(*m, "Neg"), 3 - done) << "after " << n;
    testing::ExpectUseListsConsistent(m->graph());
    EXPECT_TRUE(CheckModel(*m, /*full_check=*/true).ok());
  }
}

TEST(RewriteBudget, RecordsTheLastStepAndIsDeterministic) {
  auto rule = NegToMul();
  std::string first_root;
  for (int run = 0; run < 3; ++run) {
    auto m = Parse(kThreeNegs);
    RewriteBudget budget(2);
    GreedyOptions options;
    options.budget = &budget;
    ASSERT_TRUE(ApplyRulesGreedily(*m, {rule.get()}, options).ok());
    EXPECT_EQ(budget.last().rule, "neg-to-mul");
    ASSERT_FALSE(budget.last().nodes.empty());
    EXPECT_EQ(budget.last().nodes[0], budget.last().root);
    ASSERT_EQ(budget.last().outputs.size(), budget.last().nodes.size());
    EXPECT_TRUE(budget.last().outputs[0] == "a" || budget.last().outputs[0] == "b" || budget.last().outputs[0] == "c");
    if (run == 0) first_root = budget.last().root;
    EXPECT_EQ(budget.last().root, first_root);
  }
}

TEST(RewriteBudget, PipelineSpendsOneStepForAPassWithoutRules) {
  // dce has no rules: a change it makes is one step named after it, and a spent budget
  // skips the passes after it.
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { dead = Relu(X)  a = Neg(X)  Y = Neg(a) })");
  auto pipeline = ParsePipeline("dce,fold-constants");
  ASSERT_TRUE(pipeline.ok());
  RewriteBudget budget(1);
  PassManagerOptions options;
  options.context.budget = &budget;
  ASSERT_TRUE(RunPipeline(*m, *pipeline, options).ok());
  EXPECT_EQ(budget.spent(), 1);
  EXPECT_EQ(budget.last().rule, "dce");
}

TEST(RewriteBudget, FoldConstantsAndCseStepOneNodeAtATime) {
  // Two duplicate Relu pairs for cse; two foldable Adds for fold-constants.
  constexpr const char* kText = R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y, float[2] Z) <float[2] c = {1.0, 2.0}> {
  r1 = Relu(X)  r2 = Relu(X)  n1 = Neg(X)  n2 = Neg(X)  s1 = Add(r1, r2)  s2 = Add(n1, n2)  Y = Add(s1, s2)
  k1 = Add(c, c)  Z = Add(k1, c)
})";
  for (const char* pass : {"cse", "fold-constants"}) {
    auto m = Parse(kText);
    auto pipeline = ParsePipeline(pass);
    ASSERT_TRUE(pipeline.ok());
    RewriteBudget budget(1);
    PassManagerOptions options;
    options.context.budget = &budget;
    int before = static_cast<int>(m->graph().num_nodes());
    ASSERT_TRUE(RunPipeline(*m, *pipeline, options).ok()) << pass;
    EXPECT_EQ(budget.spent(), 1) << pass;
    EXPECT_EQ(budget.last().rule, pass);
    ASSERT_FALSE(budget.last().outputs.empty()) << pass;  // unnamed nodes: found by output
    EXPECT_FALSE(budget.last().outputs[0].empty()) << pass;
    EXPECT_EQ(static_cast<int>(m->graph().num_nodes()), before - 1) << pass << ": one node merged or folded";
    RewriteBudget all;
    auto whole = Parse(kText);
    options.context.budget = &all;
    ASSERT_TRUE(RunPipeline(*whole, *pipeline, options).ok());
    EXPECT_EQ(all.spent(), 2) << pass;
  }
}

TEST(Provenance, NodesRecordTheValuesTheyReplaced) {
  auto rule = NegToMul();
  auto m = Parse(kThreeNegs);
  ASSERT_TRUE(ApplyRulesGreedily(*m, {rule.get()}).ok());
  // Each Mul stands for the Neg output it replaced; names kept by the rewrite and names
  // recorded agree.
  std::set<std::string> replaced;
  for (Node* n : m->graph().nodes()) {
    if (n->op_type() != "Mul") continue;
    auto record = ReplacedValues(*n);
    ASSERT_EQ(record.size(), 1u) << n->name();
    EXPECT_EQ(record[0].first, 0);
    replaced.insert(record[0].second);
  }
  EXPECT_EQ(replaced, (std::set<std::string>{"a", "b", "c"}));
}

TEST(Provenance, ChainsOfRewritesNameTheOriginalValue) {
  // Neg -> Mul by one rule, then Mul(x, -1) -> Sub(0, x) by another: the Sub records the
  // Neg's output, not the intermediate Mul's.
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { a = Neg(X)  Y = Relu(a) })");
  Pattern p("mul-to-sub");
  int root = p.Op("Mul", {p.Any("x"), p.Any("c")}).id();
  PatternRule<> mul_to_sub(
      "mul-to-sub", std::move(p), root, [](const Match&) -> Verdict<> { return NoPlan{}; },
      [](const Match& match, NoPlan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
        OS_ASSIGN_OR_RETURN(Value * zero, rw.ScalarFloat(0.0f));
        return std::vector<Value*>{rw.Op("Sub", {zero, match.value("x")})};
      });
  auto neg_to_mul = NegToMul();
  ASSERT_TRUE(ApplyRulesGreedily(*m, {neg_to_mul.get()}).ok());
  // The Mul took the name 'a' (kKeepNames); rename it so the chain is visible by record only.
  for (Node* n : m->graph().nodes())
    if (n->op_type() == "Mul") ASSERT_TRUE(n->output(0)->SetName("renamed").ok());
  ASSERT_TRUE(ApplyRulesGreedily(*m, {&mul_to_sub}).ok());
  Node* sub = nullptr;
  for (Node* n : m->graph().nodes())
    if (n->op_type() == "Sub") sub = n;
  ASSERT_NE(sub, nullptr);
  auto record = ReplacedValues(*sub);
  ASSERT_EQ(record.size(), 1u);
  EXPECT_EQ(record[0].second, "a");
}

}  // namespace
}  // namespace onnxsurgeon

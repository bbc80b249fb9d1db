// The pattern matcher, rewriter and greedy driver on small ONNX-text graphs.
#include <gtest/gtest.h>

#include "core/io/exporter.h"
#include "core/rewrite/greedy_driver.h"
#include "core/rewrite/rule.h"
#include "tests/cpp/canonical.h"
#include "tests/cpp/ir_test_access.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {
using pattern::Match;
using pattern::Matcher;
using pattern::Pattern;
using pattern::ValueRef;
using testing::FindNode;
using testing::Parse;

std::string Canon(const Model& m) { return testing::CanonicalText(ExportModel(m)); }

// x * 1 -> x, written once, matching either operand order.
std::unique_ptr<RewriteRule> MulByOne(bool commutative = true) {
  Pattern p("mul-by-one");
  ValueRef x = p.Any("x");
  auto mul = p.Op("Mul", {x, p.ScalarNear("one", 1.0)});
  if (commutative) mul.Commutative();
  int root = mul.id();
  return std::make_unique<PatternRule<>>(
      "mul-by-one", std::move(p), root,
      [](const Match& m, Rewriter&) -> StatusOr<std::vector<Value*>> { return std::vector<Value*>{m.value("x")}; });
}

StatusOr<std::map<std::string, int64_t>> Apply(Model& m, const std::vector<const RewriteRule*>& rules,
                                               GreedyOptions options = {}) {
  return ApplyRulesGreedily(m, rules, options);
}

TEST(Matcher, CommutativeOperandsMatchEitherOrder) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y, float[N] Z) <float one = {1.0}> {
  a = Mul(X, one)
  b = Mul(one, X)
  Y = Relu(a)
  Z = Relu(b)
})");
  auto rule = MulByOne();
  auto counts = Apply(*m, {rule.get()});
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ((*counts)["mul-by-one"], 2);
  EXPECT_EQ(Canon(*m), Canon(*Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y, float[N] Z) { Y = Relu(X)  Z = Relu(X) })")));
}

TEST(Driver, ErasesWhatItsRewritesLeftDeadAndNothingElse) {
  // `one` (an initializer) and the Constant `k` lose their last users to the rewrites and
  // go; the dead Neg and the unused initializer `spare` were dead before and stay (dce's job).
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) <float one = {1.0}, float spare = {3.0}> {
  k = Constant <value = float {1.0}> ()
  a = Mul(X, one)
  b = Mul(k, a)
  dead = Neg(X)
  Y = Relu(b)
})");
  auto rule = MulByOne();
  auto counts = Apply(*m, {rule.get()});
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ((*counts)["mul-by-one"], 2);
  EXPECT_EQ(Canon(*m), Canon(*Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) <float spare = {3.0}> { dead = Neg(X)  Y = Relu(X) })")));
}

TEST(Matcher, NonCommutativeOrderIsRespectedAndExplained) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) <float one = {1.0}> { a = Mul(one, X)  Y = Relu(a) })");
  Pattern p;
  ValueRef x = p.Any("x");
  int root = p.Op("Mul", {x, p.ScalarNear("one", 1.0)}).id();
  Matcher matcher(p, root);
  Match match;
  Node* mul = m->graph().first_node();
  EXPECT_FALSE(matcher.MatchAt(mul, match, /*explain=*/true));
  EXPECT_NE(matcher.Explanation().find("'X' is not a constant"), std::string::npos) << matcher.Explanation();
}

TEST(Matcher, WrongConstantIsRefusedWithReason) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) <float two = {2.0}> { Y = Mul(X, two) })");
  auto rule = MulByOne();
  std::vector<std::string> misses;
  GreedyOptions options;
  options.explain = [&](const std::string& r, const Node&, const std::string& why) { misses.push_back(why); };
  auto counts = Apply(*m, {rule.get()}, options);
  ASSERT_TRUE(counts.ok());
  EXPECT_TRUE(counts->empty());
  ASSERT_EQ(misses.size(), 1u);
  EXPECT_NE(misses[0].find("constant is 2, wants 1"), std::string::npos) << misses[0];
}

TEST(Matcher, AlternativesAndSharedValues) {
  // variance(d) = Mul(d, d) | Pow(d, 2): the same d on both sides.
  Pattern p;
  ValueRef x = p.Any("x");
  ValueRef sq = p.Or({p.Op("Mul", {x, x}), p.Op("Pow", {x, p.ScalarNear("two", 2.0)})});
  int root = p.Op("ReduceMean", {sq}).id();
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 17]>
g (float[N,4] X, float[N,4] W) => (float[N,1] A, float[N,1] B, float[N,1] C) <float two = {2.0}> {
  m1 = Mul(X, X)
  A = ReduceMean <axes = [-1]> (m1)
  p2 = Pow(X, two)
  B = ReduceMean <axes = [-1]> (p2)
  m3 = Mul(X, W)
  C = ReduceMean <axes = [-1]> (m3)
})");
  Matcher matcher(p, root);
  Match match;
  Graph& g = m->graph();
  std::vector<Node*> means;
  for (Node* n : g.nodes())
    if (n->op_type() == "ReduceMean") means.push_back(n);
  ASSERT_EQ(means.size(), 3u);
  EXPECT_TRUE(matcher.MatchAt(means[0], match));
  EXPECT_EQ(match.value("x")->name(), "X");
  EXPECT_TRUE(matcher.MatchAt(means[1], match));
  EXPECT_EQ(match.scalar("two"), 2.0);
  EXPECT_FALSE(matcher.MatchAt(means[2], match, true)) << "Mul(X, W) is not a square";
  EXPECT_NE(matcher.Explanation().find("two different values"), std::string::npos) << matcher.Explanation();
}

TEST(Matcher, OptionalNodeViaAlternative) {
  // An optional Cast: Relu(Cast(x)) or Relu(x).
  Pattern p;
  ValueRef x = p.Any("x");
  ValueRef maybe_cast = p.Or({p.Op("Cast", {x}), x});
  int root = p.Op("Relu", {maybe_cast}).id();
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] A, float[N] B) { c = Cast <to = 1> (X)  A = Relu(c)  B = Relu(X) })");
  Matcher matcher(p, root);
  Match match;
  Node* first = FindNode(m->graph(), "");
  (void)first;
  int matched = 0;
  for (Node* n : m->graph().nodes()) {
    if (n->op_type() != "Relu") continue;
    ASSERT_TRUE(matcher.MatchAt(n, match));
    EXPECT_EQ(match.value("x")->name(), "X");
    ++matched;
  }
  EXPECT_EQ(matched, 2);
}

TEST(Matcher, IntermediateUsedOutsideTheMatchIsRefused) {
  Pattern p;
  ValueRef x = p.Any("x");
  auto inner = p.Op("Neg", {x});
  int root = p.Op("Neg", {inner}).id();
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y, float[N] Z) { a = Neg(X)  Y = Neg(a)  Z = Abs(a) })");
  Node* root_node = m->graph().first_node()->next();
  Matcher matcher(p, root);
  Match match;
  EXPECT_FALSE(matcher.MatchAt(root_node, match, true));
  EXPECT_NE(matcher.Explanation().find("outside the match"), std::string::npos) << matcher.Explanation();

  Pattern q;
  ValueRef y = q.Any("x");
  auto inner2 = q.Op("Neg", {y});
  inner2.AllowExternalUses();
  int root2 = q.Op("Neg", {inner2}).id();
  Matcher allowed(q, root2);
  EXPECT_TRUE(allowed.MatchAt(root_node, match));
}

TEST(Matcher, AttributePredicatesAndCaptures) {
  Pattern p;
  auto soft = p.Op("Softmax", {p.Any("x")});
  soft.AttrInt("axis", -1, /*default=*/-1).CaptureAttr("axis", "axis_attr").Capture("softmax");
  Matcher matcher(p, soft.id());
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N,4] X) => (float[N,4] A, float[N,4] B, float[N,4] C) {
  A = Softmax(X)
  B = Softmax <axis: int = -1> (X)
  C = Softmax <axis: int = 0> (X)
})");
  std::vector<bool> got;
  Match match;
  for (Node* n : m->graph().nodes()) got.push_back(matcher.MatchAt(n, match, true));
  EXPECT_EQ(got, (std::vector<bool>{true, true, false}));
  EXPECT_NE(matcher.Explanation().find("attribute 'axis'"), std::string::npos) << matcher.Explanation();
  ASSERT_TRUE(matcher.MatchAt(m->graph().first_node()->next(), match));
  EXPECT_EQ(match.attr("axis_attr")->i(), -1);
  EXPECT_EQ(match.node("softmax")->name(), m->graph().first_node()->next()->name());
}

TEST(Matcher, OpsetRange) {
  Pattern p;
  auto mean = p.Op("ReduceMean", {p.Any("x")});
  mean.Opset(1, 17);
  auto m17 = Parse(R"(<ir_version: 10, opset_import: ["" : 17]>
g (float[N,4] X) => (float[N,1] Y) { Y = ReduceMean <axes = [-1]> (X) })");
  auto m18 = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N,4] X, int64[1] ax) => (float[N,1] Y) { Y = ReduceMean(X, ax) })");
  Matcher matcher(p, mean.id());
  Match match;
  EXPECT_TRUE(matcher.MatchAt(m17->graph().first_node(), match));
  EXPECT_FALSE(matcher.MatchAt(m18->graph().first_node(), match, true));
  EXPECT_NE(matcher.Explanation().find("opset 18"), std::string::npos);
}

TEST(Driver, RewritesInsideSubgraphsAndStampsProvenance) {
  // Neg(Neg(x)) -> Identity(x) inside an If branch.
  Pattern p("double-neg");
  ValueRef x = p.Any("x");
  int root = p.Op("Neg", {p.Op("Neg", {x})}).id();
  PatternRule<> rule("double-neg", std::move(p), root,
                     [](const Match& m, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
                       return std::vector<Value*>{rw.Op("Identity", {m.value("x")})};
                     });
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (bool c, float[2] X) => (float[2] Y) {
  Y = If(c) <
    then_branch = t () => (float[2] T) { a = Neg(X)  T = Neg(a) },
    else_branch = e () => (float[2] E) { E = Abs(X) }
  >
})");
  auto counts = Apply(*m, {&rule});
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)["double-neg"], 1);
  Graph* then_branch = m->graph().first_node()->subgraphs()[0];
  ASSERT_EQ(then_branch->num_nodes(), 1u);
  Node* id = then_branch->first_node();
  EXPECT_EQ(id->op_type(), "Identity");
  EXPECT_EQ(id->output(0)->name(), "T") << "the branch output keeps its name";
  // The rule that made it, and the value it stands for (the branch output it replaced).
  ASSERT_EQ(id->proto().metadata_props_size(), 2);
  EXPECT_EQ(id->proto().metadata_props(0).key(), kProvenanceKey);
  EXPECT_EQ(id->proto().metadata_props(0).value(), "double-neg");
  EXPECT_EQ(id->proto().metadata_props(1).key(), kReplacedKey);
  EXPECT_EQ(id->proto().metadata_props(1).value(), "0:T");
  EXPECT_NE(id->name().find("double-neg"), std::string::npos);
  testing::ExpectUseListsConsistent(m->graph());
}

TEST(Driver, ReachesAFixedPointThroughChains) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) <float one = {1.0}> {
  a = Mul(X, one)
  b = Mul(one, a)
  c = Mul(b, one)
  Y = Mul(c, one)
})");
  auto rule = MulByOne();
  auto counts = Apply(*m, {rule.get()});
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)["mul-by-one"], 4);
  // The output keeps its name: X is a graph input and cannot be renamed, so an Identity
  // carries the name Y.
  ASSERT_EQ(m->graph().outputs()[0]->name(), "Y");
  EXPECT_EQ(m->graph().outputs()[0]->producer()->op_type(), "Identity");
  EXPECT_EQ(m->graph().num_nodes(), 1u);
}

TEST(Driver, BenefitOrdersRulesOnTheSameRoot) {
  auto make = [](std::string name, std::string op, int benefit) {
    Pattern p(name);
    int root = p.Op("Relu", {p.Any("x")}).id();
    return std::make_unique<PatternRule<>>(
        name, std::move(p), root,
        [op](const Match& m, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          return std::vector<Value*>{rw.Op(op, {m.value("x")})};
        },
        benefit);
  };
  auto low = make("to-abs", "Abs", 1);
  auto high = make("to-neg", "Neg", 5);
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { r = Relu(X)  Y = Sigmoid(r) })");
  auto counts = Apply(*m, {low.get(), high.get()});
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)["to-neg"], 1);
  EXPECT_EQ(counts->count("to-abs"), 0u);
}

TEST(Driver, NonConvergingRulesFailClearly) {
  // Add(a, b) -> Add(b, a) forever.
  Pattern p("swap");
  int root = p.Op("Add", {p.Any("a"), p.Any("b")}).id();
  PatternRule<> swap("swap", std::move(p), root, [](const Match& m, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
    return std::vector<Value*>{rw.Op("Add", {m.value("b"), m.value("a")})};
  });
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X, float[N] W) => (float[N] Y) { s = Add(X, W)  Y = Relu(s) })");
  GreedyOptions options;
  options.max_rewrites = 50;
  auto counts = Apply(*m, {&swap}, options);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("did not converge"), std::string::npos);
}

}  // namespace
}  // namespace onnxsurgeon

namespace onnxsurgeon {
namespace {

TEST(Matcher, TypeAndRankPredicatesUseShapeInference) {
  // Relu(x) where x has rank 2: the rank is known only after shape inference.
  Pattern p;
  ValueRef x = p.Where(
      p.Any("x"),
      [](const Value* v, std::string* why) {
        const onnx::TypeProto* t = v->type();
        if (!t || !t->tensor_type().has_shape()) {
          if (why) *why = "rank unknown";
          return false;
        }
        return t->tensor_type().shape().dim_size() == 2;
      },
      "a rank-2 tensor");
  int root = p.Op("Relu", {x}).id();
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N,4] X, float[N,4,4] Z) => (float[N,4] Y, float[N,4,4] W) { a = Neg(X)  Y = Relu(a)  b = Neg(Z)  W = Relu(b) })");
  Node* relu2 = m->graph().first_node()->next();
  Node* relu3 = relu2->next()->next();
  Matcher matcher(p, root);
  Match match;
  EXPECT_FALSE(matcher.MatchAt(relu2, match, true));
  EXPECT_NE(matcher.Explanation().find("rank unknown"), std::string::npos) << matcher.Explanation();
  ASSERT_TRUE(InferShapes(*m).ok());
  EXPECT_TRUE(matcher.MatchAt(relu2, match));
  EXPECT_FALSE(matcher.MatchAt(relu3, match, true));
  EXPECT_NE(matcher.Explanation().find("not a rank-2 tensor"), std::string::npos) << matcher.Explanation();
}

TEST(UseLists, StayConsistentUnderHeavyRewiring) {
  // One value feeding many nodes, rewired and removed in an interleaved order: the O(1)
  // swap-removal must keep every (node, input) slot and use entry in agreement.
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X, float[N] Z) => (float[N] Y) { Y = Relu(X) })");
  Graph& g = m->graph();
  Value* x = g.inputs()[0];
  Value* z = g.inputs()[1];
  std::vector<Node*> nodes;
  for (int i = 0; i < 200; ++i) {
    Value* in[] = {x, z, x};
    nodes.push_back(g.CreateNode(IrTestAccess::Key(), "Sum", in, 1));
  }
  for (size_t i = 0; i < nodes.size(); i += 3) nodes[i]->SetInput(IrTestAccess::Key(), 0, z);
  for (size_t i = 1; i < nodes.size(); i += 4) nodes[i]->RemoveInput(IrTestAccess::Key(), 1);
  for (size_t i = 2; i < nodes.size(); i += 5) ASSERT_TRUE(g.EraseNode(IrTestAccess::Key(), nodes[i]).ok());
  testing::ExpectUseListsConsistent(g);
  size_t x_uses = 0;
  for (Node* n : g.nodes())
    for (Value* v : n->inputs()) x_uses += v == x;
  EXPECT_EQ(x->uses().size(), x_uses);
}

}  // namespace
}  // namespace onnxsurgeon

// Target profiles: every built-in profile parses and sources every fact; the parser
// refuses what a typo would otherwise turn into a silent default.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include "core/interop/onnx_interop.h"
#include "core/pass/pass.h"
#include "core/profile/profile.h"
#include "passes/registry.h"
#include "passes/targeting/check.h"
#include "passes/targeting/compiled_profile.h"

namespace onnxsurgeon::target {
namespace {

TEST(Profiles, EveryBuiltinProfileParses) {
  const auto& profiles = BuiltinProfiles();
  ASSERT_EQ(profiles.size(), 16u);
  for (const Profile& p : profiles) {
    EXPECT_GT(p.opset_max, 0) << p.name << ": " << p.title;
    EXPECT_FALSE(p.opset_source.empty()) << p.name;
    EXPECT_FALSE(p.custom_source.empty()) << p.name;
    for (const MissingOp& m : p.missing) EXPECT_FALSE(m.source.empty()) << p.name;
    auto compiled = LoadTarget(p.name);  // every `when` and `remedy` compiles
    EXPECT_TRUE(compiled.ok()) << p.name << ": " << compiled.status().message();
  }
}

constexpr const char* kMinimal = R"(name = "x"
title = "t"
versions = "v"
[opset]
min = 7
max = 13
source = "s"
[custom]
domains = false
functions = false
source = "s"
)";

TEST(Profiles, MinimalProfileTakesDefaults) {
  auto p = ParseProfile(kMinimal, "x.toml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->layernorm, Form::kOp);
  EXPECT_EQ(p->if_rule, IfRule::kAny);
  EXPECT_FALSE(p->static_shapes);
}

TEST(Profiles, UnknownKeyIsAnError) {
  auto p = ParseProfile(std::string(kMinimal) + "[shapes]\nstatik = true\nsource = \"s\"\n", "x.toml");
  ASSERT_FALSE(p.ok());
  // The misspelt key is named beside the one it should have been.
  EXPECT_NE(p.status().message().find("x.toml: shapes.static: missing (the table has: "), std::string::npos)
      << p.status().message();
  EXPECT_NE(p.status().message().find("statik"), std::string::npos) << p.status().message();
  auto q = ParseProfile(std::string(kMinimal) + "[shapes]\nstatic = true\nstatik = true\nsource = \"s\"\n", "x.toml");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("x.toml: shapes.statik: unknown key"), std::string::npos) << q.status().message();
}

TEST(Profiles, BlockWeightsKeepByDefaultFloatOnRequest) {
  const std::string q = "[quantization]\nqdq = \"consume\"\nsource = \"s\"\n";
  auto keep = ParseProfile(std::string(kMinimal) + q, "x.toml");
  ASSERT_TRUE(keep.ok()) << keep.status().message();
  EXPECT_FALSE(keep->float_block_weights);
  auto as_float = ParseProfile(std::string(kMinimal) + q + "block_weights = \"float\"\n", "x.toml");
  ASSERT_TRUE(as_float.ok()) << as_float.status().message();
  EXPECT_TRUE(as_float->float_block_weights);
  auto bad = ParseProfile(std::string(kMinimal) + q + "block_weights = \"int4\"\n", "x.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("(want keep or float)"), std::string::npos) << bad.status().message();
}

TEST(Profiles, FactWithoutSourceIsAnError) {
  auto p = ParseProfile(std::string(kMinimal) + "[erf]\nsupported = false\n", "x.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("erf.source: missing"), std::string::npos) << p.status().message();
}

TEST(Profiles, BadWhenIsAnError) {
  auto p = ParseTarget(std::string(kMinimal) + "[[missing]]\nops = [\"TopK\"]\nwhen = \"sometimes\"\nsource = \"s\"\n",
                       "x.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("missing[0].when"), std::string::npos) << p.status().message();
}

TEST(Profiles, SyntaxErrorNamesLine) {
  auto p = ParseProfile("name = \n", "bad.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("bad.toml:1:"), std::string::npos) << p.status().message();
}

TEST(Profiles, UnknownNameListsKnownOnes) {
  auto p = LoadProfile("nosuch");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("rknn2"), std::string::npos);
}

TEST(Check, MissingOpWhenAttributeIsNonDefault) {
  auto p = ParseTarget(
      std::string(kMinimal) + "[[missing]]\nops = [\"Resize\"]\nwhen = \"attribute:mode=cubic\"\nsource = \"doc\"\n",
      "x.toml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto cubic = ParseModelText(R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[1,1,2,2] X, float[4] S) => (float[1,1,4,4] Y) { R = Constant<value=float[0] {}>() Y = Resize<mode="cubic">(X, R, S) })");
  ASSERT_TRUE(cubic.ok()) << cubic.status().message();
  CheckReport r = CheckTarget(**cubic, *p);
  ASSERT_EQ(r.blockers.size(), 1u);
  EXPECT_EQ(r.blockers[0].reason, "Resize (mode=cubic)");
  EXPECT_EQ(r.blockers[0].source, "doc");
  auto nearest = ParseModelText(R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[1,1,2,2] X, float[4] S) => (float[1,1,4,4] Y) { R = Constant<value=float[0] {}>() Y = Resize<mode="nearest">(X, R, S) })");
  ASSERT_TRUE(nearest.ok());
  EXPECT_TRUE(CheckTarget(**nearest, *p).blockers.empty());
}

// Parses kMinimal plus `extra`, and a model text; the blockers CheckTarget finds.
std::vector<Finding> Blockers(const std::string& extra, const std::string& model_text) {
  auto p = ParseTarget(std::string(kMinimal) + extra, "x.toml");
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (!p.ok()) return {};
  auto m = ParseModelText(model_text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  return CheckTarget(**m, *p).blockers;
}

TEST(Check, InputConditionMatchesAGivenInput) {
  const std::string fact = "[[missing]]\nops = [\"ReduceSum\"]\nwhen = \"input:1\"\nsource = \"measured\"\n";
  auto with_axes = Blockers(fact, R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[2,8] X) => (float[2,1] Y) <int64[1] A = {-1}> { Y = ReduceSum(X, A) })");
  ASSERT_EQ(with_axes.size(), 1u);
  EXPECT_EQ(with_axes[0].reason, "ReduceSum (input 1 'A' is given)");
  // ReduceSum-13's axes came with opset 13: the fix converts to 12, inside 7..13.
  EXPECT_EQ(with_axes[0].step, FindPlanStep("convert-opset-before-form"));
  EXPECT_EQ(with_axes[0].fix, "convert-opset=12");
  EXPECT_TRUE(Blockers(fact, R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[2,8] X) => (float[] Y) { Y = ReduceSum<keepdims = 0>(X) })")
                  .empty());
  // Below the profile's opsets there is no earlier form to go to: named, not fixed.
  std::string min13 = kMinimal;
  min13.replace(min13.find("min = 7"), 7, "min = 13");
  auto p = ParseTarget(min13 + fact, "x.toml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto m = ParseModelText(R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[2,8] X) => (float[2,1] Y) <int64[1] A = {-1}> { Y = ReduceSum(X, A) })");
  ASSERT_TRUE(m.ok());
  auto r = CheckTarget(**m, *p);
  ASSERT_EQ(r.blockers.size(), 1u);
  EXPECT_EQ(r.blockers[0].step, nullptr);
  EXPECT_NE(r.blockers[0].fix.find("older than opset 13"), std::string::npos) << r.blockers[0].fix;
}

TEST(Check, ComputeDtypeMatchesEveryOpButConversions) {
  const std::string fact = "[[missing]]\nops = [\"*\"]\nwhen = \"compute-dtype:float16\"\nsource = \"measured\"\n";
  auto b = Blockers(fact, R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[4] X) => (float[4] Y) { H = Cast<to = 10>(X)  R = Relu(H)  Y = Cast<to = 1>(R) })");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].op, "Relu");
  EXPECT_EQ(b[0].reason, "Relu (computes 'R' in float16)");
  EXPECT_EQ(b[0].step, nullptr);
  EXPECT_NE(b[0].fact.find("lacks every op when compute-dtype:float16"), std::string::npos) << b[0].fact;
  EXPECT_TRUE(Blockers(fact, R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[4] X) => (float[4] Y) { Y = Relu(X) })")
                  .empty());
}

TEST(Profiles, EveryOpNeedsAWhenAndStandsAlone) {
  auto alone = ParseProfile(std::string(kMinimal) + "[[missing]]\nops = [\"*\"]\nsource = \"s\"\n", "x.toml");
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("missing[0].ops"), std::string::npos) << alone.status().message();
  auto mixed = ParseProfile(
      std::string(kMinimal) + "[[missing]]\nops = [\"*\", \"Relu\"]\nwhen = \"dtype:float16\"\nsource = \"s\"\n",
      "x.toml");
  ASSERT_FALSE(mixed.ok());
  auto bad_input = ParseTarget(
      std::string(kMinimal) + "[[missing]]\nops = [\"ReduceSum\"]\nwhen = \"input:x\"\nsource = \"s\"\n", "x.toml");
  ASSERT_FALSE(bad_input.ok());
  EXPECT_NE(bad_input.status().message().find("missing[0].when"), std::string::npos);
}

TEST(Check, ConstantScatterAfterGemm) {
  const std::string fact =
      "[[missing]]\nops = [\"ScatterND\"]\nwhen = \"constant-scatter-after-gemm\"\nsource = \"measured\"\n";
  auto after_gemm = Blockers(fact, R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[6,8] X, float[8,8] W, float[3,8] V) => (float[6,8] Y) <int64[3,1] R = {0, 2, 5}> {
  H = Gemm(X, W)
  Y = ScatterND(H, R, V)
})");
  ASSERT_EQ(after_gemm.size(), 1u);
  EXPECT_EQ(after_gemm[0].step, FindPlanStep("rewrite-constant-scatternd"));
  EXPECT_EQ(after_gemm[0].fix, "rewrite-constant-scatternd");
  // After MatMul, or with runtime indices, rknn builds it (measured): no blocker.
  EXPECT_TRUE(Blockers(fact, R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[6,8] X, float[8,8] W, float[3,8] V) => (float[6,8] Y) <int64[3,1] R = {0, 2, 5}> {
  H = MatMul(X, W)
  Y = ScatterND(H, R, V)
})")
                  .empty());
  EXPECT_TRUE(Blockers(fact, R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[6,8] X, float[8,8] W, float[3,8] V, int64[3,1] R) => (float[6,8] Y) {
  H = Gemm(X, W)
  Y = ScatterND(H, R, V)
})")
                  .empty());
}

TEST(Check, OutputCopiesAndConstants) {
  const std::string fact = "[outputs]\ncopies = false\nconstants = false\nsource = \"measured\"\n";
  auto copy = Blockers(fact, R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X) => (float[4] Y, float[4] Z) { Y = Relu(X)  T = Identity(Y)  Z = Identity(T) })");
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].reason, "graph output 'Z' is a copy of graph output 'Y'");
  EXPECT_EQ(copy[0].step, nullptr);
  auto constant = Blockers(fact, R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X) => (float[4] Y, float[1] C) { Y = Relu(X)  C = Constant<value = float[1] {1}>() })");
  ASSERT_EQ(constant.size(), 1u);
  EXPECT_EQ(constant[0].reason, "graph output 'C' is a constant");
  // A copy of a graph input is kept by the backend (measured): not a blocker.
  EXPECT_TRUE(Blockers(fact, R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X) => (float[4] Y, float[4] Z) { Y = Relu(X)  Z = Identity(X) })")
                  .empty());
  // Without the table, outputs are not checked.
  EXPECT_TRUE(Blockers("", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X) => (float[4] Y, float[4] Z) { Y = Relu(X)  Z = Identity(Y) })")
                  .empty());
}

TEST(Check, DimConditionNeedsAStaticDimAbove) {
  const std::string fact = "[[missing]]\nops = [\"LSTM\"]\nwhen = \"dim:0:1>1\"\nsource = \"measured\"\n";
  auto text = [](const std::string& batch) {
    return absl::StrCat(R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[5,)",
                        batch, R"(,6] X, float[1,32,6] W, float[1,32,8] R) => (float[5,1,)", batch, R"(,8] Y) {
  Y = LSTM<hidden_size = 8>(X, W, R)
})");
  };
  auto two = Blockers(fact, text("2"));
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].reason, "LSTM (input 0 'X' has dim 1 = 2)");
  EXPECT_TRUE(Blockers(fact, text("1")).empty());
  EXPECT_TRUE(Blockers(fact, text("N")).empty());  // not static: --input-shapes decides
  auto bad = ParseTarget(std::string(kMinimal) + "[[missing]]\nops = [\"LSTM\"]\nwhen = \"dim:0>1\"\nsource = \"s\"\n",
                         "x.toml");
  ASSERT_FALSE(bad.ok());
}

// check --target --probe --allow FACT: an allowed fact neither blocks nor asks for a step;
// the other facts still do.
TEST(Check, OpsetAboveTheTargetsIsConvertedUnlessANodeHasNoFormThere) {
  auto relu = Blockers("", R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { Y = Relu(X) })");
  ASSERT_EQ(relu.size(), 1u);
  EXPECT_EQ(relu[0].where, "model");
  EXPECT_EQ(relu[0].step, FindPlanStep("convert-opset"));
  // Col2Im exists from opset 18 only and has no decomposition: it is the blocker, named,
  // and the plan runs no conversion that would fail.
  auto col2im = Blockers("", R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[1,12,4] X) => (float[1,3,4,4] Y) <int64[2] S = {4, 4}, int64[2] B = {2, 2}> { Y = Col2Im<strides = [2, 2]>(X, S, B) })");
  ASSERT_EQ(col2im.size(), 1u);
  EXPECT_EQ(col2im[0].op, "Col2Im");
  EXPECT_EQ(col2im[0].fact, "x: ai.onnx opset 7..13");
  EXPECT_EQ(col2im[0].step, nullptr);
  EXPECT_NE(col2im[0].reason.find("the model imports ai.onnx opset 18; this node has no form at opset 13: Col2Im "
                                  "does not exist before opset 18"),
            std::string::npos)
      << col2im[0].reason;
}

TEST(Check, AllowedFactNeitherBlocksNorPlans) {
  auto p = ParseTarget(std::string(kMinimal) +
                           "[[missing]]\nops = [\"Erf\"]\nsource = \"measured\"\n"
                           "[[missing]]\nops = [\"Tanh\"]\nremedy = \"none\"\nsource = \"measured\"\n",
                       "x.toml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto m = ParseModelText(R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) { T = Tanh(X) Y = Erf(T) })");
  ASSERT_TRUE(m.ok()) << m.status().message();
  CheckOptions options;
  options.allowed_facts = {"lacks Erf"};
  CheckReport r = CheckTarget(**m, *p, options);
  ASSERT_EQ(r.blockers.size(), 1u);
  EXPECT_EQ(FactText(r.blockers[0], p->profile), "lacks Tanh");
  ASSERT_EQ(r.allowed.size(), 1u);
  EXPECT_EQ(r.allowed[0].op, "Erf");
  EXPECT_EQ(r.allowed[0].fact, "x: lacks Erf");
  options.allowed_facts = {"lacks Erf", "lacks Tanh"};
  EXPECT_TRUE(CheckTarget(**m, *p, options).blockers.empty());
  EXPECT_EQ(CheckTarget(**m, *p).blockers.size(), 2u);  // nothing allowed: both block
}

}  // namespace
}  // namespace onnxsurgeon::target

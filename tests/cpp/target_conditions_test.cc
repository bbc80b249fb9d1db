// The condition registry (passes/targeting/conditions): a test per condition kind (it holds
// where it should, with the detail the report prints, and not elsewhere), the load-time
// errors for an unknown condition or remedy (naming the file and the entry), and the plan
// step table of passes/passes.def (every step runs a pass of the table).
#include <gtest/gtest.h>

#include <set>

#include "core/interop/onnx_interop.h"
#include "core/pass/pass.h"
#include "passes/targeting/check.h"
#include "passes/targeting/compiled_profile.h"

namespace onnxsurgeon::target {
namespace {

constexpr const char* kMinimal = R"(name = "x"
title = "t"
versions = "v"
[opset]
min = 7
max = 21
source = "s"
[custom]
domains = false
functions = false
source = "s"
)";

std::string Fact(const std::string& ops, const std::string& when, const std::string& extra = "") {
  return std::string(kMinimal) + "[[missing]]\nops = [" + ops + "]\nwhen = \"" + when + "\"\n" + extra +
         "source = \"measured\"\n";
}

// The blocker's reasons when a profile of one fact checks the model text.
std::vector<std::string> Reasons(const std::string& profile, const std::string& model_text) {
  auto p = ParseTarget(profile, "x.toml");
  EXPECT_TRUE(p.ok()) << p.status().message();
  auto m = ParseModelText(model_text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!p.ok() || !m.ok()) return {"<error>"};
  std::vector<std::string> out;
  for (const Finding& f : CheckTarget(**m, *p).blockers) out.push_back(f.reason);
  return out;
}

using Strings = std::vector<std::string>;
constexpr const char* kHead13 = R"(<ir_version: 8, opset_import: ["" : 13]>
)";
constexpr const char* kHead17 = R"(<ir_version: 8, opset_import: ["" : 17]>
)";

TEST(Conditions, EveryBuiltinKindHasAParserAndADoc) {
  std::set<std::string> keywords;
  for (const ConditionKind* kind : ConditionKinds()) {
    EXPECT_TRUE(keywords.insert(std::string(kind->keyword)).second) << kind->keyword;
    EXPECT_FALSE(kind->grammar.empty()) << kind->keyword;
    EXPECT_FALSE(kind->doc.empty()) << kind->keyword;
    EXPECT_NE(kind->parse, nullptr) << kind->keyword;
    if (!kind->remedy.empty()) EXPECT_NE(FindPlanStep(kind->remedy), nullptr) << kind->keyword;
  }
  EXPECT_EQ(keywords.size(), 30u);
  EXPECT_NE(ConditionsText(true).find("- `outer-scope-input`: "), std::string::npos);
}

TEST(Conditions, UnknownConditionIsALoadErrorNamingFileAndEntry) {
  auto p = ParseTarget(std::string(kMinimal) + "[[missing]]\nops = [\"Relu\"]\nsource = \"s\"\n" +
                           "[[missing]]\nops = [\"TopK\"]\nwhen = \"sometimes\"\nsource = \"s\"\n",
                       "my/profile.toml");
  ASSERT_FALSE(p.ok());
  const std::string message(p.status().message());
  EXPECT_NE(message.find("my/profile.toml: missing[1].when: 'sometimes' is no condition"), std::string::npos)
      << message;
  EXPECT_NE(message.find("attribute:NAME"), std::string::npos) << message;  // the grammar, from the registry
  // A known kind with arguments it cannot parse names the entry too.
  auto bad_rank = ParseTarget(Fact("\"Relu\"", "rank>four"), "x.toml");
  ASSERT_FALSE(bad_rank.ok());
  EXPECT_NE(bad_rank.status().message().find("x.toml: missing[0].when: 'rank>'"), std::string::npos)
      << bad_rank.status().message();
  EXPECT_FALSE(ParseTarget(Fact("\"Relu\"", "dtype:"), "x.toml").ok());
  EXPECT_FALSE(ParseTarget(Fact("\"Relu\"", "dynamic-input:-1"), "x.toml").ok());
  EXPECT_FALSE(ParseTarget(Fact("\"Reshape\"", "inserts-unit-dims:x"), "x.toml").ok());
}

TEST(Conditions, RemedyIsDataAndAnUnknownOneIsALoadError) {
  const char* model = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,5] X, float[4,1,3] W) => (float[1,4,11] Y) { Y = ConvTranspose<group = 4, strides = [2]>(X, W) })";
  auto without = ParseTarget(Fact("\"ConvTranspose\"", "attribute:group"), "x.toml");
  ASSERT_TRUE(without.ok());
  auto m = ParseModelText(model);
  ASSERT_TRUE(m.ok());
  auto plain = CheckTarget(**m, *without).blockers;
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].step, nullptr);  // an attribute condition has no default remedy
  auto with =
      ParseTarget(Fact("\"ConvTranspose\"", "attribute:group", "remedy = \"split-grouped-convtranspose\"\n"), "x.toml");
  ASSERT_TRUE(with.ok()) << with.status().message();
  auto fixed = CheckTarget(**m, *with).blockers;
  ASSERT_EQ(fixed.size(), 1u);
  EXPECT_EQ(fixed[0].fix, "split-grouped-convtranspose");
  // remedy = "none" overrides a default (Erf is removed by rewrite-erf otherwise).
  auto none = ParseTarget(std::string(kMinimal) + "[[missing]]\nops = [\"Erf\"]\nremedy = \"none\"\nsource = \"s\"\n",
                          "x.toml");
  ASSERT_TRUE(none.ok());
  auto erf = ParseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X) => (float[4] Y) { Y = Erf(X) })");
  ASSERT_TRUE(erf.ok());
  EXPECT_EQ(CheckTarget(**erf, *none).blockers.at(0).step, nullptr);
  auto bad = ParseTarget(Fact("\"ConvTranspose\"", "attribute:group", "remedy = \"split-everything\"\n"), "y.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("y.toml: missing[0].remedy: 'split-everything' is no plan step"),
            std::string::npos)
      << bad.status().message();
}

TEST(PlanSteps, EveryStepRunsAPassOfTheTable) {
  std::set<std::string> names;
  for (const PlanStep& step : PlanSteps()) {
    EXPECT_TRUE(names.insert(std::string(step.name)).second) << step.name;
    EXPECT_NE(FindPass(std::string(step.pass)), nullptr) << step.name << " runs unknown pass " << step.pass;
    EXPECT_EQ(&PlanSteps()[step.order], &step);
  }
  EXPECT_LT(FindPlanStep("inline-functions")->order, FindPlanStep("convert-opset")->order);
  EXPECT_EQ(FindPlanStep("simplify")->repeat, Repeat::kRepeatable);
  EXPECT_EQ(FindPlanStep("convert-opset")->repeat, Repeat::kOnce);
}

// ---- one test per kind ----------------------------------------------------------------

TEST(ConditionKinds, Attribute) {
  const std::string model = std::string(kHead13) + R"(g (float[1,1,2,2] X, float[4] S) => (float[1,1,4,4] Y) {
  R = Constant<value=float[0] {}>()  Y = Resize<mode="cubic">(X, R, S) })";
  EXPECT_EQ(Reasons(Fact("\"Resize\"", "attribute:mode=cubic"), model), Strings{"Resize (mode=cubic)"});
  EXPECT_EQ(Reasons(Fact("\"Resize\"", "attribute:mode"), model), Strings{"Resize (mode=cubic)"});
  EXPECT_TRUE(Reasons(Fact("\"Resize\"", "attribute:mode=linear"), model).empty());
  // An absent attribute has its default: mode=nearest holds for a Resize that sets none.
  const std::string plain = std::string(kHead13) + R"(g (float[1,1,2,2] X, float[4] S) => (float[1,1,4,4] Y) {
  R = Constant<value=float[0] {}>()  Y = Resize(X, R, S) })";
  EXPECT_EQ(Reasons(Fact("\"Resize\"", "attribute:mode=nearest"), plain),
            Strings{"Resize (mode=nearest (the default))"});
}

TEST(ConditionKinds, Dtype) {
  const std::string model = std::string(kHead13) + "g (float16[4] X) => (float16[4] Y) { Y = Relu(X) }";
  EXPECT_EQ(Reasons(Fact("\"Relu\"", "dtype:float16"), model), Strings{"Relu ('X' is float16)"});
  EXPECT_TRUE(Reasons(Fact("\"Relu\"", "dtype:float"), model).empty());
}

TEST(ConditionKinds, ComputeDtype) {
  const std::string model = std::string(kHead13) +
                            "g (float[4] X) => (float[4] Y) { H = Cast<to = 10>(X)  R = Relu(H)  Y = Cast<to = 1>(R) }";
  EXPECT_EQ(Reasons(Fact("\"*\"", "compute-dtype:float16"), model), Strings{"Relu (computes 'R' in float16)"});
  // One op version: at opset 13 the fact at opset>=14 holds for nothing.
  EXPECT_TRUE(Reasons(Fact("\"Relu\"", "compute-dtype:float16,opset>=14"), model).empty());
  const std::string at14 = std::string(kHead13).replace(std::string(kHead13).find("13"), 2, "14") +
                           "g (float[4] X) => (float[4] Y) { H = Cast<to = 10>(X)  R = Relu(H)  Y = Cast<to = 1>(R) }";
  EXPECT_EQ(Reasons(Fact("\"Relu\"", "compute-dtype:float16,opset>=14"), at14),
            Strings{"Relu (computes 'R' in float16 at opset 14)"});
}

TEST(ConditionKinds, RankAboveAndBelow) {
  const std::string model = std::string(kHead13) + "g (float[1,2,3,4,5,6] X) => (float[1,2,3,4,5,6] Y) { Y = Relu(X) }";
  EXPECT_EQ(Reasons(Fact("\"Relu\"", "rank>5"), model), Strings{"Relu ('X' has rank 6)"});
  EXPECT_TRUE(Reasons(Fact("\"Relu\"", "rank>6"), model).empty());
  EXPECT_EQ(Reasons(Fact("\"Relu\"", "rank<7"), model), Strings{"Relu ('X' has rank 6)"});
  EXPECT_TRUE(Reasons(Fact("\"Relu\"", "rank<4"), model).empty());
}

TEST(ConditionKinds, Dim) {
  const std::string model = std::string(kHead13) + "g (float[3,2,4] X) => (float[3,2,4] Y) { Y = Relu(X) }";
  EXPECT_EQ(Reasons(Fact("\"Relu\"", "dim:0:1>1"), model), Strings{"Relu (input 0 'X' has dim 1 = 2)"});
  EXPECT_TRUE(Reasons(Fact("\"Relu\"", "dim:0:1>2"), model).empty());
}

TEST(ConditionKinds, InputAndDynamicInput) {
  const std::string model =
      std::string(kHead13) + "g (float[2,8] X, int64[1] A) => (float[2,1] Y) { Y = ReduceSum(X, A) }";
  EXPECT_EQ(Reasons(Fact("\"ReduceSum\"", "input:1"), model), Strings{"ReduceSum (input 1 'A' is given)"});
  EXPECT_EQ(Reasons(Fact("\"ReduceSum\"", "dynamic-input:1"), model),
            Strings{"ReduceSum (input 1 'A' is computed at run time)"});
  const std::string constant =
      std::string(kHead13) + "g (float[2,8] X) => (float[2,1] Y) <int64[1] A = {-1}> { Y = ReduceSum(X, A) }";
  EXPECT_TRUE(Reasons(Fact("\"ReduceSum\"", "dynamic-input:1"), constant).empty());
  EXPECT_TRUE(Reasons(Fact("\"ReduceSum\"", "input:2"), constant).empty());
}

TEST(ConditionKinds, Output) {
  // Dropout's mask (output 1) produced, or left out (an empty name).
  const std::string both =
      std::string(kHead13) + "g (float[2,8] X) => (float[2,8] Y, bool[2,8] M) { Y, M = Dropout(X) }";
  EXPECT_EQ(Reasons(Fact("\"Dropout\"", "output:1"), both), Strings{"Dropout (output 1 'M' is produced)"});
  const std::string one = std::string(kHead13) + "g (float[2,8] X) => (float[2,8] Y) { Y = Dropout(X) }";
  EXPECT_TRUE(Reasons(Fact("\"Dropout\"", "output:1"), one).empty());
  const std::string skipped =
      std::string(kHead17) +
      "g (float[2,8] X, float[8] S) => (float[2,8] Y, float[2,1] R) { Y, , R = LayerNormalization(X, S) }";
  EXPECT_TRUE(Reasons(Fact("\"LayerNormalization\"", "output:1"), skipped).empty());
  EXPECT_EQ(Reasons(Fact("\"LayerNormalization\"", "output:2"), skipped),
            Strings{"LayerNormalization (output 2 'R' is produced)"});
  EXPECT_FALSE(ParseTarget(Fact("\"Relu\"", "output:x"), "x.toml").ok());
}

TEST(ConditionKinds, UnknownRankOutputs) {
  const std::string model = std::string(kHead13) + R"(g (bool C, float[2] X) => (float[2] Y) {
  Y = If(C) <then_branch = t () => (Z) { Z = Relu(X) }, else_branch = e () => (W) { W = Neg(X) }> })";
  EXPECT_EQ(Reasons(Fact("\"If\"", "unknown-rank-branch-output"), model),
            Strings{"If (branch 't' output 'Z' has no known rank)"});
  EXPECT_EQ(Reasons(Fact("\"If\"", "unknown-rank-output"), model),
            Strings{"If (branch 't' output 'Z' has no known rank)"});
}

TEST(ConditionKinds, CastFrom) {
  const std::string model = std::string(kHead13) + "g (int64[4] X) => (float[4] Y) { Y = Cast<to = 1>(X) }";
  EXPECT_EQ(Reasons(Fact("\"Cast\"", "cast-from:int64"), model), Strings{"Cast ('X' int64 -> float)"});
  // Computed from shapes alone: converters fold it.
  const std::string shape =
      std::string(kHead13) + "g (float[4] X) => (float[1] Y) { S = Shape(X)  Y = Cast<to = 1>(S) }";
  EXPECT_TRUE(Reasons(Fact("\"Cast\"", "cast-from:int64"), shape).empty());
}

TEST(ConditionKinds, StepNotOne) {
  const std::string model = std::string(kHead13) + R"(g (float[8] X) => (float[4] Y)
  <int64[1] B = {0}, int64[1] E = {8}, int64[1] A = {0}, int64[1] S = {2}> { Y = Slice(X, B, E, A, S) })";
  EXPECT_EQ(Reasons(Fact("\"Slice\"", "step-not-one"), model), Strings{"Slice (steps 'S' = [2])"});
}

TEST(ConditionKinds, NegativeStep) {
  auto model = [](const char* step) {
    return std::string(kHead13) + R"(g (float[8] X) => (float[4] Y)
  <int64[1] B = {7}, int64[1] E = {0}, int64[1] A = {0}, int64[1] S = {)" +
           step + R"(}> { Y = Slice(X, B, E, A, S) })";
  };
  EXPECT_EQ(Reasons(Fact("\"Slice\"", "negative-step"), model("-2")), Strings{"Slice (steps 'S' = [-2])"});
  EXPECT_EQ(Reasons(Fact("\"Slice\"", "negative-step"), model("2")), Strings{});
}

TEST(ConditionKinds, StepNotOneExceptReversal) {
  auto model = [](const char* begin, const char* end, const char* step) {
    return std::string(kHead13) + R"(g (float[8] X) => (float[4] Y)
  <int64[1] B = {)" +
           begin + R"(}, int64[1] E = {)" + end + R"(}, int64[1] A = {0}, int64[1] S = {)" + step +
           R"(}> { Y = Slice(X, B, E, A, S) })";
  };
  const std::string fact = Fact("\"Slice\"", "step-not-one-except-reversal");
  // x[::-1] over the whole axis (from the end, or from 7, down past 0): allowed.
  EXPECT_EQ(Reasons(fact, model("-1", "-9223372036854775808", "-1")), Strings{});
  EXPECT_EQ(Reasons(fact, model("7", "-9", "-1")), Strings{});
  EXPECT_EQ(Reasons(fact, model("0", "8", "1")), Strings{});
  // Part of the axis reversed, or another step: named.
  EXPECT_EQ(Reasons(fact, model("7", "0", "-1")), Strings{"Slice (steps 'S' = [-1], not a whole-axis reversal)"});
  EXPECT_EQ(Reasons(fact, model("0", "8", "2")), Strings{"Slice (steps 'S' = [2])"});
  EXPECT_EQ(Reasons(fact, model("7", "-9", "-2")), Strings{"Slice (steps 'S' = [-2])"});
  // A Slice of shapes and constants alone (torch's reversed pad lists): folded, not named.
  const std::string pads = std::string(kHead13) + R"(g (float[1,3,8,8] X) => (int64[2] Y)
  <int64[1] B = {-1}, int64[1] E = {-9223372036854775808}, int64[1] A = {0}, int64[1] S = {-2}>
  { P = Shape(X)  Y = Slice(P, B, E, A, S) })";
  EXPECT_EQ(Reasons(fact, pads), Strings{});
}

TEST(ConditionKinds, InsertsUnitDims) {
  const std::string model =
      std::string(kHead13) + "g (float[2,8] X) => (float[2,1,1,8] Y) <int64[4] S = {2, 1, 1, 8}> { Y = Reshape(X, S) }";
  auto p = ParseTarget(Fact("\"Reshape\"", "inserts-unit-dims:4"), "x.toml");
  ASSERT_TRUE(p.ok());
  auto m = ParseModelText(model);
  ASSERT_TRUE(m.ok());
  auto b = CheckTarget(**m, *p).blockers;
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].reason, "Reshape ('X' [2,8] -> [2,1,1,8]: only unit dims inserted)");
  EXPECT_EQ(b[0].fix, "reshape-to-unsqueeze(min-rank=4)");  // the step reads the fact's N
  EXPECT_TRUE(Reasons(Fact("\"Reshape\"", "inserts-unit-dims:5"), model).empty());
}

TEST(ConditionKinds, MovesUnitDimsOnly) {
  const std::string model =
      std::string(kHead13) + "g (float[24,1,16] X) => (float[1,24,16] Y) { Y = Transpose<perm = [1, 0, 2]>(X) }";
  EXPECT_EQ(Reasons(Fact("\"Transpose\"", "moves-unit-dims-only"), model),
            Strings{"Transpose (moves only dims of size 1)"});
  const std::string real =
      std::string(kHead13) + "g (float[24,2,16] X) => (float[2,24,16] Y) { Y = Transpose<perm = [1, 0, 2]>(X) }";
  EXPECT_TRUE(Reasons(Fact("\"Transpose\"", "moves-unit-dims-only"), real).empty());
}

TEST(ConditionKinds, FlattenAxisNotOne) {
  const std::string model = std::string(kHead13) + "g (bool[1,5] X) => (bool[5,1] Y) { Y = Flatten<axis = 2>(X) }";
  EXPECT_EQ(Reasons(Fact("\"Flatten\"", "flatten-axis-not-one"), model), Strings{"Flatten (axis 2)"});
  const std::string one = std::string(kHead13) + "g (float[2,3,4] X) => (float[2,12] Y) { Y = Flatten(X) }";
  EXPECT_TRUE(Reasons(Fact("\"Flatten\"", "flatten-axis-not-one"), one).empty());
  const std::string minus = std::string(kHead13) + "g (float[2,3] X) => (float[2,3] Y) { Y = Flatten<axis = -1>(X) }";
  EXPECT_TRUE(Reasons(Fact("\"Flatten\"", "flatten-axis-not-one"), minus).empty());  // -1 of rank 2 is 1
}

TEST(ConditionKinds, NegativeConstantIndex) {
  const std::string model =
      std::string(kHead13) + "g (float[2,8,16] X) => (float[2,16] Y) <int64 K = {-1}> { Y = Gather<axis = 1>(X, K) }";
  EXPECT_EQ(Reasons(Fact("\"Gather\"", "negative-constant-index"), model), Strings{"Gather (constant index -1)"});
  const std::string pos =
      std::string(kHead13) + "g (float[2,8,16] X) => (float[2,16] Y) <int64 K = {7}> { Y = Gather<axis = 1>(X, K) }";
  EXPECT_TRUE(Reasons(Fact("\"Gather\"", "negative-constant-index"), pos).empty());
}

// The fix of the one blocker a profile of one fact finds in the model text.
std::string Fix(const std::string& profile, const std::string& model_text) {
  auto p = ParseTarget(profile, "x.toml");
  auto m = ParseModelText(model_text);
  if (!p.ok() || !m.ok()) return "<error>";
  auto blockers = CheckTarget(**m, *p).blockers;
  return blockers.size() == 1 ? blockers[0].fix : "<" + std::to_string(blockers.size()) + " blockers>";
}

// The remedy is the pass's own decision, dry-run: where flatten-to-reshape would refuse the
// node, the blocker stays with the pass's reason; where the check cannot know (dims it does
// not know while the inputs are static: the pass infers types first), the remedy is planned.
TEST(ConditionKinds, FlattenAxisNotOneAsksItsRemedy) {
  const std::string when = "flatten-axis-not-one";
  const std::string fixable =
      std::string(kHead13) + "g (float[n,3,4,5] X) => (float[?,?] Y) { Y = Flatten<axis = 2>(X) }";
  EXPECT_EQ(Fix(Fact("\"Flatten\"", when), fixable), "flatten-to-reshape");
  const std::string both_dynamic =
      std::string(kHead13) + "g (float[n,3,m,5] X) => (float[?,?] Y) { Y = Flatten<axis = 2>(X) }";
  EXPECT_EQ(
      Fix(Fact("\"Flatten\"", when), both_dynamic),
      "none: flatten-to-reshape refuses it: both sides hold dims of unknown size (a Reshape can leave one to -1)");
  const std::string zero = std::string(kHead13) + "g (float[0,3,4] X) => (float[0,4] Y) { Y = Flatten<axis = 2>(X) }";
  EXPECT_EQ(Fix(Fact("\"Flatten\"", when), zero),
            "none: flatten-to-reshape refuses it: a side of size 0 (a 0 in Reshape's shape copies a dim)");
  // Dims unknown to the check, static inputs: the pass's own inference decides.
  const std::string unknown = std::string(kHead13) +
                              "g (float[2,3,4] X, int64[3] S) => (float[?,?] Y) { R = Reshape(X, S)\n"
                              "Y = Flatten<axis = 2>(R) }";
  EXPECT_EQ(Fix(Fact("\"Flatten\"", when), unknown), "flatten-to-reshape");
}

TEST(ConditionKinds, NegativeConstantIndexAsksItsRemedy) {
  const std::string when = "negative-constant-index";
  const std::string fixable =
      std::string(kHead13) + "g (float[n,8,16] X) => (float[n,16] Y) <int64 K = {-1}> { Y = Gather<axis = 1>(X, K) }";
  EXPECT_EQ(Fix(Fact("\"Gather\"", when), fixable), "gather-nonnegative-indices");
  const std::string dynamic_axis =
      std::string(kHead13) + "g (float[2,n,16] X) => (float[2,16] Y) <int64 K = {-1}> { Y = Gather<axis = 1>(X, K) }";
  EXPECT_EQ(Fix(Fact("\"Gather\"", when), dynamic_axis),
            "none: gather-nonnegative-indices refuses it: the data's dim on the axis is not static");
  const std::string out_of_range =
      std::string(kHead13) + "g (float[2,8,16] X) => (float[2,16] Y) <int64 K = {-9}> { Y = Gather<axis = 1>(X, K) }";
  EXPECT_EQ(Fix(Fact("\"Gather\"", when), out_of_range),
            "none: gather-nonnegative-indices refuses it: index -9 is out of range for dim 8");
}

// x[t] of rank-3+ data: a scalar constant index on axis 0; other axes, vector indices and
// rank 2 are not the form.
TEST(ConditionKinds, DropsLeadingAxisAsksItsRemedy) {
  const std::string when = "drops-leading-axis";
  auto gather = [](const std::string& x, const std::string& y, const std::string& k, const std::string& axis) {
    return std::string(kHead13) + "g (float" + x + " X) => (float" + y + " Y) <" + k + "> { Y = Gather" + axis +
           "(X, K) }";
  };
  EXPECT_EQ(Fix(Fact("\"Gather\"", when), gather("[5,2,3]", "[2,3]", "int64 K = {0}", "<axis = 0>")),
            "gather-scalar-to-reshape");
  EXPECT_EQ(Fix(Fact("\"Gather\"", when), gather("[5,b,f]", "[b,f]", "int64 K = {0}", "")),
            "none: gather-scalar-to-reshape refuses it: more than one of the data's dims after axis 0 is not static");
  EXPECT_EQ(Fix(Fact("\"Gather\"", when), gather("[5,2,3]", "[5,3]", "int64 K = {0}", "<axis = 1>")), "<0 blockers>");
  EXPECT_EQ(Fix(Fact("\"Gather\"", when), gather("[5,2,3]", "[1,2,3]", "int64[1] K = {0}", "")), "<0 blockers>");
  EXPECT_EQ(Fix(Fact("\"Gather\"", when), gather("[5,3]", "[3]", "int64 K = {0}", "")), "<0 blockers>");
}

// Only a Concat with an input computed from an Add of two computed values (through any ops
// but a Conv) counts: onnx2tf got those wrong, Concats of inputs, Convs and a bias Add right.
TEST(ConditionKinds, ChannelAxisEqualsSpatial) {
  auto concat = [](const std::string& hw, const std::string& body) {
    return std::string(kHead13) + "g (float[2,8," + hw + "] A, float[2,8," + hw + "] B) => (float[2,16," + hw +
           "] Y) <float[1] C = {0.5}> {\n" + body + "\n}";
  };
  const std::string fact = Fact("\"Concat\"", "channel-axis-equals-spatial");
  auto reasons = Reasons(fact, concat("8,12", "S = Add(A, B)\nR = Relu(S)\nY = Concat<axis = 1>(R, B)"));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0], "Concat (axis 1 of 'B' [2,8,8,12] has the size of its axis 2, an input computed from an Add)");
  EXPECT_TRUE(Reasons(fact, concat("10,12", "S = Add(A, B)\nY = Concat<axis = 1>(S, B)")).empty());
  EXPECT_TRUE(Reasons(fact, concat("8,12", "Y = Concat<axis = 1>(A, B)")).empty());
  EXPECT_TRUE(Reasons(fact, concat("8,12", "S = Add(A, C)\nY = Concat<axis = 1>(S, B)")).empty());
  EXPECT_TRUE(Reasons(fact, concat("8,12", "S = Mul(A, B)\nY = Concat<axis = 1>(S, B)")).empty());
}

TEST(ConditionKinds, SquareNcwInput) {
  const std::string model =
      std::string(kHead13) + "g (float[2,32,32] X) => (float[64,32] Y) <int64[2] S = {-1, 32}> { Y = Reshape(X, S) }";
  EXPECT_EQ(Reasons(Fact("\"Reshape\"", "square-ncw-input"), model),
            Strings{"Reshape (input 'X' [2,32,32] is square in its last two axes, flattened to rank 2)"});
  const std::string unlike =
      std::string(kHead13) + "g (float[2,32,16] X) => (float[64,16] Y) <int64[2] S = {-1, 16}> { Y = Reshape(X, S) }";
  EXPECT_TRUE(Reasons(Fact("\"Reshape\"", "square-ncw-input"), unlike).empty());
}

TEST(ConditionKinds, MixedPrecisionLayerNorm) {
  const std::string model = std::string(kHead13) + R"(g (float16[2,8] H) => (float[2,8] D) {
  C = Cast<to = 1>(H)  M = ReduceMean<axes = [-1]>(C)  D = Sub(C, M) })";
  auto p = ParseTarget(Fact("\"ReduceMean\"", "mixed-precision-layernorm"), "x.toml");
  ASSERT_TRUE(p.ok());
  auto m = ParseModelText(model);
  ASSERT_TRUE(m.ok());
  auto b = CheckTarget(**m, *p).blockers;
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].reason, "ReduceMean (the mean of 'H' (float16) cast to float, subtracted by '<unnamed Sub>')");
  EXPECT_EQ(b[0].fix, "fix-layernorm");  // the kind's default remedy
  const std::string fp32 = std::string(kHead13) + R"(g (double[2,8] H) => (float[2,8] D) {
  C = Cast<to = 1>(H)  M = ReduceMean<axes = [-1]>(C)  D = Sub(C, M) })";
  EXPECT_TRUE(Reasons(Fact("\"ReduceMean\"", "mixed-precision-layernorm"), fp32).empty());
}

TEST(ConditionKinds, ChannelsFirstLayerNorm) {
  const std::string model = std::string(kHead13) + R"(g (float[2,8,4,4] X) => (float[2,8,4,4] D) {
  M = ReduceMean<axes = [1]>(X)  D = Sub(X, M) })";
  EXPECT_EQ(Reasons(Fact("\"ReduceMean\"", "channels-first-layernorm"), model),
            Strings{"ReduceMean (a LayerNorm over axes [1] of 'X', not its last axis)"});
  const std::string last = std::string(kHead13) + R"(g (float[2,8,4,4] X) => (float[2,8,4,4] D) {
  M = ReduceMean<axes = [-1]>(X)  D = Sub(X, M) })";
  EXPECT_TRUE(Reasons(Fact("\"ReduceMean\"", "channels-first-layernorm"), last).empty());
}

TEST(ConditionKinds, VectorMinuend) {
  const std::string model = std::string(kHead13) + "g (float[2,5,32] Y) => (float[2,5,32] D) <float[32] B = {" + [] {
    std::string v;
    for (int i = 0; i < 32; ++i) v += i ? ", 1" : "1";
    return v;
  }() + "}> { D = Sub(B, Y) }";
  EXPECT_EQ(Reasons(Fact("\"Sub\"", "vector-minuend"), model),
            Strings{"Sub (constant 'B' of rank 1 minus 'Y' of rank 3)"});
  const std::string swapped =
      std::string(kHead13) + "g (float[2,5,32] Y, float[32] B) => (float[2,5,32] D) { D = Sub(B, Y) }";
  EXPECT_TRUE(Reasons(Fact("\"Sub\"", "vector-minuend"), swapped).empty());  // B is not a constant
}

TEST(ConditionKinds, ConstantScatterAfterGemm) {
  const std::string model = std::string(kHead13) + R"(g (float[6,8] X, float[8,8] W, float[3,8] V) => (float[6,8] Y)
  <int64[3,1] R = {0, 2, 5}> { H = Gemm(X, W)  Y = ScatterND(H, R, V) })";
  EXPECT_EQ(Reasons(Fact("\"ScatterND\"", "constant-scatter-after-gemm"), model),
            Strings{"ScatterND (constant indices 'R', data computed by Gemm '<unnamed Gemm>')"});
}

TEST(ConditionKinds, OuterScopeInput) {
  const std::string model = std::string(kHead17) + R"(g (float[2] X, int64 N, bool C) => (float[2] Y) {
  Y = Loop(N, C, X) <body = b (int64 i, bool c, float[2] h) => (bool co, float[2] ho) { co = Identity(c)  ho = Add(h, X) }> })";
  auto p = ParseTarget(Fact("\"Loop\", \"If\"", "outer-scope-input"), "x.toml");
  ASSERT_TRUE(p.ok());
  auto m = ParseModelText(model);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto b = CheckTarget(**m, *p).blockers;
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].reason, "Loop (its body reads 'X' of the enclosing graph)");
  EXPECT_EQ(b[0].fix, "loop-carry-outer-values");  // the kind's remedy, on a Loop
  const std::string own = std::string(kHead17) + R"(g (float[2] X, int64 N, bool C) => (float[2] Y) {
  Y = Loop(N, C, X) <body = b (int64 i, bool c, float[2] h) => (bool co, float[2] ho) { co = Identity(c)  ho = Neg(h) }> })";
  EXPECT_TRUE(Reasons(Fact("\"Loop\"", "outer-scope-input"), own).empty());
}

TEST(ConditionKinds, PoolKernelExceedsInput) {
  const std::string model = std::string(kHead13) +
                            "g (float[1,8,2,2] X) => (float[1,8,1,1] Y) { Y = AveragePool<kernel_shape = [320, 320], "
                            "strides = [320, 320], ceil_mode = 1>(X) }";
  auto p = ParseTarget(Fact("\"AveragePool\"", "pool-kernel-exceeds-input"), "x.toml");
  ASSERT_TRUE(p.ok());
  auto m = ParseModelText(model);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto b = CheckTarget(**m, *p).blockers;
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].reason, "AveragePool (kernel 320 over 2 on axis 2)");
  EXPECT_EQ(b[0].fix, "pool-to-global");
  const std::string padded = std::string(kHead13) +
                             "g (float[1,4,2,2] X) => (float[1,4,1,1] Y) { Y = AveragePool<kernel_shape = [3, 3], "
                             "pads = [1, 1, 0, 0]>(X) }";
  EXPECT_TRUE(Reasons(Fact("\"AveragePool\"", "pool-kernel-exceeds-input"), padded).empty());
  const std::string equal =
      std::string(kHead13) + "g (float[1,4,3,3] X) => (float[1,4,1,1] Y) { Y = AveragePool<kernel_shape = [3, 3]>(X) }";
  EXPECT_TRUE(Reasons(Fact("\"AveragePool\"", "pool-kernel-exceeds-input"), equal).empty());
}

TEST(ConditionKinds, LoopPassthroughCarried) {
  const std::string model = std::string(kHead13) + R"(g (float[2] X, float[2] W, int64 N, bool C) => (float[2] Y) {
  Y, WF = Loop(N, C, X, W) <body = b (int64 i, bool c, float[2] h, float[2] w) => (bool co, float[2] ho, float[2] w) {
    co = Identity(c)  ho = Add(h, w) }> })";
  auto p = ParseTarget(Fact("\"Loop\"", "loop-passthrough-carried"), "x.toml");
  ASSERT_TRUE(p.ok());
  auto m = ParseModelText(model);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto b = CheckTarget(**m, *p).blockers;
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].reason, "Loop (1 carried value(s) returned unchanged (first: 'w'))");
  EXPECT_EQ(b[0].fix, "loop-carry-through-identity");
  const std::string through = std::string(kHead13) + R"(g (float[2] X, float[2] W, int64 N, bool C) => (float[2] Y) {
  Y, WF = Loop(N, C, X, W) <body = b (int64 i, bool c, float[2] h, float[2] w) => (bool co, float[2] ho, float[2] wo) {
    co = Identity(c)  ho = Add(h, w)  wo = Identity(w) }> })";
  EXPECT_TRUE(Reasons(Fact("\"Loop\"", "loop-passthrough-carried"), through).empty());
}

TEST(ConditionKinds, QdqConstantOperand) {
  // An activation's DequantizeLinear added to a constant quantized in the graph: fold-qdq.
  const std::string model = std::string(kHead13) + R"(g (float[4] X) => (float[4] Y) <float[4] B = {1, 2, 3, 4},
      float s = {0.5}, int8 z = {0}> {
  q = QuantizeLinear(X, s, z)  d = DequantizeLinear(q, s, z)
  bq = QuantizeLinear(B, s, z)  bd = DequantizeLinear(bq, s, z)  Y = Add(d, bd) })";
  auto p = ParseTarget(Fact("\"Add\"", "qdq-constant-operand"), "x.toml");
  ASSERT_TRUE(p.ok());
  auto m = ParseModelText(model);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto b = CheckTarget(**m, *p).blockers;
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].fix.rfind("fold-qdq", 0), 0u) << b[0].fix;  // weights=true too: the profile states no qdq
  // The constant as float, or both inputs activations: nothing to name.
  const std::string plain = std::string(kHead13) + R"(g (float[4] X) => (float[4] Y) <float[4] B = {1, 2, 3, 4},
      float s = {0.5}, int8 z = {0}> {
  q = QuantizeLinear(X, s, z)  d = DequantizeLinear(q, s, z)  Y = Add(d, B) })";
  EXPECT_TRUE(Reasons(Fact("\"Add\"", "qdq-constant-operand"), plain).empty());
  const std::string two = std::string(kHead13) + R"(g (float[4] X, float[4] W) => (float[4] Y) <float s = {0.5},
      int8 z = {0}> {
  q = QuantizeLinear(X, s, z)  d = DequantizeLinear(q, s, z)
  wq = QuantizeLinear(W, s, z)  wd = DequantizeLinear(wq, s, z)  Y = Add(d, wd) })";
  EXPECT_TRUE(Reasons(Fact("\"Add\"", "qdq-constant-operand"), two).empty());
}

}  // namespace
}  // namespace onnxsurgeon::target

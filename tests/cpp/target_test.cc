// Target profiles: every built-in profile parses and sources every fact; the parser
// refuses what a typo would otherwise turn into a silent default.
#include <gtest/gtest.h>

#include "core/interop/onnx_interop.h"
#include "core/target/profile.h"
#include "passes/target/check.h"

namespace onnxsurgeon::target {
namespace {

TEST(Profiles, EveryBuiltinProfileParses) {
  const auto& profiles = BuiltinProfiles();
  ASSERT_EQ(profiles.size(), 15u);
  for (const Profile& p : profiles) {
    EXPECT_GT(p.opset_max, 0) << p.name << ": " << p.title;
    EXPECT_FALSE(p.opset_source.empty()) << p.name;
    EXPECT_FALSE(p.custom_source.empty()) << p.name;
    for (const MissingOp& m : p.missing) EXPECT_FALSE(m.source.empty()) << p.name;
    EXPECT_TRUE(LoadProfile(p.name).ok()) << p.name;
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

TEST(Profiles, FactWithoutSourceIsAnError) {
  auto p = ParseProfile(std::string(kMinimal) + "[erf]\nsupported = false\n", "x.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("erf.source: missing"), std::string::npos) << p.status().message();
}

TEST(Profiles, BadWhenIsAnError) {
  auto p = ParseProfile(std::string(kMinimal) + "[[missing]]\nops = [\"TopK\"]\nwhen = \"sometimes\"\nsource = \"s\"\n",
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
  auto p = ParseProfile(
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

}  // namespace
}  // namespace onnxsurgeon::target

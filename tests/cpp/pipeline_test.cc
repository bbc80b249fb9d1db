// The pipeline grammar: accepted forms and errors that point at the column.
#include <gtest/gtest.h>

#include <set>

#include "core/pass/pipeline.h"
#include "core/util/suggest.h"

namespace onnxsurgeon {
namespace {

TEST(Pipeline, EmptyIsNoPasses) {
  auto p = ParsePipeline("  ");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->empty());
}

TEST(Pipeline, NamesAndColumns) {
  auto p = ParsePipeline("nop, nop");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].info->name, "nop");
  EXPECT_EQ((*p)[1].column, 6u);
}

TEST(Pipeline, UnknownPassPointsAtColumn) {
  auto p = ParsePipeline("nop,fix-layrnorm");
  ASSERT_FALSE(p.ok());
  std::string m(p.status().message());
  EXPECT_NE(m.find("column 5"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown pass 'fix-layrnorm'"), std::string::npos) << m;
  EXPECT_NE(m.find("    ^~~~~~~~~~~"), std::string::npos) << m;
  EXPECT_NE(m.find("known passes: "), std::string::npos) << m;
}

TEST(Pipeline, SyntaxErrors) {
  for (const char* bad : {"nop,", "nop nop", ",nop", "nop=3", "nop(x=1)", "nop(", "nop)"}) {
    auto p = ParsePipeline(bad);
    EXPECT_FALSE(p.ok()) << bad;
    if (!p.ok()) EXPECT_NE(std::string(p.status().message()).find("column"), std::string::npos) << bad;
  }
}

TEST(Pipeline, CommaBeforeADigitStaysInTheValue) {
  auto p = ParsePipeline("set-input-shape=images:1,3,320,320, dce");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].options.String("shapes"), "images:1,3,320,320");
  EXPECT_EQ((*p)[1].info->name, "dce");
  p = ParsePipeline("set-input-shape(shapes=a:?,4;b:1,2)");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)[0].options.String("shapes"), "a:?,4;b:1,2");
}

TEST(Pipeline, QuotedValuesAreVerbatim) {
  auto p = ParsePipeline("set-input-shape=\"x:1,y:2\",nop");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)[0].options.String("shapes"), "x:1,y:2");
  p = ParsePipeline("simplify(skip='cse', max-rounds=2)");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)[0].options.String("skip"), "cse");
  p = ParsePipeline("set-input-shape=\"x:1");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(std::string(p.status().message()).find("unclosed quote"), std::string::npos);
}

TEST(Pipeline, UnquotedCommaListSaysHowToQuote) {
  auto p = ParsePipeline("set-input-shape=x:1,y:2");
  ASSERT_FALSE(p.ok());
  std::string m(p.status().message());
  EXPECT_NE(m.find("unknown pass 'y'"), std::string::npos) << m;
  EXPECT_NE(m.find("must be quoted"), std::string::npos) << m;
}

TEST(Pipeline, DidYouMean) {
  auto p = ParsePipeline("nop,fix-layrnorm");
  EXPECT_NE(std::string(p.status().message()).find("(did you mean 'fix-layernorm'?)"), std::string::npos);
  p = ParsePipeline("fold-constants(max-sise=3)");
  EXPECT_NE(std::string(p.status().message()).find("(did you mean 'max-size'?)"), std::string::npos);
  p = ParsePipeline("qqqqqqqq");
  EXPECT_EQ(std::string(p.status().message()).find("did you mean"), std::string::npos) << "nothing is close";
}

// Option values are checked against the types passes/passes.def declares, at parse time,
// and the error underlines the value.
TEST(Pipeline, WrongTypePointsAtTheValue) {
  auto p = ParsePipeline("nop, fold-constants(max-size=big)");
  ASSERT_FALSE(p.ok());
  std::string m(p.status().message());
  EXPECT_NE(m.find("column 30: fold-constants: option 'max-size' wants an integer >= 0, got 'big'"), std::string::npos)
      << m;
  EXPECT_NE(m.find("\n                               ^~~"), std::string::npos) << m;
  p = ParsePipeline("fold-constants(max-size=-1)");
  EXPECT_NE(std::string(p.status().message()).find("wants an integer >= 0, got '-1'"), std::string::npos);
  p = ParsePipeline("inline-functions(keep-functions=maybe)");
  EXPECT_NE(std::string(p.status().message()).find("wants true or false, got 'maybe'"), std::string::npos);
  p = ParsePipeline("downgrade-opset=fifteen");
  EXPECT_NE(std::string(p.status().message()).find("column 17: downgrade-opset: option 'opset' wants an integer"),
            std::string::npos)
      << p.status().message();
}

TEST(Pipeline, EnumAndListChoicesSuggest) {
  auto p = ParsePipeline("rewrite-gelu(to=tahn)");
  ASSERT_FALSE(p.ok());
  std::string m(p.status().message());
  EXPECT_NE(m.find("option 'to' wants erf, tanh or sigmoid, got 'tahn' (did you mean 'tanh'?)"), std::string::npos)
      << m;
  p = ParsePipeline("simplify(skip=cse;fuse-conv-nb)");
  ASSERT_FALSE(p.ok());
  m = std::string(p.status().message());
  EXPECT_NE(m.find("option 'skip' has no choice 'fuse-conv-nb' (did you mean 'fuse-conv-bn'?)"), std::string::npos)
      << m;
  EXPECT_NE(m.find("column 15"), std::string::npos) << m;
  EXPECT_TRUE(ParsePipeline("simplify(skip=cse;fuse-conv-bn), rewrite-gelu=tanh").ok());
}

TEST(Pipeline, ShapesAreCheckedWhenParsed) {
  auto p = ParsePipeline("set-input-shape=images:1x3xQ");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(std::string(p.status().message()).find("'Q' in 'images:1x3xQ' is not a dim"), std::string::npos)
      << p.status().message();
  p = ParsePipeline("set-input-shape(shapes=a:?x4;b:1x2)");
  ASSERT_TRUE(p.ok()) << p.status().message();
  InputShapes shapes = (*p)[0].options.Shapes("shapes");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].name, "a");
  EXPECT_EQ(shapes[0].dims, (std::vector<int64_t>{-1, 4}));
}

TEST(PassOptions, DefaultsComeFromTheTable) {
  auto p = ParsePipeline("fold-constants, fix-layernorm(names=A; B), simplify(size-limit=64)");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)[0].options.Int("max-size"), 1 << 20);
  EXPECT_TRUE((*p)[0].options.Bool("infer-shapes"));
  EXPECT_FALSE((*p)[0].options.Has("max-size"));
  EXPECT_EQ((*p)[1].options.String("to"), "auto");
  EXPECT_EQ((*p)[1].options.List("names"), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ((*p)[2].options.Int("max-rounds"), 10);
  EXPECT_TRUE((*p)[2].options.Has("size-limit"));
  EXPECT_EQ((*p)[2].options.Int("size-limit"), 64);
}

// Options set by code (the CLI's --size-limit, --skip-fuse-bn) skip the parser; the pass
// manager checks them against the table before it makes the pass.
TEST(PassOptions, CheckedBeforeThePassIsMade) {
  const PassInfo* info = FindPass("fold-constants");
  ASSERT_NE(info, nullptr);
  auto bad = CreatePass(*info, PassOptions(info->options, {{"max-size", "x"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "option 'max-size' wants an integer >= 0, got 'x'");
  bad = CreatePass(*info, PassOptions(info->options, {{"max-sise", "1"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("has no option 'max-sise' (did you mean 'max-size'?)"),
            std::string::npos);
  EXPECT_TRUE(CreatePass(*info, PassOptions(info->options, {{"max-size", "64"}})).ok());
}

// Every declared default passes its own type check, and every pass can be made from its
// defaults alone (target and set-input-shape have no defaults that make a change).
TEST(PassTable, DefaultsFitTheirTypesAndNamesAreUnique) {
  std::set<std::string> names;
  for (const PassInfo& p : AllPasses()) {
    EXPECT_TRUE(names.insert(p.name).second) << "listed twice: " << p.name;
    std::set<std::string> options;
    for (const PassOptionSpec& o : p.options) {
      EXPECT_TRUE(options.insert(o.name).second) << p.name << ": option listed twice: " << o.name;
      if (!o.default_value.empty()) EXPECT_TRUE(CheckOptionValue(o, o.default_value).ok()) << p.name << " " << o.name;
      if (o.type == OptionType::kEnum) EXPECT_FALSE(o.choices.empty()) << p.name << " " << o.name;
    }
    if (p.name == "target") continue;  // needs a profile name
    auto pass = CreatePass(p, PassOptions(p.options, {}));
    EXPECT_TRUE(pass.ok()) << p.name << ": " << pass.status().message();
  }
}

TEST(Suggest, ClosestMatchNeedsToBeClose) {
  std::vector<std::string> flags = {"--pass", "--output", "--quiet", "--input-shapes"};
  EXPECT_EQ(ClosestMatch("--pas", flags), "--pass");
  EXPECT_EQ(ClosestMatch("--quite", flags), "--quiet");
  EXPECT_EQ(ClosestMatch("--input-shape", flags), "--input-shapes");
  EXPECT_EQ(ClosestMatch("--frobnicate", flags), std::nullopt);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace onnxsurgeon

namespace onnxsurgeon {
namespace {

// An item built by hand (the pipeline fuzzer's, an embedder's) binds no option table: every
// pass must still be made, reading its declared defaults. (The fuzzer's seed corpus found
// extract-constants aborting with "option 'to' is read but not declared".)
TEST(Pipeline, EveryPassIsMadeFromOptionsBoundToNoTable) {
  // Made, or refused with a Status (`target` needs a name); before, an abort.
  for (const PassInfo& info : AllPasses()) {
    auto pass = CreatePass(info, PassOptions());
    EXPECT_TRUE(pass.ok() || absl::IsInvalidArgument(pass.status())) << info.name << ": " << pass.status();
  }
  const PassInfo* extract = FindPass("extract-constants");
  ASSERT_NE(extract, nullptr);
  static const std::vector<PassOptionSpec> kNoTable;
  EXPECT_TRUE(CreatePass(*extract, PassOptions(kNoTable, {{"to", "constant"}})).ok());
  EXPECT_FALSE(CreatePass(*extract, PassOptions(kNoTable, {{"too", "constant"}})).ok());
}

}  // namespace
}  // namespace onnxsurgeon

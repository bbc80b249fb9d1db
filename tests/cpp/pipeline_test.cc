// The pipeline grammar: accepted forms and errors that point at the column.
#include <gtest/gtest.h>

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
  EXPECT_EQ((*p)[0].options.GetString("shapes", ""), "images:1,3,320,320");
  EXPECT_EQ((*p)[1].info->name, "dce");
  p = ParsePipeline("set-input-shape(shapes=a:?,4;b:1,2)");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)[0].options.GetString("shapes", ""), "a:?,4;b:1,2");
}

TEST(Pipeline, QuotedValuesAreVerbatim) {
  auto p = ParsePipeline("set-input-shape=\"x:1,y:2\",nop");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)[0].options.GetString("shapes", ""), "x:1,y:2");
  p = ParsePipeline("simplify(skip='cse', max-rounds=2)");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)[0].options.GetString("skip", ""), "cse");
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

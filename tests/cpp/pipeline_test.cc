// The pipeline grammar: accepted forms and errors that point at the column.
#include <gtest/gtest.h>

#include "core/pass/pipeline.h"

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

}  // namespace
}  // namespace onnxsurgeon

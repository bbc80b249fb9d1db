// Golden tests: tests/golden/**/*.txt, each an ONNX text model, a pipeline, and the
// expected model (or "unchanged", or "error: <text>"). File format:
//
//   # what the case shows (comment lines)
//   pipeline: dce
//   --- input
//   <ir_version: 10, opset_import: ["" : 18]> g (float[N] X) => (float[N] Y) { ... }
//   --- expected
//   <ir_version: 10, ...> ...            | unchanged | error: substring
//
// A negative may pin why a rule refused: a `refused: substring` line after the pipeline
// line; some --debug-patterns line of the run must contain the substring.
//
// Outputs are compared after canonical printing (tests/cpp/canonical.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_join.h"
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/pass/pass_manager.h"
#include "core/pass/pipeline.h"
#include "tests/cpp/canonical.h"

namespace onnxsurgeon {
namespace {
namespace fs = std::filesystem;

struct GoldenCase {
  std::string name;
  std::string pipeline;
  std::string input;
  std::string expected;
  std::vector<std::string> refused;  // substrings of --debug-patterns lines
};

GoldenCase ReadCase(const fs::path& path) {
  std::ifstream f(path);
  GoldenCase c;
  c.name = path.parent_path().filename().string() + "/" + path.stem().string();
  std::string line, *section = nullptr;
  while (std::getline(f, line)) {
    if (line.rfind("pipeline:", 0) == 0 && !section) {
      c.pipeline = line.substr(9);
    } else if (line.rfind("refused:", 0) == 0 && !section) {
      std::string want = line.substr(8);
      want.erase(0, want.find_first_not_of(' '));
      c.refused.push_back(want);
    } else if (line == "--- input") {
      section = &c.input;
    } else if (line == "--- expected") {
      section = &c.expected;
    } else if (section) {
      *section += line + "\n";
    }
  }
  auto trim = [](std::string& s) {
    s.erase(0, s.find_first_not_of(" \n"));
    s.erase(s.find_last_not_of(" \n") + 1);
  };
  trim(c.pipeline);
  trim(c.expected);
  return c;
}

std::vector<fs::path> GoldenFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(ONNXSURGEON_GOLDEN_DIR))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

class Golden : public ::testing::TestWithParam<fs::path> {};

TEST_P(Golden, Case) {
  GoldenCase c = ReadCase(GetParam());
  ASSERT_FALSE(c.input.empty()) << "no '--- input' section";
  ASSERT_FALSE(c.expected.empty()) << "no '--- expected' section";
  auto model = ParseModelText(c.input);
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::string before = testing::CanonicalText(ExportModel(**model));
  auto pipeline = ParsePipeline(c.pipeline);
  if (!pipeline.ok() && c.expected.rfind("error:", 0) == 0) {  // an option the pass table refuses
    std::string want = c.expected.substr(c.expected.find_first_not_of(' ', 6));
    EXPECT_NE(std::string(pipeline.status().message()).find(want), std::string::npos) << pipeline.status().message();
    return;
  }
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
  PassManagerOptions options;
  std::vector<std::string> debug_lines;
  options.context.debug_patterns = [&](const std::string& line) { debug_lines.push_back(line); };
  auto result = RunPipeline(**model, *pipeline, options);
  for (const std::string& want : c.refused) {
    bool found = std::any_of(debug_lines.begin(), debug_lines.end(),
                             [&](const std::string& l) { return l.find(want) != std::string::npos; });
    EXPECT_TRUE(found) << "no refusal says '" << want << "'; the rules said:\n" << absl::StrJoin(debug_lines, "\n");
  }
  if (c.expected.rfind("error:", 0) == 0) {
    std::string want = c.expected.substr(6);
    want.erase(0, want.find_first_not_of(' '));
    ASSERT_FALSE(result.ok()) << "expected an error containing: " << want;
    EXPECT_NE(std::string(result.status().message()).find(want), std::string::npos) << result.status().message();
    return;
  }
  ASSERT_TRUE(result.ok()) << result.status().message();
  std::string after = testing::CanonicalText(ExportModel(**model));
  if (c.expected == "unchanged") {
    EXPECT_EQ(after, before) << "the pipeline must not change this model";
    return;
  }
  auto expected = ParseModelText(c.expected);
  ASSERT_TRUE(expected.ok()) << "expected model: " << expected.status().message();
  EXPECT_EQ(after, testing::CanonicalText(ExportModel(**expected)));
  // The result is a valid model.
  Status valid = CheckModel(**model, /*full_check=*/false);
  EXPECT_TRUE(valid.ok()) << valid.message();
}

std::string CaseName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.parent_path().filename().string() + "_" + info.param.stem().string();
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Files, Golden, ::testing::ValuesIn(GoldenFiles()), CaseName);

}  // namespace
}  // namespace onnxsurgeon

// Output validation and the structural pre-check of the pass manager (core/pass/validate.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/io/model_io.h"
#include "core/pass/pass_manager.h"
#include "core/pass/pipeline.h"
#include "core/pass/validate.h"

namespace onnxsurgeon {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Model> Parse(const char* text) {
  auto m = ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

Status RunPasses(Model& model, const char* pipeline, OutputValidation validate = OutputValidation::kFull) {
  auto items = ParsePipeline(pipeline);
  EXPECT_TRUE(items.ok()) << items.status();
  PassManagerOptions options;
  options.validate = validate;
  return RunPipeline(model, *items, options).status();
}

TEST(PassValidate, AcceptsAValidModel) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Relu(x) })");
  EXPECT_TRUE(ValidateStructure(*m).ok());
  EXPECT_TRUE(CheckModelWithOnnx(*m).ok());
  EXPECT_TRUE(RunPasses(*m, "simplify").ok());
}

TEST(PassValidate, NodeBreakingItsSchemaIsRefusedBeforeAnyPass) {
  auto m = Parse(R"(<ir_version: 10, opset_import: ["" : 18]> g (float[2,2] x) => (float[2,2] y) { y = MatMul(x) })");
  Status s = RunPasses(*m, "fuse-reshapes");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("cannot run passes on this model"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("the MatMul node making 'y' has 1 inputs"));
}

// The loader (on the NodeProto) and the pass manager (on the IR node) share one arity rule
// (CheckOperandCount): the same node gets the same reason from both. parse_text skips the
// loader's validation, so the IR can hold these nodes.
TEST(PassValidate, LoaderAndPassManagerJudgeArityAlike) {
  for (const char* node : {"y = MatMul(x)", "y = Relu(x, \"\")", "y = Add(\"\", x)"}) {
    std::string text =
        std::string(R"(<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { )") + node + " }";
    auto m = Parse(text.c_str());
    Status pass = ValidateStructure(*m);
    auto proto = ExportModel(*m);
    auto loaded = LoadModelFromBytes(proto.SerializeAsString());
    ASSERT_FALSE(pass.ok()) << node;
    ASSERT_FALSE(loaded.ok()) << node;
    std::string reason(pass.message().substr(pass.message().find(" has ") != absl::string_view::npos
                                                 ? pass.message().find(" has ")
                                                 : pass.message().find(" leaves ")));
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(reason)) << node;
  }
}

TEST(PassValidate, WrongAttributeTypeAndMissingRequiredAttribute) {
  auto perm = Parse(
      R"(<ir_version: 10, opset_import: ["" : 18]> g (float[2,2] x) => (float[2,2] y) { y = Transpose <perm = [1.0, 0.0]> (x) })");
  EXPECT_THAT(std::string(ValidateStructure(*perm).message()),
              HasSubstr("attribute 'perm' is FLOATS, the schema wants INTS"));
  auto cast = Parse(R"(<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Cast(x) })");
  EXPECT_THAT(std::string(ValidateStructure(*cast).message()), HasSubstr("lacks its required attribute 'to'"));
}

TEST(PassValidate, SubgraphMayReadOuterValues) {
  auto ok = Parse(R"(<ir_version: 10, opset_import: ["" : 18]>
    g (float[2] x, bool c) => (float[2] y) {
      r = Relu(x)
      y = If(c) <then_branch = t () => (float[2] a) { a = Identity(r) }, else_branch = e () => (float[2] b) { b = Identity(x) }>
    })");
  EXPECT_TRUE(ValidateStructure(*ok).ok()) << ValidateStructure(*ok);
}

// The loader accepts nodes out of order (toposort sorts them), so the pre-check does too.
TEST(PassValidate, UnsortedGraphIsNotRefused) {
  auto m =
      Parse(R"(<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Neg(a)  a = Relu(x) })");
  EXPECT_TRUE(ValidateStructure(*m).ok());
  EXPECT_TRUE(RunPasses(*m, "toposort").ok());
}

// Folding makes an inconsistent shape static: the checker refuses the output while the
// input passed, so the run fails (and with kStructural only, it does not).
TEST(PassValidate, OutputThatOnnxRefusesFailsTheRunWhenTheInputPassed) {
  const char* text = R"(<ir_version: 10, opset_import: ["" : 18]>
    g (float[2,4] x) => (float[p,q] y) {
      a = Constant <value = int64[1] {9223372036854775807}> ()
      b = Constant <value = int64[1] {-9223372036854775808}> ()
      s = Concat <axis = 0> (a, b)
      y = Reshape(x, s)
    })";
  auto m = Parse(text);
  ASSERT_TRUE(CheckModelWithOnnx(*m).ok());
  Status s = RunPasses(*m, "simplify");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("onnx's checker refuses (the input passes)"));
  auto again = Parse(text);
  EXPECT_TRUE(RunPasses(*again, "simplify", OutputValidation::kStructural).ok());
}

// A pass that leaves an initializer of data type UNDEFINED is caught by the structural
// check even without onnx's checker.
TEST(PassValidate, UndefinedInitializerTypeIsStructural) {
  auto m = Parse(
      R"(<ir_version: 10, opset_import: ["" : 18]> g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> { y = Add(x, w) })");
  m->graph().initializers()[0]->mutable_initializer()->mutable_meta().set_data_type(onnx::TensorProto::UNDEFINED);
  EXPECT_THAT(std::string(ValidateStructure(*m).message()), HasSubstr("initializer 'w' has data type 0"));
}

}  // namespace
}  // namespace onnxsurgeon

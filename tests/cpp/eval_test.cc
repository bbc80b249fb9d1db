// Unit tests for the constant-evaluation kernels (core/eval). The Python suite checks
// every kernel against onnxruntime on the ONNX backend node tests and random inputs;
// these pin edge cases: broadcasting, integer semantics, rounding, views, size budget.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/eval/kernel.h"
#include "core/ir/model.h"
#include "core/rewrite/rewriter.h"
#include "tests/cpp/ir_test_access.h"

namespace onnxsurgeon::eval {
namespace {

template <typename T>
Array Make(int32_t dtype, std::vector<int64_t> dims, std::vector<T> values) {
  auto buffer = std::make_shared<std::string>(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  Array a;
  a.dtype = dtype;
  a.dims = std::move(dims);
  a.bytes = *buffer;
  a.owner = buffer;
  return a;
}

template <typename T>
std::vector<T> Values(const Array& a) {
  std::vector<T> v;
  for (int64_t i = 0; i < a.numel(); ++i) v.push_back(a.at<T>(i));
  return v;
}

struct OneNode {
  Model model;
  Node* node = nullptr;
  OneNode(const std::string& op, int num_inputs, int num_outputs, std::vector<onnx::AttributeProto> attrs = {}) {
    std::vector<Value*> inputs;
    for (int i = 0; i < num_inputs; ++i)
      inputs.push_back(*model.graph().AddInput(IrTestAccess::Key(), absl::StrCat("x", i)));
    node = model.graph().CreateNode(IrTestAccess::Key(), op, inputs, num_outputs);
    for (auto& a : attrs) node->SetAttribute(IrTestAccess::Key(), std::move(a));
  }
};

StatusOr<std::vector<Array>> Eval(const std::string& op, std::vector<Array> inputs,
                                  std::vector<onnx::AttributeProto> attrs = {}, int num_outputs = 1, int64_t opset = 18,
                                  int64_t max_bytes = 1 << 20) {
  OneNode n(op, static_cast<int>(inputs.size()), num_outputs, std::move(attrs));
  std::vector<const Array*> ptrs;
  for (const Array& a : inputs) ptrs.push_back(&a);
  return Evaluate(*n.node, ptrs, opset, max_bytes);
}

TEST(EvalTest, EveryShapeOpHasAKernelAtEverySignature) {
  // (op, opset) pairs spanning the signature changes: attribute vs input axes, Slice 1/10,
  // Split 2/13/18, Reshape 1/5/14, Reduce* 13/18.
  const std::vector<std::pair<std::string, int>> cases = {{"Shape", 1},
                                                          {"Shape", 15},
                                                          {"Size", 1},
                                                          {"Gather", 1},
                                                          {"Gather", 13},
                                                          {"Unsqueeze", 11},
                                                          {"Unsqueeze", 13},
                                                          {"Squeeze", 11},
                                                          {"Squeeze", 13},
                                                          {"Concat", 4},
                                                          {"Concat", 13},
                                                          {"Reshape", 1},
                                                          {"Reshape", 5},
                                                          {"Reshape", 14},
                                                          {"Slice", 1},
                                                          {"Slice", 10},
                                                          {"Slice", 13},
                                                          {"Split", 2},
                                                          {"Split", 13},
                                                          {"Split", 18},
                                                          {"Cast", 6},
                                                          {"Cast", 19},
                                                          {"Range", 11},
                                                          {"ConstantOfShape", 9},
                                                          {"ConstantOfShape", 20},
                                                          {"Expand", 8},
                                                          {"Transpose", 1},
                                                          {"Equal", 11},
                                                          {"Equal", 19},
                                                          {"Where", 9},
                                                          {"Where", 16},
                                                          {"Not", 1},
                                                          {"And", 7},
                                                          {"Or", 7},
                                                          {"Add", 7},
                                                          {"Add", 14},
                                                          {"Div", 14},
                                                          {"Neg", 13},
                                                          {"Abs", 13},
                                                          {"Sqrt", 13},
                                                          {"Pow", 7},
                                                          {"Pow", 15},
                                                          {"ReduceProd", 13},
                                                          {"ReduceProd", 18},
                                                          {"ReduceSum", 11},
                                                          {"ReduceSum", 13},
                                                          {"ReduceMax", 18},
                                                          {"ReduceMin", 20},
                                                          {"Identity", 1},
                                                          {"Identity", 21},
                                                          {"Flatten", 1},
                                                          {"Flatten", 13},
                                                          {"Tile", 6},
                                                          {"Tile", 13},
                                                          {"NonZero", 13},
                                                          {"Constant", 1},
                                                          {"Constant", 13},
                                                          {"Constant", 21},
                                                          {"Resize", 11},
                                                          {"Resize", 19},
                                                          {"CumSum", 14},
                                                          {"MatMul", 13},
                                                          {"Softmax", 11},
                                                          {"Softmax", 13},
                                                          {"LayerNormalization", 17}};
  for (const auto& [op, opset] : cases) EXPECT_NE(FindKernel(op, "", opset), nullptr) << op << " at opset " << opset;
  EXPECT_EQ(FindKernel("Add", "com.example", 18), nullptr);
  EXPECT_EQ(FindKernel("Conv", "", 18), nullptr);
  EXPECT_EQ(FindKernel("Resize", "", 10), nullptr);  // Upsample's signature: not folded
  EXPECT_GE(KernelOpTypes().size(), 60u);
}

TEST(EvalTest, IntegerArithmeticElementwise) {
  Array a = Make<int32_t>(DT::INT32, {4}, {10, 20, 30, 40});
  Array b = Make<int32_t>(DT::INT32, {4}, {1, 2, 3, 4});
  auto sub = Eval("Sub", {a, b});
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ(Values<int32_t>((*sub)[0]), (std::vector<int32_t>{9, 18, 27, 36}));
  Array n = Make<int32_t>(DT::INT32, {4}, {-7, 7, -7, 7});
  Array d = Make<int32_t>(DT::INT32, {4}, {2, 2, -2, -2});
  auto div = Eval("Div", {n, d});
  ASSERT_TRUE(div.ok());
  EXPECT_EQ(Values<int32_t>((*div)[0]), (std::vector<int32_t>{-3, 3, 3, -3}));  // truncation
  auto mod = Eval("Mod", {n, d});
  EXPECT_EQ(Values<int32_t>((*mod)[0]), (std::vector<int32_t>{1, 1, -1, -1}));  // sign of divisor
  auto fmod = Eval("Mod", {n, d}, {Rewriter::AttrInt("fmod", 1)});
  EXPECT_EQ(Values<int32_t>((*fmod)[0]), (std::vector<int32_t>{-1, 1, -1, 1}));  // sign of dividend
}

TEST(EvalTest, IntegerDivisionByZeroIsRefused) {
  auto r = Eval("Div", {Make<int64_t>(DT::INT64, {1}, {1}), Make<int64_t>(DT::INT64, {1}, {0})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EvalTest, BroadcastingBothWays) {
  Array col = Make<float>(DT::FLOAT, {3, 1}, {1, 2, 3});
  Array row = Make<float>(DT::FLOAT, {2}, {10, 20});
  auto r = Eval("Add", {col, row});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<float>((*r)[0]), (std::vector<float>{11, 21, 12, 22, 13, 23}));
  auto bad = Eval("Add", {Make<float>(DT::FLOAT, {3}, {1, 2, 3}), row});
  EXPECT_FALSE(bad.ok());
}

TEST(EvalTest, Float16RoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);               // rounds up to inf
  EXPECT_EQ(FloatToHalf(1.0f + 1.0f / 2048), 0x3c00);     // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + 3.0f / 2048), 0x3c02);     // tie -> even (up)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(HalfBitsToFloat(FloatToHalf(0.1f)), HalfBitsToFloat(0x2e66));
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
}

TEST(EvalTest, ReshapeSqueezeAreViews) {
  Array a = Make<float>(DT::FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = Eval("Reshape", {a, Make<int64_t>(DT::INT64, {2}, {0, -1})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*r)[0].bytes.data(), a.bytes.data());  // no copy
  auto u = Eval("Unsqueeze", {a, Make<int64_t>(DT::INT64, {2}, {0, -1})});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ((*u)[0].dims, (std::vector<int64_t>{1, 2, 3, 1}));
  auto s = Eval("Squeeze", {(*u)[0]}, {}, 1, 11);  // opset 11: no axes -> every 1
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].dims, (std::vector<int64_t>{2, 3}));
  auto allowzero = Eval("Reshape", {Make<float>(DT::FLOAT, {0, 3}, {}), Make<int64_t>(DT::INT64, {2}, {3, 0})},
                        {Rewriter::AttrInt("allowzero", 1)});
  ASSERT_TRUE(allowzero.ok());
  EXPECT_EQ((*allowzero)[0].dims, (std::vector<int64_t>{3, 0}));
}

TEST(EvalTest, SliceNegativeStepsAndClamping) {
  Array a = Make<int64_t>(DT::INT64, {5}, {0, 1, 2, 3, 4});
  auto r = Eval("Slice", {a, Make<int64_t>(DT::INT64, {1}, {-1}), Make<int64_t>(DT::INT64, {1}, {INT64_MIN}),
                          Make<int64_t>(DT::INT64, {1}, {0}), Make<int64_t>(DT::INT64, {1}, {-2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>((*r)[0]), (std::vector<int64_t>{4, 2, 0}));
  auto c = Eval("Slice", {a, Make<int64_t>(DT::INT64, {1}, {1}), Make<int64_t>(DT::INT64, {1}, {1000})});
  EXPECT_EQ(Values<int64_t>((*c)[0]), (std::vector<int64_t>{1, 2, 3, 4}));
}

// Step INT64_MIN: the axis yields one element and its stride is never multiplied out
// (stride * step overflowed before; UBSan reported it).
TEST(EvalTest, SliceStepInt64Min) {
  Array a = Make<float>(DT::FLOAT, {4}, {0, 1, 2, 3});
  auto r = Eval("Slice", {a, Make<int64_t>(DT::INT64, {1}, {3}), Make<int64_t>(DT::INT64, {1}, {INT64_MIN}),
                          Make<int64_t>(DT::INT64, {1}, {0}), Make<int64_t>(DT::INT64, {1}, {INT64_MIN})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>((*r)[0]), (std::vector<float>{3}));
}

// Kernels never see a node whose inputs break its schema: missing or omitted required
// inputs are refused before the kernel runs (they crashed the Slice kernel).
TEST(EvalTest, MissingRequiredInputsAreRefused) {
  Array a = Make<float>(DT::FLOAT, {2}, {1, 2});
  auto none = Eval("Slice", {});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), ::testing::HasSubstr("has 0 inputs"));
  OneNode n("Slice", 3, 1);
  std::vector<const Array*> omitted = {&a, nullptr, nullptr};
  auto r = Evaluate(*n.node, omitted, 18, 1 << 20);
  ASSERT_FALSE(r.ok());
  auto one = Eval("Add", {a});
  ASSERT_FALSE(one.ok());
  EXPECT_THAT(std::string(one.status().message()), ::testing::HasSubstr("its schema takes 2 to 2"));
  OneNode s("Slice", 4, 1);
  std::vector<const Array*> gap = {&a, &a, nullptr, &a};  // ends omitted, axes given
  auto g = Evaluate(*s.node, gap, 18, 1 << 20);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), ::testing::HasSubstr("lacks its required input 2"));
}

TEST(EvalTest, TileTransposeGather) {
  Array a = Make<int32_t>(DT::INT32, {2, 2}, {1, 2, 3, 4});
  auto t = Eval("Tile", {a, Make<int64_t>(DT::INT64, {2}, {2, 2})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Values<int32_t>((*t)[0]), (std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}));
  auto tr = Eval("Transpose", {a});
  EXPECT_EQ(Values<int32_t>((*tr)[0]), (std::vector<int32_t>{1, 3, 2, 4}));
  auto g = Eval("Gather", {a, Make<int64_t>(DT::INT64, {2}, {-1, 0})}, {Rewriter::AttrInt("axis", 1)});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Values<int32_t>((*g)[0]), (std::vector<int32_t>{2, 1, 4, 3}));
}

TEST(EvalTest, SizeBudgetRefusesBeforeAllocating) {
  Array one = Make<float>(DT::FLOAT, {1}, {1});
  auto r = Eval("Expand", {one, Make<int64_t>(DT::INT64, {2}, {1 << 20, 1 << 20})}, {}, 1, 18, 1 << 20);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  auto c = Eval("ConstantOfShape", {Make<int64_t>(DT::INT64, {1}, {int64_t{1} << 40})});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(EvalTest, CastRulesMatchOnnxruntime) {
  Array f = Make<float>(DT::FLOAT, {3}, {-1.7f, 2.5f, 0.0f});
  auto i = Eval("Cast", {f}, {Rewriter::AttrInt("to", DT::INT32)});
  EXPECT_EQ(Values<int32_t>((*i)[0]), (std::vector<int32_t>{-1, 2, 0}));
  auto b = Eval("Cast", {f}, {Rewriter::AttrInt("to", DT::BOOL)});
  EXPECT_EQ(Values<uint8_t>((*b)[0]), (std::vector<uint8_t>{1, 1, 0}));
  auto big = Eval("Cast", {Make<float>(DT::FLOAT, {1}, {1e10f})}, {Rewriter::AttrInt("to", DT::INT32)});
  EXPECT_FALSE(big.ok());  // undefined at run time: left alone
  auto ninf = Eval("Cast", {Make<float>(DT::FLOAT, {1}, {-INFINITY})}, {Rewriter::AttrInt("to", DT::INT64)});
  ASSERT_TRUE(ninf.ok());  // x86 and ARM agree: the lowest int64
  EXPECT_EQ(Values<int64_t>((*ninf)[0]), (std::vector<int64_t>{INT64_MIN}));
  EXPECT_FALSE(Eval("Cast", {Make<float>(DT::FLOAT, {1}, {NAN})}, {Rewriter::AttrInt("to", DT::INT64)}).ok());
  auto wrap = Eval("Cast", {Make<int64_t>(DT::INT64, {1}, {300})}, {Rewriter::AttrInt("to", DT::UINT8)});
  EXPECT_EQ(Values<uint8_t>((*wrap)[0]), (std::vector<uint8_t>{44}));
}

TEST(EvalTest, TriluKeepsTheBand) {
  Array a = Make<int32_t>(DT::INT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto up = Eval("Trilu", {a, Make<int64_t>(DT::INT64, {}, {1})});
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(Values<int32_t>((*up)[0]), (std::vector<int32_t>{0, 2, 3, 0, 0, 6}));
  auto low = Eval("Trilu", {a}, {Rewriter::AttrInt("upper", 0)});
  EXPECT_EQ(Values<int32_t>((*low)[0]), (std::vector<int32_t>{1, 0, 0, 4, 5, 0}));
}

TEST(EvalTest, RangeAccumulatesLikeOnnxruntime) {
  auto r = Eval("Range", {Make<int64_t>(DT::INT64, {}, {10}), Make<int64_t>(DT::INT64, {}, {4}),
                          Make<int64_t>(DT::INT64, {}, {-3})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Values<int64_t>((*r)[0]), (std::vector<int64_t>{10, 7}));
}

TEST(EvalTest, ReduceKeepdimsAndEmptyAxes) {
  Array a = Make<float>(DT::FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto s = Eval("ReduceSum", {a, Make<int64_t>(DT::INT64, {1}, {1})}, {Rewriter::AttrInt("keepdims", 0)});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(Values<float>((*s)[0]), (std::vector<float>{6, 15}));
  auto all = Eval("ReduceMax", {a});
  EXPECT_EQ((*all)[0].dims, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(Values<float>((*all)[0]), (std::vector<float>{6}));
  auto noop =
      Eval("ReduceProd", {a, Make<int64_t>(DT::INT64, {0}, {})}, {Rewriter::AttrInt("noop_with_empty_axes", 1)});
  EXPECT_EQ((*noop)[0].dims, (std::vector<int64_t>{2, 3}));
  auto old = Eval("ReduceMin", {a}, {Rewriter::AttrInts("axes", {0})}, 1, 13);  // axes attribute before 18
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(Values<float>((*old)[0]), (std::vector<float>{1, 2, 3}));
}

TEST(EvalTest, SplitForms) {
  Array a = Make<int64_t>(DT::INT64, {7}, {0, 1, 2, 3, 4, 5, 6});
  auto v18 = Eval("Split", {a}, {Rewriter::AttrInt("num_outputs", 3)}, 3, 18);
  ASSERT_TRUE(v18.ok()) << v18.status();
  EXPECT_EQ(Values<int64_t>((*v18)[2]), (std::vector<int64_t>{6}));
  auto v11 = Eval("Split", {a}, {Rewriter::AttrInts("split", {3, 4})}, 2, 11);
  ASSERT_TRUE(v11.ok());
  EXPECT_EQ(Values<int64_t>((*v11)[1]), (std::vector<int64_t>{3, 4, 5, 6}));
}

}  // namespace
}  // namespace onnxsurgeon::eval

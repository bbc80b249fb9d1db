// The symbolic shape analysis (core/shape/symbolic.h) through its query API: what a small
// integer vector computes, element by element, when dims are symbols.
#include <gtest/gtest.h>

#include "core/shape/symbolic.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {

constexpr const char* kHeader = R"(<ir_version: 8, opset_import: ["" : 17]>
)";

struct Analyzed {
  std::unique_ptr<Model> model;
  SymbolicShapes shapes;
  Value* operator[](const char* name) const { return model->graph().FindValue(name); }
};

std::unique_ptr<Analyzed> Analyze(const std::string& body) {
  auto a = std::make_unique<Analyzed>();
  a->model = testing::Parse(std::string(kHeader) + body);
  a->shapes.Analyze(a->model->graph());
  return a;
}

// "[#2,s:N,...]": the elements' keys.
std::string Elements(const SymbolicShapes& shapes, Value* v) {
  const SymbolicVector* vec = shapes.VectorOf(v);
  if (!vec) return "none";
  std::string out = vec->scalar ? "(" : "[";
  for (size_t i = 0; i < vec->elems.size(); ++i) out += (i ? "," : "") + vec->elems[i].Key();
  return out + (vec->scalar ? ")" : "]");
}

TEST(SymbolicShapes, ShapeArithmeticKeepsSymbols) {
  auto a = Analyze(R"(g (float[N,8,4] x) => (float[N,32] y) {
      zero = Constant<value = int64 {0}>()
      minus1 = Constant<value = int64[1] {-1}>()
      ax = Constant<value = int64[1] {0}>()
      s = Shape(x)
      b = Gather(s, zero)
      u = Unsqueeze(b, ax)
      c = Concat<axis = 0>(u, minus1)
      y = Reshape(x, c)
      n2 = Mul(b, b)
      sz = Size(x) })");
  EXPECT_EQ(Elements(a->shapes, (*a)["s"]), "[s:N,#8,#4]");
  EXPECT_EQ(Elements(a->shapes, (*a)["b"]), "(s:N)");
  EXPECT_EQ(Elements(a->shapes, (*a)["c"]), "[s:N,#-1]");
  EXPECT_EQ(Elements(a->shapes, (*a)["n2"]), "((* s:N s:N))");
  EXPECT_EQ(Elements(a->shapes, (*a)["sz"]), "((* #4 (* #8 s:N)))");  // symbolic: not folded
  EXPECT_TRUE(a->shapes.IsComputed((*a)["c"]));
  EXPECT_FALSE(a->shapes.IsComputed((*a)["minus1"]));    // a constant, not derived
  EXPECT_EQ(a->shapes.Int64s((*a)["c"]), std::nullopt);  // N is not constant
  EXPECT_EQ(a->shapes.Int64s((*a)["minus1"]), (std::vector<int64_t>{-1}));
  EXPECT_EQ(a->shapes.DimOf((*a)["x"], *ShapeOf((*a)["x"]), 0).Key(), "s:N");
}

TEST(SymbolicShapes, DecidesComparisonsOfSizes) {
  auto a = Analyze(R"(g (float[N,4] x) => (bool[2] e) {
      m1 = Constant<value = int64[2] {-1, 4}>()
      s = Shape(x)
      e = Equal(s, m1)
      ne = Not(e) })");
  // A dim is never negative: N == -1 is false; 4 == 4 is true.
  EXPECT_EQ(Elements(a->shapes, (*a)["e"]), "[#0,#1]");
  EXPECT_EQ(Elements(a->shapes, (*a)["ne"]), "[#1,#0]");
  EXPECT_EQ(a->shapes.UniformBool((*a)["e"]), std::nullopt);  // mixed
}

TEST(SymbolicShapes, FirstWithSameElements) {
  auto a = Analyze(R"(g (float[N,4] x) => (int64 y) {
      zero = Constant<value = int64 {0}>()
      s1 = Shape(x)
      s2 = Shape(x)
      g1 = Gather(s1, zero)
      g2 = Gather(s2, zero)
      y = Add(g1, g2) })");
  EXPECT_EQ(a->shapes.FirstWithSameElements((*a)["g2"]), (*a)["g1"]);
  EXPECT_EQ(a->shapes.FirstWithSameElements((*a)["s2"]), (*a)["s1"]);
  EXPECT_EQ(a->shapes.FirstWithSameElements((*a)["g1"]), (*a)["g1"]);
}

TEST(SymbolicShapes, UnknownDimsAreTheirOwnSymbols) {
  auto a = Analyze(R"(g (float[?,4] x, float[?,4] z) => (bool e) {
      zero = Constant<value = int64 {0}>()
      a1 = Shape(x)
      a2 = Shape(z)
      b1 = Gather(a1, zero)
      b2 = Gather(a2, zero)
      e = Equal(b1, b2) })");
  // Two unknown dims of different values may differ: nothing is decided, and the
  // comparison is a vector of its own (its element is itself).
  EXPECT_FALSE(a->shapes.IsComputed((*a)["e"]));
  EXPECT_EQ(Elements(a->shapes, (*a)["e"]).substr(0, 3), "(u:");
  EXPECT_EQ(a->shapes.FirstWithSameElements((*a)["b2"]), (*a)["b2"]);
}

TEST(SymbolicShapes, ShapeForPrefersTheVector) {
  auto a = Analyze(R"(g (float[N,4] x) => (int64[2] s) { s = Shape(x) })");
  auto shape = a->shapes.ShapeFor((*a)["s"]);
  ASSERT_TRUE(shape);
  EXPECT_EQ(ShapeToString(*shape), "[2]");
  EXPECT_EQ(a->shapes.VectorOf((*a)["x"]), nullptr);  // float: not a vector the analysis describes
}

}  // namespace
}  // namespace onnxsurgeon

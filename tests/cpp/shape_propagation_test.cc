// Local shape propagation (core/shape/propagate.h): each rule on small text models, and
// every type the rules give checked against onnx shape inference, on these models, on
// the real-model corpus and on the ONNX backend node tests (tests/models/.generated).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/analysis/type_facts.h"
#include "core/eval/slicing.h"
#include "core/io/importer.h"
#include "core/shape/propagate.h"
#include "core/shape/rules.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {
namespace fs = std::filesystem;
using testing::Parse;

// "float[2,N,?]", or "none".
std::string TypeString(const onnx::TypeProto* t) {
  if (!t || !t->has_tensor_type()) return "none";
  std::string s = onnx::TensorProto::DataType_Name(t->tensor_type().elem_type());
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  if (!t->tensor_type().has_shape()) return s;
  std::vector<std::string> dims;
  for (const auto& d : t->tensor_type().shape().dim())
    dims.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  return absl::StrCat(s, "[", absl::StrJoin(dims, ","), "]");
}

// "" when our type agrees with onnx's, else why: same element type; where onnx has a
// static dim, the same one or a symbol (ours less specific); where onnx has a symbol, the
// same symbol or a static size (ours more specific); where onnx knows nothing (or made
// up a fresh symbol), anything.
std::string Disagreement(const onnx::TypeProto& ours, const onnx::TypeProto* theirs) {
  if (!theirs || !theirs->has_tensor_type()) return "";
  const auto& a = ours.tensor_type();
  const auto& b = theirs->tensor_type();
  std::string both = absl::StrCat("ours ", TypeString(&ours), ", onnx ", TypeString(theirs));
  if (b.elem_type() != 0 && a.elem_type() != b.elem_type()) return both;
  if (!b.has_shape()) return "";
  if (a.shape().dim_size() != b.shape().dim_size()) return both;
  for (int i = 0; i < a.shape().dim_size(); ++i) {
    const auto& x = a.shape().dim(i);
    const auto& y = b.shape().dim(i);
    // A negative dim_value (Paddle writes -1) is no size; a symbol of ours where onnx found
    // a size is less precise, not contrary (a declared symbol onnx's inference refined).
    if (y.has_dim_value() && y.dim_value() >= 0 && x.has_dim_value() && x.dim_value() != y.dim_value()) return both;
    if (y.has_dim_value() && y.dim_value() >= 0 && !x.has_dim_value() && x.dim_param().empty()) return both;
    // onnx names a dim it does not know "unk__<n>", a fresh symbol: no information.
    bool fresh = absl::StartsWith(y.dim_param(), "unk__");
    if (y.has_dim_param() && !fresh && !x.has_dim_value() && x.dim_param() != y.dim_param()) return both;
  }
  return "";
}

struct Comparison {
  int compared = 0;
  std::vector<std::string> disagreements;
};

// Compares what the rules give on `model` with onnx inference, with and without data
// propagation. Models onnx refuses are skipped.
void CompareWithOnnx(const Model& model, const std::string& label, Comparison& c) {
  auto ours = PropagatedTypes(model.graph());
  if (ours.empty()) return;
  for (bool data_propagation : {false, true}) {
    InferShapesOptions options;
    options.data_propagation = data_propagation;
    options.max_payload_bytes = -1;
    auto inferred = InferredCopy(model, options);
    if (!inferred.ok()) continue;
    absl::flat_hash_map<const Value*, onnx::TypeProto> theirs;
    inferred->ForEachType([&](Value* v, const onnx::TypeProto& t) { theirs[v] = t; });
    for (const auto& [v, type] : ours) {
      auto it = theirs.find(v);
      ++c.compared;
      std::string why = Disagreement(type, it == theirs.end() ? nullptr : &it->second);
      if (!why.empty())
        c.disagreements.push_back(absl::StrCat(label, ": ", v->producer()->op_type(), " -> ", v->name(), ": ", why,
                                               data_propagation ? " (data propagation)" : ""));
    }
  }
}

// Name -> type string of what the rules give on `text` (graph output types dropped, so
// the rules type them too), after checking them against onnx.
std::map<std::string, std::string> Propagate(const std::string& text) {
  auto model = Parse(text);
  if (!model) return {};
  for (Value* v : model->graph().outputs()) v->mutable_info()->clear_type();
  Comparison c;
  CompareWithOnnx(*model, "text", c);
  EXPECT_TRUE(c.disagreements.empty()) << absl::StrJoin(c.disagreements, "\n");
  std::map<std::string, std::string> out;
  for (const auto& [v, type] : PropagatedTypes(model->graph())) out[v->name()] = TypeString(&type);
  return out;
}

std::string At(const std::map<std::string, std::string>& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? "none" : it->second;
}

constexpr const char* kHeader17 = R"(<ir_version: 8, opset_import: ["" : 17]> )";

TEST(ShapePropagation, UnaryAndCast) {
  auto t = Propagate(std::string(kHeader17) + R"(g (float[N,4] x) => (int64[N,4] y) {
      a = Relu(x)  b = Softmax<axis = 1>(a)  c = Erf(b)  y = Cast<to = 7>(c)
      d = Not(e)  e = Equal(x, x) })");
  EXPECT_EQ(At(t, "a"), "float[N,4]");
  EXPECT_EQ(At(t, "c"), "float[N,4]");
  EXPECT_EQ(At(t, "y"), "int64[N,4]");
  EXPECT_EQ(At(t, "e"), "bool[N,4]");
  EXPECT_EQ(At(t, "d"), "none");  // before its producer in node order: left to onnx
}

TEST(ShapePropagation, BroadcastWithSymbolicDims) {
  auto t = Propagate(std::string(kHeader17) + R"(g (float[N,1,4] x, float[N,3,1] y, float[M,1,1] z,
      float[4] w, float[1,4] one, float[5,1,1] five, float[?,4] u) => (float[N,3,4] a) {
      a = Add(x, y)  b = Mul(x, w)  c = Sub(x, z)  d = Div(z, five)  e = Add(one, x)
      f = Add(u, u)  g = Add(u, one)  h = Less(x, y)  k = Where(h, x, y) })");
  EXPECT_EQ(At(t, "b"), "float[N,1,4]");
  EXPECT_EQ(At(t, "c"), "none");          // N against M: undecidable, so nothing
  EXPECT_EQ(At(t, "d"), "float[5,1,1]");  // a static size other than 1 decides
  EXPECT_EQ(At(t, "e"), "float[N,1,4]");
  EXPECT_EQ(At(t, "f"), "none");        // two unknown dims
  EXPECT_EQ(At(t, "g"), "float[?,4]");  // an unknown dim against 1 stays unknown
  // x's N and y's N are two inputs' declarations (InputSymbol: y's reads N@y): which
  // broadcasts is undecidable.
  EXPECT_EQ(At(t, "h"), "none");
  EXPECT_EQ(At(t, "k"), "none");
  auto one = Propagate(std::string(kHeader17) + R"(g (float[N,1,4] x) => (float[N,1,4] k) {
      y = Relu(x)  h = Less(x, y)  k = Where(h, x, y) })");
  EXPECT_EQ(At(one, "h"), "bool[N,1,4]");  // one input's N: the same size
  EXPECT_EQ(At(one, "k"), "float[N,1,4]");
}

TEST(ShapePropagation, BroadcastRules) {
  using shape_rules::Broadcast;
  Shape a = {Dim::Symbolic("N"), Dim::Static(1)}, b = {Dim::Static(3)}, c = {Dim::Static(2)};
  EXPECT_EQ(ShapeToString(*Broadcast({&a, &b})), "[N,3]");
  EXPECT_FALSE(Broadcast({&b, &c}));  // 3 against 2: invalid
  Shape n = {Dim::Symbolic("N")}, m = {Dim::Symbolic("M")};
  EXPECT_EQ(ShapeToString(*Broadcast({&n, &n})), "[N]");
  EXPECT_FALSE(Broadcast({&n, &m}));
}

TEST(ShapePropagation, MatMulRanks) {
  auto t = Propagate(std::string(kHeader17) + R"(g (float[B,5,32] x, float[32,8] w, float[32] v,
      float[8,32] r, float[1,8,32,4] q, float[3,1,5,32] p) => (float[B,5,8] a) {
      a = MatMul(x, w)  b = MatMul(x, v)  c = MatMul(v, w)  d = MatMul(v, v)  e = MatMul(r, x)
      f = MatMul(p, q)  g = MatMul(x, r) })");
  EXPECT_EQ(At(t, "a"), "float[B,5,8]");
  EXPECT_EQ(At(t, "b"), "float[B,5]");
  EXPECT_EQ(At(t, "c"), "float[8]");
  EXPECT_EQ(At(t, "d"), "float[]");
  EXPECT_EQ(At(t, "e"), "none");  // 32 against 5: not a valid MatMul
  EXPECT_EQ(At(t, "f"), "float[3,8,5,4]");
  EXPECT_EQ(At(t, "g"), "none");
}

TEST(ShapePropagation, Gemm) {
  auto t = Propagate(std::string(kHeader17) +
                     R"(g (float[N,4] a, float[6,4] b, float[6] c, float[4,N] t, float[4] w) => (float[N,6] y) {
      y = Gemm<transB = 1>(a, b, c)  z = Gemm<transA = 1, transB = 1>(t, b)  u = Gemm(a, w) })");
  EXPECT_EQ(At(t, "y"), "float[N,6]");
  EXPECT_EQ(At(t, "z"), "float[N@t,6]");  // t's N: another input's declaration (InputSymbol)
  EXPECT_EQ(At(t, "u"), "none");          // w is rank 1
}

TEST(ShapePropagation, ReshapeZeroMinusOneAllowzero) {
  auto t = Propagate(R"(<ir_version: 8, opset_import: ["" : 14]> g (float[N,4,8] x, float[2,0,3] z) => (float[N,32] a) {
      s1 = Constant<value = int64[2] {0, -1}>()  a = Reshape(x, s1)
      s2 = Constant<value = int64[3] {-1, 2, 2}>()  b = Reshape(x, s2)
      s3 = Constant<value = int64[2] {0, 3}>()  c = Reshape<allowzero = 1>(z, s3)
      s5 = Constant<value = int64[3] {0, 8, 4}>()  d = Reshape(x, s5)
      s4 = Constant<value = int64[1] {-1}>()  e = Reshape(z, s4) })");
  EXPECT_EQ(At(t, "s1"), "int64[2]");
  EXPECT_EQ(At(t, "a"), "float[N,32]");
  EXPECT_EQ(At(t, "b"), "float[?,2,2]");  // N is not a number: -1 stays unknown
  EXPECT_EQ(At(t, "c"), "float[0,3]");    // allowzero: 0 is a size
  EXPECT_EQ(At(t, "d"), "float[N,8,4]");  // 0 copies the input dim
  EXPECT_EQ(At(t, "e"), "float[0]");
}

TEST(ShapePropagation, UnsqueezeSqueezeByOpset) {
  auto t11 = Propagate(R"(<ir_version: 7, opset_import: ["" : 11]> g (float[N,4] x) => (float[1,N,4,1] y) {
      y = Unsqueeze<axes = [0, -1]>(x)  z = Squeeze<axes = [0]>(y)  w = Squeeze(y) })");
  EXPECT_EQ(At(t11, "y"), "float[1,N,4,1]");
  EXPECT_EQ(At(t11, "z"), "float[N,4,1]");
  EXPECT_EQ(At(t11, "w"), "none");  // which dims are 1 is undecidable with N
  auto t13 = Propagate(R"(<ir_version: 7, opset_import: ["" : 13]> g (float[N,4] x) => (float[N,1,4] y) {
      axes = Constant<value = int64[1] {1}>()  y = Unsqueeze(x, axes)  z = Squeeze(y, axes)
      u = Unsqueeze<axes = [0]>(x) })");
  EXPECT_EQ(At(t13, "y"), "float[N,1,4]");
  EXPECT_EQ(At(t13, "z"), "float[N,4]");
  EXPECT_EQ(At(t13, "u"), "none");  // from opset 13 axes are an input, not an attribute
}

TEST(ShapePropagation, TransposeConcatFlattenExpand) {
  auto t =
      Propagate(std::string(kHeader17) + R"(g (float[N,3,5] x, float[N,2,5] y, float[2,3,4] s) => (float[5,3,N] a) {
      a = Transpose(x)  b = Transpose<perm = [0, 2, 1]>(x)  c = Concat<axis = 1>(x, y)
      d = Concat<axis = 0>(x, y)  e = Flatten<axis = 1>(x)  f = Flatten<axis = 2>(s)  g = Flatten<axis = 0>(s)
      k = Constant<value = int64[3] {4, 1, 1}>()  h = Expand(x, k) })");
  EXPECT_EQ(At(t, "a"), "float[5,3,N]");
  EXPECT_EQ(At(t, "b"), "float[N,5,3]");
  EXPECT_EQ(At(t, "c"), "none");  // x's N against y's N@y: two inputs' declarations
  EXPECT_EQ(At(t, "d"), "none");  // 3 against 2 off the axis
  EXPECT_EQ(At(t, "e"), "float[N,15]");
  EXPECT_EQ(At(t, "f"), "float[6,4]");
  EXPECT_EQ(At(t, "g"), "float[1,24]");
  EXPECT_EQ(At(t, "h"), "float[4,3,5]");  // N against 4: only 4 (or N = 1) is valid
}

TEST(ShapePropagation, ReductionsGatherShapeLayerNorm) {
  auto t = Propagate(
      R"(<ir_version: 8, opset_import: ["" : 18]> g (float[N,5,32] x, float[32] w, float[32] b) => (float[N,5,32] y) {
      axes = Constant<value = int64[1] {-1}>()  m = ReduceMean(x, axes)  n = ReduceMean<keepdims = 0>(x, axes)
      all = ReduceSum(x)  s = Shape(x)  s2 = Shape<start = 1>(x)  i = Constant<value = int64 {1}>()
      d = Gather(s, i)  gg = Gather<axis = 1>(x, axes)
      y, mean, inv = LayerNormalization<axis = -1>(x, w, b) })");
  EXPECT_EQ(At(t, "m"), "float[N,5,1]");
  EXPECT_EQ(At(t, "n"), "float[N,5]");
  EXPECT_EQ(At(t, "all"), "float[1,1,1]");
  EXPECT_EQ(At(t, "s"), "int64[3]");
  EXPECT_EQ(At(t, "s2"), "int64[2]");
  EXPECT_EQ(At(t, "d"), "int64[]");
  EXPECT_EQ(At(t, "gg"), "float[N,1,32]");
  EXPECT_EQ(At(t, "y"), "float[N,5,32]");
  EXPECT_EQ(At(t, "mean"), "float[N,5,1]");
  EXPECT_EQ(At(t, "inv"), "float[N,5,1]");
  auto t13 = Propagate(R"(<ir_version: 7, opset_import: ["" : 13]> g (float[N,5] x) => (float[N,1] m) {
      m = ReduceMean<axes = [1]>(x) })");
  EXPECT_EQ(At(t13, "m"), "float[N,1]");
}

TEST(ShapePropagation, ConvPoolNorm) {
  auto t = Propagate(std::string(kHeader17) + R"(g (float[N,3,32,32] x, float[8,3,3,3] w, float[N,3,H,W] s,
      float[3] sc, float[3] b, float[3] m, float[3] v) => (float[N,8,30,30] a) {
      a = Conv(x, w)  c = Conv<pads = [1, 1, 1, 1], strides = [2, 2]>(x, w)
      d = Conv<auto_pad = "SAME_UPPER", strides = [2, 2], dilations = [2, 2]>(x, w)  e = Conv(s, w)
      f = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(x)  g, gi = MaxPool<kernel_shape = [3, 3], auto_pad = "SAME_LOWER">(x)
      h = MaxPool<kernel_shape = [3, 3], ceil_mode = 1, strides = [2, 2]>(x)  k = AveragePool<kernel_shape = [4, 4]>(s)
      p = GlobalAveragePool(s)  q = BatchNormalization(x, sc, b, m, v)  r = InstanceNormalization(s, sc, b) })");
  EXPECT_EQ(At(t, "a"), "float[N,8,30,30]");
  EXPECT_EQ(At(t, "c"), "float[N,8,16,16]");
  EXPECT_EQ(At(t, "d"), "float[N,8,16,16]");
  EXPECT_EQ(At(t, "e"), "float[N@s,8,?,?]");  // symbolic spatial dims: unknown, not guessed
  EXPECT_EQ(At(t, "f"), "float[N,3,16,16]");
  EXPECT_EQ(At(t, "g"), "float[N,3,32,32]");
  EXPECT_EQ(At(t, "gi"), "int64[N,3,32,32]");
  EXPECT_EQ(At(t, "h"), "none");  // ceil_mode: rounding differs between onnx versions
  EXPECT_EQ(At(t, "k"), "float[N@s,3,?,?]");
  EXPECT_EQ(At(t, "p"), "float[N@s,3,1,1]");
  EXPECT_EQ(At(t, "q"), "float[N,3,32,32]");
  EXPECT_EQ(At(t, "r"), "float[N@s,3,H,W]");  // s reads N@s: its own
}

TEST(ShapePropagation, SliceConstantOfShapeExpandFromShape) {
  auto t = Propagate(std::string(kHeader17) + R"(g (float[N,10,6] x, int64[2] ends) => (float[N,4,6] a) {
      st = Constant<value = int64[1] {2}>()  en = Constant<value = int64[1] {-4}>()  ax = Constant<value = int64[1] {1}>()
      a = Slice(x, st, en, ax)  big = Constant<value = int64[1] {9223372036854775807}>()  m1 = Constant<value = int64[1] {-1}>()
      b = Slice(x, m1, big, ax, m1)  c = Slice(x, st, ends)
      s = Shape(x)  z = Constant<value = int64 {0}>()  n = Gather(s, z)  nn = Unsqueeze(n, z)
      tail = Slice(s, st, big)  shape = Concat<axis = 0>(nn, tail)
      f = ConstantOfShape<value = int32[1] {1}>(shape)  e = Expand(f, nn)
      r = Reshape(f, shape)  g = Trilu(x)  ix = Constant<value = int64[1,1] {0}>()
      u = Constant<value = float[1,10,6] {0}>()  sc = ScatterND(x, ix, u) })");
  EXPECT_EQ(At(t, "a"), "float[N,4,6]");
  EXPECT_EQ(At(t, "b"), "float[N,0,6]");  // backwards from the end towards INT64_MAX: empty
  EXPECT_EQ(At(t, "c"), "float[?,?,?]");  // bounds not constant: onnx keeps only the rank
  EXPECT_EQ(At(t, "tail"), "int64[1]");
  EXPECT_EQ(At(t, "f"), "int32[N,6]");  // the shape's values, symbol and all
  EXPECT_EQ(At(t, "e"), "int32[N,6]");
  EXPECT_EQ(At(t, "r"), "none");  // a computed shape with a symbol: left to onnx
  EXPECT_EQ(At(t, "g"), "float[N,10,6]");
  EXPECT_EQ(At(t, "sc"), "float[N,10,6]");
}

TEST(ShapePropagation, IfBranchesAndLoopBody) {
  auto t = Propagate(std::string(kHeader17) + R"(g (bool c, float[N,4] x, float[4] y, int64 trip) => (float[N,4] a) {
      a = If(c) <then_branch = t () => (float[N,4] ta) { ta = Relu(x) },
                 else_branch = e () => (float[N,4] ea) { ea = Add(x, y) }>
      b = If(c) <then_branch = t2 () => (float[N,4] tb) { tb = Relu(x) },
                 else_branch = e2 () => (float[4] eb) { eb = Relu(y) }>
      l = Loop(trip, c, x) <body = body (int64 i, bool cin, float[N,4] h) => (bool cout, float[N,4] hout) {
          cout = Identity(cin)  hout = Tanh(h) }>
      m = Loop(trip, c, y) <body = body2 (int64 i2, bool cin2, float[4] g) => (bool cout2, float[N,4] gout) {
          cout2 = Identity(cin2)  gout = Add(g, x) }> })");
  EXPECT_EQ(At(t, "a"), "float[N,4]");
  EXPECT_EQ(At(t, "b"), "none");        // ranks differ: onnx knows no shape
  EXPECT_EQ(At(t, "cout"), "none");     // a subgraph output declares its type
  EXPECT_EQ(At(t, "l"), "float[N,4]");  // the initial value and the body output agree
  EXPECT_EQ(At(t, "m"), "none");        // [4] initially, [N,4] after an iteration
}

TEST(ShapePropagation, UnknownOpStopsPropagation) {
  auto t = Propagate(std::string(kHeader17) + R"(g (float[N,4] x) => (float[N,4] z) {
      a = Relu(x)  k = Constant<value = int64[1] {2}>()  b, idx = TopK<axis = 1>(a, k)
      c = com.example.Foo(a)  z = Relu(c)  w = Relu(b) })");
  EXPECT_EQ(At(t, "a"), "float[N,4]");
  EXPECT_EQ(At(t, "c"), "none");
  EXPECT_EQ(At(t, "z"), "none");
  EXPECT_EQ(At(t, "w"), "none");
}

TEST(ShapePropagation, DeclaredTypesAreKept) {
  auto model = Parse(std::string(kHeader17) + R"(g (float[N,4] x) => (float[N,4] y) { a = Relu(x)  y = Relu(a) })");
  ASSERT_TRUE(model);
  InferShapesOptions options;
  options.record_value_info = false;
  EXPECT_EQ(PropagateShapes(*model, options), 1);  // a; y is typed by the output entry
  Value* a = model->graph().FindValue("a");
  EXPECT_EQ(TypeString(a->type()), "float[N,4]");
  EXPECT_FALSE(a->in_value_info());  // in memory only
  EXPECT_FALSE(HasUntypedOutputs(*model));
}

TEST(ShapePropagation, EnsureSkipsOnnxWhenRulesSuffice) {
  auto model = Parse(std::string(kHeader17) + R"(g (float[N,4] x) => (float[N,?] y) {
      a = Relu(x)  b = com.example.Foo(a)  y = Relu(b) })");
  ASSERT_TRUE(model);
  TypeRequest request;
  request.infer.record_value_info = false;
  int asked = 0;
  auto needs_a = [&](const Model& m) {
    ++asked;
    return !m.graph().FindValue("a")->has_type();
  };
  EXPECT_EQ(*TypeFacts::Ensure(*model, needs_a, request), 1);
  EXPECT_EQ(asked, 2);                     // before and after the rules; onnx not needed
  EXPECT_TRUE(HasUntypedOutputs(*model));  // b: a custom op
}

// Every model under `dir` (*.onnx; in subfolders too when `recursive`), as loaded and with
// value_info dropped (so the rules type every value they can), compared with onnx inference.
Comparison CompareFolder(const fs::path& dir, bool recursive) {
  Comparison c;
  std::vector<fs::path> files;
  if (recursive) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) files.push_back(entry.path());
  } else {
    for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  }
  for (const fs::path& path : files) {
    if (path.extension() != ".onnx") continue;
    std::ifstream f(path, std::ios::binary);
    std::stringstream bytes;
    bytes << f.rdbuf();
    for (bool drop : {false, true}) {
      onnx::ModelProto proto;
      EXPECT_TRUE(proto.ParseFromString(bytes.str())) << path;
      if (drop) proto.mutable_graph()->clear_value_info();
      auto model = ImportModel(std::move(proto));
      if (!model.ok()) {
        ADD_FAILURE() << path << ": " << model.status();
        continue;
      }
      CompareWithOnnx(**model, fs::relative(path, dir).string(), c);
    }
  }
  return c;
}

const fs::path kModels = fs::path(ONNXSURGEON_SOURCE_DIR) / "tests" / "models" / ".generated";

// `make test` makes the models before the C++ suite runs; a bare ctest without them skips.
TEST(ShapePropagation, AgreesWithOnnxOnCorpus) {
  if (!fs::exists(kModels)) GTEST_SKIP() << "no corpus (tests/models/.generated: make models)";
  Comparison c = CompareFolder(kModels, /*recursive=*/false);  // the backend node tests have their own test
  EXPECT_GT(c.compared, 1000);
  EXPECT_TRUE(c.disagreements.empty()) << c.disagreements.size() << " disagreements:\n"
                                       << absl::StrJoin(c.disagreements, "\n");
}

TEST(ShapePropagation, AgreesWithOnnxOnBackendNodeTests) {
  const fs::path dir = kModels / "backend-node";
  if (!fs::exists(dir)) GTEST_SKIP() << "no backend node tests (make models)";
  Comparison c = CompareFolder(dir, /*recursive=*/true);
  EXPECT_GT(c.compared, 1000);
  EXPECT_TRUE(c.disagreements.empty()) << c.disagreements.size() << " disagreements:\n"
                                       << absl::StrJoin(c.disagreements, "\n");
}

// Slice's clamping, shared by the kernels, the rules and resolve-shapes (onnxruntime
// takes element 0 for x[-10:-20:-1] of 5 elements: the start clamps into [0, dim-1]).
TEST(Slicing, ClampSliceFollowsTheSpec) {
  auto take = [](int64_t dim, int64_t start, int64_t end, int64_t step) {
    auto a = ClampSlice(dim, start, end, step);
    return a ? std::vector<int64_t>{a->start, a->end, a->count} : std::vector<int64_t>{};
  };
  EXPECT_EQ(take(5, 1, 4, 1), (std::vector<int64_t>{1, 4, 3}));
  EXPECT_EQ(take(5, -2, INT64_MAX, 1), (std::vector<int64_t>{3, 5, 2}));
  EXPECT_EQ(take(5, 0, 5, 2), (std::vector<int64_t>{0, 5, 3}));
  EXPECT_EQ(take(5, INT64_MAX, INT64_MIN, -1), (std::vector<int64_t>{4, -1, 5}));
  EXPECT_EQ(take(5, -10, -20, -1), (std::vector<int64_t>{0, -1, 1}));
  EXPECT_EQ(take(5, 4, 0, INT64_MIN), (std::vector<int64_t>{4, 0, 1}));
  EXPECT_EQ(take(5, 0, 5, INT64_MAX), (std::vector<int64_t>{0, 5, 1}));
  EXPECT_EQ(take(0, 0, -1, -1), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(take(5, 3, 1, 1), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_TRUE(take(5, 0, 5, 0).empty());
  EXPECT_EQ(ShapeRange(4, 1, -1), (std::pair<int64_t, int64_t>{1, 3}));
  EXPECT_EQ(ShapeRange(4, -10, 10), (std::pair<int64_t, int64_t>{0, 4}));
  EXPECT_EQ(ShapeRange(4, 3, 1), (std::pair<int64_t, int64_t>{3, 3}));
}

}  // namespace
}  // namespace onnxsurgeon

// Load-time validation (core/io/validate.h): each rule refuses its bad model with an error
// naming the node, tensor or field, and lets the valid neighbour through.
#include <gtest/gtest.h>

#include "core/io/model_io.h"
#include "onnx/defs/parser.h"
#include "tests/cpp/temp_files.h"

namespace onnxsurgeon {
namespace {

onnx::ModelProto ParseProto(const std::string& text) {
  onnx::ModelProto p;
  auto s = onnx::OnnxParser::Parse(p, text.c_str());
  EXPECT_TRUE(s.IsOK()) << s.ErrorMessage();
  return p;
}

const char* kAdd = R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[4] X) => (float[4] Y) <float[4] W = {1, 2, 3, 4}> { [add] Y = Add(X, W) })";

// "" when the model loads, else its error.
std::string LoadError(const onnx::ModelProto& p) {
  auto m = LoadModelFromBytes(p.SerializeAsString());
  return m.ok() ? "" : std::string(m.status().message());
}

// The parts are copied into strings: a part may be a temporary (std::to_string(v)) that a
// `const char*` list would outlive (ASan: stack-use-after-scope).
#define EXPECT_REFUSED(proto, ...)                                                    \
  do {                                                                                \
    std::string err = LoadError(proto);                                               \
    EXPECT_FALSE(err.empty()) << "loaded";                                            \
    for (const std::string& part : std::initializer_list<std::string>{__VA_ARGS__}) { \
      EXPECT_NE(err.find(part), std::string::npos) << err;                            \
    }                                                                                 \
  } while (0)

TEST(Validate, ValidModelLoads) { EXPECT_EQ(LoadError(ParseProto(kAdd)), ""); }

TEST(Validate, IrVersionGraphAndOpsets) {
  for (int64_t v : {0, -1, 99}) {
    auto p = ParseProto(kAdd);
    p.set_ir_version(v);
    EXPECT_REFUSED(p, "ir_version", std::to_string(v).c_str());
  }
  auto no_ir = ParseProto(kAdd);
  no_ir.clear_ir_version();
  EXPECT_REFUSED(no_ir, "ir_version missing");
  auto no_graph = ParseProto(kAdd);
  no_graph.clear_graph();
  EXPECT_REFUSED(no_graph, "no graph");
  auto no_opset = ParseProto(kAdd);
  no_opset.clear_opset_import();
  EXPECT_REFUSED(no_opset, "opset_import is empty");
  for (int64_t v : {0, 99}) {
    auto p = ParseProto(kAdd);
    p.mutable_opset_import(0)->set_version(v);
    EXPECT_REFUSED(p, "opset", std::to_string(v).c_str(), "'ai.onnx'");
  }
  // The same import twice (skl2onnx writes it) is accepted, as onnx's checker and
  // onnxruntime accept it; two versions for one domain are ambiguous.
  auto twice = ParseProto(kAdd);
  auto* again = twice.add_opset_import();
  again->set_domain("ai.onnx");
  again->set_version(18);
  EXPECT_EQ(LoadError(twice), "");
  again->set_version(17);
  EXPECT_REFUSED(twice, "imports domain 'ai.onnx' twice, as opset 18 and 17");
  auto custom = ParseProto(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[4] X) => (float[4] Y) { [c] Y = my.Op(X) })");
  EXPECT_REFUSED(custom, "node 'c' (my::Op)", "domain 'my'", "does not import");
  custom.add_opset_import()->set_domain("my");
  EXPECT_EQ(LoadError(custom), "");
}

TEST(Validate, DuplicateFunctionsAndOutputs) {
  auto p = ParseProto(R"(<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[4] X) => (float[4] Y) { [f] Y = local.F(X) }
<domain: "local", opset_import: ["" : 18]> F (x) => (y) { y = Neg(x) }
<domain: "local", opset_import: ["" : 18]> F (x) => (y) { y = Relu(x) })");
  EXPECT_REFUSED(p, "function 'local::F'", "defined twice");
  auto outputs = ParseProto(kAdd);
  *outputs.mutable_graph()->add_output() = outputs.graph().output(0);
  EXPECT_REFUSED(outputs, "main graph", "lists output 'Y' twice");
  auto none = ParseProto(kAdd);
  none.mutable_graph()->clear_output();
  EXPECT_REFUSED(none, "declares no outputs");
}

TEST(Validate, NodeArityFollowsTheSchema) {
  auto p = ParseProto(kAdd);
  p.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast();
  EXPECT_REFUSED(p, "node 'add' (Add)", "has 1 inputs", "takes 2");
  auto three = ParseProto(kAdd);
  three.mutable_graph()->mutable_node(0)->add_input("X");
  EXPECT_REFUSED(three, "has 3 inputs");
  auto outputs = ParseProto(kAdd);
  outputs.mutable_graph()->mutable_node(0)->add_output("Y2");
  EXPECT_REFUSED(outputs, "has 2 outputs");
  auto empty = ParseProto(kAdd);
  empty.mutable_graph()->mutable_node(0)->set_input(0, "");
  EXPECT_REFUSED(empty, "leaves required input 0", "empty");
  auto in_subgraph = ParseProto(R"(<ir_version: 10, opset_import: ["" : 18]>
g (bool c, float[4] X) => (float[4] Y) {
  [if] Y = If(c) < then_branch = t () => (float[4] T) { [neg] T = Neg(X) },
                   else_branch = e () => (float[4] E) { [id] E = Identity(X) } > })");
  EXPECT_EQ(LoadError(in_subgraph), "");
  in_subgraph.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->add_input("X");
  EXPECT_REFUSED(in_subgraph, "node 'neg' (Neg)", "subgraph");
  // Optional trailing inputs may be empty or absent; unknown and custom ops are opaque.
  auto clip = ParseProto(R"(<ir_version: 10, opset_import: ["" : 18, "x" : 1]>
g (float[4] X) => (float[4] Y) { A = Clip(X, , )  B = Unknown(A, A, A)  Y = x.Any(B, B, B, B) })");
  EXPECT_EQ(LoadError(clip), "");
}

TEST(Validate, TensorDataMatchesDimsAndType) {
  auto raw = ParseProto(kAdd);
  auto* w = raw.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(12, '\0'));  // 3 floats for dims [4]
  EXPECT_REFUSED(raw, "initializer 'W'", "12 bytes", "need 16");
  w->set_raw_data(std::string(16, '\0'));
  EXPECT_EQ(LoadError(raw), "");
  auto typed = ParseProto(kAdd);
  typed.mutable_graph()->mutable_initializer(0)->add_float_data(5);
  EXPECT_REFUSED(typed, "initializer 'W'", "holds 5 data values", "need 4");
  auto wrong_field = ParseProto(kAdd);
  auto* wf = wrong_field.mutable_graph()->mutable_initializer(0);
  wf->clear_float_data();
  for (int i = 0; i < 4; ++i) wf->add_int64_data(i);
  EXPECT_REFUSED(wrong_field, "initializer 'W'", "FLOAT but keeps values in a typed field of another type");
  auto negative = ParseProto(kAdd);
  negative.mutable_graph()->mutable_initializer(0)->set_dims(0, -4);
  EXPECT_REFUSED(negative, "negative dimension");
  auto huge = ParseProto(kAdd);
  huge.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t{1} << 40);
  huge.mutable_graph()->mutable_initializer(0)->add_dims(int64_t{1} << 40);
  EXPECT_REFUSED(huge, "overflows");
  auto undefined = ParseProto(kAdd);
  undefined.mutable_graph()->mutable_initializer(0)->set_data_type(0);
  EXPECT_REFUSED(undefined, "data type 0");
  auto constant = ParseProto(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { [k] C = Constant <value = float[2] {1, 2}> ()  Y = Add(X, C) })");
  EXPECT_EQ(LoadError(constant), "");
  constant.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t()->add_dims(3);
  EXPECT_REFUSED(constant, "node 'k' (Constant) attribute 'value'", "need 6");
}

TEST(Validate, ExternalRangeMustMatchTheTensor) {
  testing::ScratchDir dir;
  testing::WriteBytes(dir / "w.bin", std::string(64, '\0'));
  auto p = ParseProto(kAdd);
  auto* w = p.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const char* v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", "w.bin");
  add("offset", "0");
  testing::WriteBytes(dir / "m.onnx", p.SerializeAsString());
  EXPECT_TRUE(LoadModel(dir / "m.onnx").ok()) << "no length: the tensor's own 16 bytes";
  add("length", "12");
  testing::WriteBytes(dir / "m.onnx", p.SerializeAsString());
  auto m = LoadModel(dir / "m.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("12 bytes of external data"), std::string::npos) << m.status().message();
  w->mutable_external_data(2)->set_value("-1");
  testing::WriteBytes(dir / "m.onnx", p.SerializeAsString());
  m = LoadModel(dir / "m.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("malformed"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace onnxsurgeon

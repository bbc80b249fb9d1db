// Models onnx's checker and onnxruntime both accept, which the loader once refused
// (docs/reliability.md, "Leniency"): each is loaded, and what is saved passes the checker.
#include <gtest/gtest.h>

#include "core/interop/onnx_interop.h"
#include "core/io/model_io.h"
#include "core/pass/validate.h"
#include "onnx/defs/parser.h"
#include "tests/cpp/temp_files.h"

namespace onnxsurgeon {
namespace {

std::string Bytes(const char* text) {
  onnx::ModelProto p;
  auto s = onnx::OnnxParser::Parse(p, text);
  EXPECT_TRUE(s.IsOK()) << s.ErrorMessage();
  return p.SerializeAsString();
}

// A Loop body outputs one value as the carried state and as the scan output: onnx binds
// subgraph outputs by position, so listing it twice is meaningful. The importer gives the
// second listing an Identity, so the IR still holds one graph output per value.
TEST(Leniency, SubgraphOutputListedTwiceIsAccepted) {
  const char* text = R"(<ir_version: 10, opset_import: ["" : 18]>
g (int64 n, bool c, float[2] x) => (float[2] last, float[N, 2] all) {
  last, all = Loop(n, c, x) <body = b (int64 i, bool ci, float[2] xi) => (bool co, float[2] y, float[2] y) {
    co = Identity(ci)
    y = Neg(xi)
  }>
})";
  auto model = LoadModelFromBytes(Bytes(text));
  ASSERT_TRUE(model.ok()) << model.status();
  const Graph& body = *(*(*model)->graph().nodes().begin())->subgraphs().front();
  ASSERT_EQ(body.outputs().size(), 3u);
  EXPECT_NE(body.outputs()[1], body.outputs()[2]);
  EXPECT_EQ(body.outputs()[2]->producer()->op_type(), "Identity");
  EXPECT_EQ(body.outputs()[2]->producer()->input(0), body.outputs()[1]);
  EXPECT_TRUE(ValidateStructure(**model).ok());
  Status checked = CheckModel(**model);
  EXPECT_TRUE(checked.ok()) << checked;
}

// The main graph's outputs are fetched by name: two of one name stay refused.
TEST(Leniency, MainGraphOutputListedTwiceIsStillRefused) {
  auto model = LoadModelFromBytes(Bytes(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[2] x) => (float[2] y, float[2] y) { y = Neg(x) })"));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("lists output 'y' twice"), std::string::npos) << model.status();
}

// On POSIX ':' and '\\' are file-name characters, and onnx's checker and onnxruntime read
// such locations as files in the model's folder; so does the loader (it refused them as
// "not a plain path"). The saved copy keeps the name.
TEST(Leniency, ExternalLocationsWithColonOrBackslashAreFilesInTheFolder) {
  using testing::ReadBytes;
  using testing::WriteBytes;
  for (std::string location : {"w:1.bin", "w\\1.bin", "C:w.bin"}) {
    testing::ScratchDir dir;
    std::filesystem::create_directories(dir.path() / "out");
    onnx::ModelProto p;
    p.ParseFromString(Bytes(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[4] X) => (float[4] Y) <float[4] W = {1, 2, 3, 4}> { Y = Add(X, W) })"));
    onnx::TensorProto* w = p.mutable_graph()->mutable_initializer(0);
    std::string bytes;
    for (float f : w->float_data()) bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
    w->clear_float_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = w->add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    WriteBytes(dir / location, bytes);
    WriteBytes(dir / "m.onnx", p.SerializeAsString());
    auto model = LoadModel(dir / "m.onnx");
    ASSERT_TRUE(model.ok()) << location << ": " << model.status();
    ASSERT_TRUE(SaveModel(**model, dir / "out/m.onnx").ok()) << location;
    EXPECT_EQ(ReadBytes(dir / ("out/" + location)), bytes) << location;
  }
}

}  // namespace
}  // namespace onnxsurgeon

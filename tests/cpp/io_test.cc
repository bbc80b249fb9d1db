// Load/save is lossless, external data works and stays inside the model's folder, and
// every kind of bad input gives a clear error.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/io/exporter.h"
#include "core/io/model_io.h"
#include "core/io/wire.h"
#include "google/protobuf/util/message_differencer.h"
#include "onnx/defs/parser.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {
namespace fs = std::filesystem;
using testing::Parse;

onnx::ModelProto ParseProto(const std::string& text) {
  onnx::ModelProto p;
  auto s = onnx::OnnxParser::Parse(p, text.c_str());
  EXPECT_TRUE(s.IsOK()) << s.ErrorMessage();
  return p;
}

bool Equal(const onnx::ModelProto& a, const onnx::ModelProto& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("onnxsurgeon_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A model with a bit of everything the IR must keep.
constexpr const char* kRich = R"(
<ir_version: 10, opset_import: ["" : 18, "local" : 1], producer_name: "test", doc_string: "a model",
 metadata_props: ["author" : "me"]>
main (float[N,4] X, bool cond) => (float[N,4] Y, float[N,4] Z)
  <float[4] bias = {1, 2, 3, 4}, int64[1] axes = {1}>
{
  [n0] S = Add(X, bias)
  [n1] M = local.Twice(S)
  [n2] Z = If(cond) <
    then_branch = t () => (float[N,4] T) { [tn] T = Neg(M) },
    else_branch = e () => (float[N,4] E) { [en] E = Identity(S) }
  >
  [n3] R = ReduceSum <keepdims: int = 1> (M, axes)
  [n4] Y = Sub(M, R)
}
<domain: "local", opset_import: ["" : 18]>
Twice (x) => (y) {
  two = Constant <value = float {2.0}> ()
  y = Mul(x, two)
}
)";

TEST(RoundTrip, TextModelExportsEqual) {
  onnx::ModelProto original = ParseProto(kRich);
  original.mutable_graph()->add_value_info()->set_name("S");  // a typeless value_info entry
  *original.mutable_graph()->add_value_info() = original.graph().input(0);
  original.mutable_graph()->mutable_value_info(1)->set_name("dangling_annotation");
  auto model = LoadModelFromBytes(original.SerializeAsString());
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_TRUE(Equal(ExportModel(**model), original));
  auto bytes = SaveModelToBytes(**model);
  ASSERT_TRUE(bytes.ok());
  onnx::ModelProto reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(*bytes));
  EXPECT_TRUE(Equal(reparsed, original));
}

// A body may define a name its enclosing graph defines after the body's node (onnx's
// checker allows it), but onnxruntime refuses such a body once it reads a value an outer
// node makes; the If's own output name is fine in both. Export renames the first only.
TEST(RoundTrip, BodyNamesAnOuterNodeDefinesLaterAreRenamed) {
  auto model = LoadModelFromBytes(ParseProto(R"(
<ir_version: 10, opset_import: ["" : 18]>
main (float[2] X, bool cond) => (float[2] Z) {
  A = Relu(X)
  Y = If(cond) <
    then_branch = t () => (float[2] Y) { B = Neg(A)  Y = Identity(B) },
    else_branch = e () => (float[2] Y) { B = Abs(A)  Y = Identity(B) }
  >
  B = Abs(X)
  Z = Add(Y, B)
}
)")
                                      .SerializeAsString());
  ASSERT_TRUE(model.ok()) << model.status().message();
  onnx::ModelProto out = ExportModel(**model);
  for (const auto* branch : {&out.graph().node(1).attribute(0).g(), &out.graph().node(1).attribute(1).g()}) {
    EXPECT_NE(branch->node(0).output(0), "B");  // renamed: the outer B comes after the If
    EXPECT_EQ(branch->node(1).input(0), branch->node(0).output(0));
    EXPECT_EQ(branch->node(1).output(0), "Y");  // the If's own output: kept
  }
  EXPECT_EQ(out.graph().node(2).output(0), "B");
}

TEST(RoundTrip, UnknownFieldsSurvive) {
  onnx::ModelProto original = ParseProto(kRich);
  std::string bytes = original.SerializeAsString();
  // Field 999 (varint 7) appended to the ModelProto: a field from a future onnx.proto.
  bytes += std::string("\xb8\x3e\x07", 3);
  auto model = LoadModelFromBytes(bytes);
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto out = SaveModelToBytes(**model);
  ASSERT_TRUE(out.ok());
  onnx::ModelProto a, b;
  ASSERT_TRUE(a.ParseFromString(bytes));
  ASSERT_TRUE(b.ParseFromString(*out));
  EXPECT_EQ(a.unknown_fields().field_count(), 1);
  EXPECT_TRUE(Equal(a, b));
}

// The text parser writes float_data; exporters write raw_data. Use the latter.
void MakeRaw(onnx::TensorProto* t) {
  ASSERT_EQ(t->data_type(), onnx::TensorProto::FLOAT);
  std::string raw(reinterpret_cast<const char*>(t->float_data().data()), t->float_data_size() * sizeof(float));
  t->clear_float_data();
  t->set_raw_data(raw);
}

// kRich with its "bias" in raw_data and a second raw initializer of `n` floats.
onnx::ModelProto RichWithRawWeights(int n) {
  onnx::ModelProto p = ParseProto(kRich);
  MakeRaw(p.mutable_graph()->mutable_initializer(0));
  onnx::TensorProto* w = p.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(n);
  std::string raw(n * sizeof(float), '\0');
  for (int i = 0; i < n; ++i) {
    float f = 0.5f * static_cast<float>(i);
    std::memcpy(&raw[i * sizeof(float)], &f, sizeof(float));
  }
  w->set_raw_data(raw);
  return p;
}

// RichWithRawWeights(8192), and the same with "w" (#2) taken out: its raw_data in a buffer
// of its own, the rest serialized.
struct WeightTakenOut {
  onnx::ModelProto original = RichWithRawWeights(8192);
  std::shared_ptr<std::string> payload;
  std::shared_ptr<std::string> bytes;
  WeightTakenOut() {
    onnx::ModelProto slim = original;
    payload =
        std::make_shared<std::string>(std::move(*slim.mutable_graph()->mutable_initializer(2)->mutable_raw_data()));
    slim.mutable_graph()->mutable_initializer(2)->clear_raw_data();
    bytes = std::make_shared<std::string>(slim.SerializeAsString());
  }
};

// Given:   a ModelProto with raw weights, "w" (#2) taken out of it into a buffer of its own
// Execute: LoadModelFromParts(slim bytes, {{2, buffer}})
// Result:  the model equals the original; "w" views the buffer (no copy) and keeps it alive
TEST(RoundTrip, LoadModelFromPartsViewsPayloads) {
  WeightTakenOut parts;
  const onnx::ModelProto& original = parts.original;
  auto payload = std::move(parts.payload);  // the test holds the only other reference
  auto bytes = parts.bytes;
  std::string_view payload_view = *payload;
  auto model = LoadModelFromParts(bytes, *bytes, {{2, payload, payload_view}});
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Tensor* w = (*model)->graph().FindValue("w")->initializer();
  EXPECT_EQ(w->raw_bytes().data(), payload_view.data());
  EXPECT_EQ(w->owner(), payload);
  payload.reset();  // the model holds it
  EXPECT_TRUE(Equal(ExportModel(**model), original));

  // Wrong parts: an index past the initializers, and a part for a tensor with raw_data.
  auto past = LoadModelFromParts(bytes, *bytes, {{3, nullptr, payload_view}});
  EXPECT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("initializer #3"), std::string::npos) << past.status().message();
  auto twice = LoadModelFromParts(bytes, *bytes, {{0, nullptr, "0123456789abcdef"}});
  EXPECT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("'bias'"), std::string::npos) << twice.status().message();
  // A payload of the wrong size is refused as a raw_data of that size would be.
  auto short_part = LoadModelFromParts(bytes, *bytes, {{2, nullptr, payload_view.substr(4)}});
  EXPECT_FALSE(short_part.ok());
}

// Given:   a ModelProto with raw weights, "w" (#2) taken out and handed over as deferred
//          bytes whose fetch is counted
// Execute: LoadModelFromParts(slim bytes, {{2, deferred}}), then sizes, a save, reads
// Result:  nothing is fetched by loading, sizing or a detached save (which hands the source
//          back); raw_bytes() fetches once and keeps; a payload of the wrong size throws
TEST(RoundTrip, LoadModelFromPartsDefersPayloads) {
  WeightTakenOut parts;
  const onnx::ModelProto& original = parts.original;
  auto payload = std::move(parts.payload);  // the test holds the only other reference
  auto bytes = parts.bytes;
  int fetches = 0;
  auto source = std::make_shared<int>(7);
  auto deferred = std::make_shared<const DeferredPayload>(
      DeferredPayload{source, [&]() -> std::pair<std::shared_ptr<const void>, std::string_view> {
                        ++fetches;
                        return {payload, *payload};
                      }});
  auto model = LoadModelFromParts(bytes, *bytes, {{2, nullptr, {}, deferred}});
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Tensor* w = (*model)->graph().FindValue("w")->initializer();
  EXPECT_EQ(w->storage(), TensorStorage::kDeferred);
  EXPECT_EQ(w->raw_size(), payload->size());
  auto detached = SaveModelDetached(**model, 1 << 30);  // deferred: apart whatever its size
  ASSERT_TRUE(detached.ok()) << detached.status().message();
  ASSERT_EQ(detached->parts.size(), 1u);
  EXPECT_EQ(detached->parts[0].index, 2);
  ASSERT_TRUE(detached->parts[0].deferred);
  EXPECT_EQ(detached->parts[0].deferred->source, source);
  EXPECT_EQ(fetches, 0);
  // The sampled hash reads once and keeps nothing; raw_bytes() reads once more and keeps.
  size_t hash = w->SampledHash();
  EXPECT_EQ(w->SampledHash(), hash);
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(hash, Tensor::SampledHashOf(*payload));
  EXPECT_EQ(w->raw_bytes().data(), payload->data());
  EXPECT_EQ(w->raw_bytes().data(), payload->data());
  EXPECT_EQ(fetches, 2);
  EXPECT_TRUE(Equal(ExportModel(**model), original));

  // Deferred bytes of another size than the dims give throw when fetched.
  auto wrong = std::make_shared<const DeferredPayload>(
      DeferredPayload{source, [&]() -> std::pair<std::shared_ptr<const void>, std::string_view> {
                        return {payload, std::string_view(*payload).substr(4)};
                      }});
  auto short_model = LoadModelFromParts(bytes, *bytes, {{2, nullptr, {}, wrong}});
  ASSERT_TRUE(short_model.ok()) << short_model.status().message();
  EXPECT_THROW((*short_model)->graph().FindValue("w")->initializer()->raw_bytes(), std::length_error);
  // A deferred part for a tensor with raw_data of its own, or two parts for one tensor.
  EXPECT_FALSE(LoadModelFromParts(bytes, *bytes, {{0, nullptr, {}, deferred}}).ok());
  EXPECT_FALSE(LoadModelFromParts(bytes, *bytes, {{2, nullptr, {}, deferred}, {2, nullptr, {}, deferred}}).ok());
}

// Given:   a model with a 16 B and a 32 KiB raw initializer
// Execute: SaveModelDetached(model, 16 KiB)
// Result:  only the big payload is apart, viewing the tensor's bytes; setting it back as
//          raw_data gives exactly SaveModelToBytes's model
TEST(RoundTrip, SaveModelDetachedRoundTrips) {
  onnx::ModelProto original = RichWithRawWeights(8192);
  auto model = LoadModelFromBytes(original.SerializeAsString());
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto detached = SaveModelDetached(**model, 16 * 1024);
  ASSERT_TRUE(detached.ok()) << detached.status().message();
  ASSERT_EQ(detached->parts.size(), 1u);
  EXPECT_EQ(detached->parts[0].index, 2);
  const Tensor* w = (*model)->graph().FindValue("w")->initializer();
  EXPECT_EQ(detached->parts[0].bytes.data(), w->raw_bytes().data());
  EXPECT_EQ(detached->parts[0].owner, w->owner());
  onnx::ModelProto rebuilt;
  ASSERT_TRUE(rebuilt.ParseFromString(detached->bytes));
  EXPECT_FALSE(rebuilt.graph().initializer(2).has_raw_data());
  EXPECT_TRUE(rebuilt.graph().initializer(0).has_raw_data());
  rebuilt.mutable_graph()->mutable_initializer(2)->set_raw_data(std::string(detached->parts[0].bytes));
  EXPECT_TRUE(Equal(rebuilt, original));
  // And the slim bytes with that payload load back to the same model.
  auto again = LoadModelFromParts(nullptr, detached->bytes, {detached->parts[0]});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(Equal(ExportModel(**again), original));
  // min_bytes 0 takes every raw payload apart, none of the typed-field tensors ("axes").
  auto all = SaveModelDetached(**model, 0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->parts.size(), 2u);
  EXPECT_EQ(all->parts[0].index, 0);
  EXPECT_EQ(all->parts[1].index, 2);
}

TEST(RoundTrip, FileSaveLoadKeepsWeightsMappedAndEqual) {
  TempDir dir;
  onnx::ModelProto original = ParseProto(kRich);
  MakeRaw(original.mutable_graph()->mutable_initializer(0));
  WriteFile(dir / "in.onnx", original.SerializeAsString());
  auto model = LoadModel(dir / "in.onnx");
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ((*model)->graph().FindValue("bias")->initializer()->storage(), TensorStorage::kRaw);
  ASSERT_TRUE(SaveModel(**model, dir / "out.onnx").ok());
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(ReadFile(dir / "out.onnx")));
  EXPECT_TRUE(Equal(saved, original));
  // Saving over the model's own source is refused unless asked for; when asked, it is
  // safe while the weights are mapped from it (temp file + rename).
  auto refused = SaveModel(**model, dir / "in.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("is the input model"), std::string::npos) << refused.message();
  SaveOptions in_place;
  in_place.replace_source = true;
  ASSERT_TRUE(SaveModel(**model, dir / "in.onnx", in_place).ok());
  ASSERT_TRUE(saved.ParseFromString(ReadFile(dir / "in.onnx")));
  EXPECT_TRUE(Equal(saved, original));
}

TEST(ExternalData, AllThenKeepIsByteIdentical) {
  TempDir dir;
  auto model = Parse(kRich);
  SaveOptions all;
  all.external_data = ExternalDataMode::kAll;
  all.size_threshold = 0;
  ASSERT_TRUE(SaveModel(*model, dir / "ext.onnx", all).ok());
  ASSERT_TRUE(fs::exists(dir / "ext.onnx.data"));

  auto loaded = LoadModel(dir / "ext.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Tensor* bias = (*loaded)->graph().FindValue("bias")->initializer();
  EXPECT_EQ(bias->storage(), TensorStorage::kExternal);
  ASSERT_EQ(bias->raw_bytes().size(), 16u);
  float first;
  std::memcpy(&first, bias->raw_bytes().data(), 4);
  EXPECT_EQ(first, 1.0f);

  fs::create_directories(dir.path() / "copy");
  ASSERT_TRUE(SaveModel(**loaded, dir / "copy/ext.onnx").ok());
  EXPECT_EQ(ReadFile(dir / "copy/ext.onnx.data"), ReadFile(dir / "ext.onnx.data"));
  onnx::ModelProto a, b;
  ASSERT_TRUE(a.ParseFromString(ReadFile(dir / "ext.onnx")));
  ASSERT_TRUE(b.ParseFromString(ReadFile(dir / "copy/ext.onnx")));
  EXPECT_TRUE(Equal(a, b));

  // And back inline: the original model, with typed fields now stored as raw_data.
  SaveOptions inl;
  inl.external_data = ExternalDataMode::kInline;
  ASSERT_TRUE(SaveModel(**loaded, dir / "inline.onnx", inl).ok());
  ASSERT_TRUE(a.ParseFromString(ReadFile(dir / "inline.onnx")));
  onnx::ModelProto expected = ExportModel(*model);
  for (onnx::TensorProto& t : *expected.mutable_graph()->mutable_initializer()) {
    auto raw = Tensor::FromProto(t).RawBytesCopy();
    ASSERT_TRUE(raw.ok());
    t.clear_float_data();
    t.clear_int64_data();
    t.set_raw_data(*raw);
  }
  EXPECT_TRUE(Equal(a, expected));
}

TEST(ExternalData, SavingBesideTheSourceNeverRewritesItsDataFile) {
  // A model with external data, loaded and saved (after dropping a tensor) to another file
  // in the same folder: the source's data file must stay as it was, and the output gets
  // its own data file. Saving over the source itself rewrites both, as asked.
  TempDir dir;
  auto model = Parse(kRich);
  SaveOptions all;
  all.external_data = ExternalDataMode::kAll;
  all.size_threshold = 0;
  ASSERT_TRUE(SaveModel(*model, dir / "src.onnx", all).ok());
  std::string source_data = ReadFile(dir / "src.onnx.data");

  auto loaded = LoadModel(dir / "src.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto inode = [](const fs::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  auto source_inode = inode(dir / "src.onnx.data");
  ASSERT_TRUE(SaveModel(**loaded, dir / "out.onnx").ok());
  EXPECT_EQ(inode(dir / "src.onnx.data"), source_inode);  // not replaced
  EXPECT_EQ(ReadFile(dir / "src.onnx.data"), source_data);
  EXPECT_TRUE(fs::exists(dir / "out.onnx.data"));
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(ReadFile(dir / "out.onnx")));
  for (const auto& t : out.graph().initializer())
    for (const auto& e : t.external_data())
      if (e.key() == "location") EXPECT_EQ(e.value(), "out.onnx.data");
  auto reloaded = LoadModel(dir / "out.onnx");
  EXPECT_TRUE(reloaded.ok()) << reloaded.status().message();
  {
    auto source_again = LoadModel(dir / "src.onnx");
    EXPECT_TRUE(source_again.ok()) << source_again.status().message();
    // While a second loaded copy reads src.onnx, not even an in-place save may replace it.
    SaveOptions in_place;
    in_place.replace_source = true;
    EXPECT_FALSE(SaveModel(**loaded, dir / "src.onnx", in_place).ok());
  }

  // In place, asked for explicitly: the model is replaced by one rename, its new data goes
  // to a versioned name (the old model reads src.onnx.data until that rename), and the old
  // data file is removed after it.
  SaveOptions in_place_options;
  in_place_options.replace_source = true;
  ASSERT_TRUE(SaveModel(**loaded, dir / "src.onnx", in_place_options).ok());
  onnx::ModelProto in_place;
  ASSERT_TRUE(in_place.ParseFromString(ReadFile(dir / "src.onnx")));
  for (const auto& t : in_place.graph().initializer())
    for (const auto& e : t.external_data())
      if (e.key() == "location") EXPECT_EQ(e.value(), "src.onnx.1.data");
  EXPECT_FALSE(fs::exists(dir / "src.onnx.data"));
  EXPECT_EQ(ReadFile(dir / "src.onnx.1.data"), source_data);  // same bytes, same offsets
  auto reloaded_in_place = LoadModel(dir / "src.onnx");
  EXPECT_TRUE(reloaded_in_place.ok()) << reloaded_in_place.status().message();
}

// ---- bad input ---------------------------------------------------------------------

std::string LoadError(const std::string& path) {
  auto m = LoadModel(path);
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : std::string(m.status().message());
}

TEST(BadInput, TruncatedAndGarbageFiles) {
  TempDir dir;
  std::string bytes = ParseProto(kRich).SerializeAsString();
  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, size_t{3}}) {
    WriteFile(dir / "t.onnx", bytes.substr(0, cut));
    std::string err = LoadError(dir / "t.onnx");
    EXPECT_NE(err.find("t.onnx"), std::string::npos) << err;
  }
  WriteFile(dir / "g.onnx", "this is not a model at all \xff\xff\xff");
  EXPECT_NE(LoadError(dir / "g.onnx").find("not a valid ONNX model"), std::string::npos);
  WriteFile(dir / "empty.onnx", "");
  EXPECT_NE(LoadError(dir / "empty.onnx").find("empty"), std::string::npos);
  EXPECT_NE(LoadError(dir / "missing.onnx").find("cannot open"), std::string::npos);
  EXPECT_NE(LoadError(dir.path().string()).find("not a regular file"), std::string::npos);
}

void SetExternal(onnx::TensorProto* t, const std::string& location, bool external = true) {
  auto* entry = t->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
  if (external) t->set_data_location(onnx::TensorProto::EXTERNAL);
}

// The save protocol reads which data files the model it replaces uses from the wire
// format: every tensor, wherever it sits (subgraphs, attributes, sparse, functions).
TEST(Wire, ExternalDataLocationsFindsEveryExternalTensorOnce) {
  onnx::ModelProto m;
  onnx::GraphProto* g = m.mutable_graph();
  SetExternal(g->add_initializer(), "a.bin");
  SetExternal(g->add_initializer(), "a.bin");              // the same file again: listed once
  SetExternal(g->add_initializer(), "inline.bin", false);  // a location without EXTERNAL: not read
  SetExternal(g->add_sparse_initializer()->mutable_values(), "sparse.bin");
  onnx::AttributeProto* branch = g->add_node()->add_attribute();
  SetExternal(branch->mutable_g()->add_initializer(), "sub.bin");
  SetExternal(branch->mutable_g()->add_node()->add_attribute()->add_tensors(), "nested.bin");
  SetExternal(m.add_functions()->add_node()->add_attribute()->mutable_t(), "function.bin");
  auto locations = wire::ExternalDataLocations(m.SerializeAsString());
  ASSERT_TRUE(locations.ok()) << locations.status();
  EXPECT_EQ(*locations, (std::vector<std::string>{"nested.bin", "sub.bin", "a.bin", "sparse.bin",
                                                  "function.bin"}));  // file order: nodes first
  EXPECT_FALSE(wire::ExternalDataLocations(m.SerializeAsString().substr(0, 20)).ok());
}

// Subgraphs nested past protobuf's recursion limit: the load names the cause.
TEST(BadInput, NestingPastProtobufsLimitIsNamed) {
  auto nested = [](int depth) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(18);
    onnx::GraphProto* g = m.mutable_graph();
    for (int d = 0; d < depth; ++d) {
      onnx::NodeProto* n = g->add_node();
      n->set_op_type("Loop");
      g = n->add_attribute()->mutable_g();
    }
    return m;
  };
  wire::Nesting n = wire::MeasureNesting(nested(40).SerializeAsString(), 1000);
  EXPECT_EQ(n.graphs, 41);
  EXPECT_EQ(n.messages, 1 + 3 * 40);
  EXPECT_FALSE(n.corrupt);
  EXPECT_EQ(wire::MeasureNesting(nested(40).SerializeAsString(), 10).messages, 10);  // counting stops at the cap
  auto m = LoadModelFromBytes(nested(40).SerializeAsString());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("subgraphs nested 40 deep"), std::string::npos) << m.status();
  EXPECT_NE(m.status().message().find("parse limit of 100"), std::string::npos) << m.status();
}

TEST(BadInput, CycleDanglingAndDuplicates) {
  TempDir dir;
  auto error_of = [&](const std::string& text) {
    WriteFile(dir / "m.onnx", ParseProto(text).SerializeAsString());
    return LoadError(dir / "m.onnx");
  };
  std::string cycle = error_of(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { [p] A = Add(X, B)  [q] B = Relu(A)  [r] Y = Neg(B) })");
  EXPECT_NE(cycle.find("cycle"), std::string::npos) << cycle;
  EXPECT_NE(cycle.find("'p'"), std::string::npos) << cycle;

  std::string dangling = error_of(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { [p] Y = Add(X, nowhere) })");
  EXPECT_NE(dangling.find("'nowhere'"), std::string::npos) << dangling;
  EXPECT_NE(dangling.find("'p'"), std::string::npos) << dangling;

  std::string dup = error_of(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { [p] Y = Relu(X)  [q] Y = Neg(X) })");
  EXPECT_NE(dup.find("defined twice"), std::string::npos) << dup;

  std::string output = error_of(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { [p] Z = Relu(X) })");
  EXPECT_NE(output.find("output 'Y'"), std::string::npos) << output;
}

void WriteExternalModel(const std::string& path, const std::string& location, const std::string& offset = "0",
                        const std::string& length = "16") {
  onnx::ModelProto p = ParseProto(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[4] X) => (float[4] Y) <float[4] W = {1, 2, 3, 4}> { Y = Add(X, W) })");
  onnx::TensorProto* w = p.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", offset);
  add("length", length);
  WriteFile(path, p.SerializeAsString());
}

TEST(BadInput, ExternalDataMustStayInsideTheModelFolder) {
  TempDir dir;
  fs::create_directories(dir.path() / "model");
  WriteFile(dir / "secret.bin", std::string(16, 'x'));
  WriteFile(dir / "model/ok.bin", std::string(16, '\0'));

  WriteExternalModel(dir / "model/ok.onnx", "ok.bin");
  EXPECT_TRUE(LoadModel(dir / "model/ok.onnx").ok());

  WriteExternalModel(dir / "model/up.onnx", "../secret.bin");
  EXPECT_NE(LoadError(dir / "model/up.onnx").find("'..'"), std::string::npos);

  WriteExternalModel(dir / "model/abs.onnx", dir / "secret.bin");
  EXPECT_NE(LoadError(dir / "model/abs.onnx").find("absolute"), std::string::npos);

  fs::create_symlink(dir / "secret.bin", dir.path() / "model/link.bin");
  WriteExternalModel(dir / "model/link.onnx", "link.bin");
  EXPECT_NE(LoadError(dir / "model/link.onnx").find("symbolic link"), std::string::npos);

  WriteExternalModel(dir / "model/range.onnx", "ok.bin", "8", "16");
  EXPECT_NE(LoadError(dir / "model/range.onnx").find("outside"), std::string::npos);

  WriteExternalModel(dir / "model/missing.onnx", "nope.bin");
  EXPECT_NE(LoadError(dir / "model/missing.onnx").find("nope.bin"), std::string::npos);

  WriteExternalModel(dir / "model/bad.onnx", "ok.bin", "x1");
  EXPECT_NE(LoadError(dir / "model/bad.onnx").find("malformed"), std::string::npos);
}

// onnx's checker refuses an external-data file with more than one hard link: the other
// name may lie outside the model's folder, where no location may point. So does the loader,
// wherever the other link is.
TEST(BadInput, ExternalDataWithSeveralHardLinksIsRefused) {
  TempDir dir;
  fs::create_directories(dir.path() / "model");
  WriteFile(dir / "model/w.bin", std::string(16, '\0'));
  WriteExternalModel(dir / "model/m.onnx", "w.bin");
  ASSERT_TRUE(LoadModel(dir / "model/m.onnx").ok());

  fs::create_hard_link(dir / "model/w.bin", dir / "outside.bin");
  std::string outside = LoadError(dir / "model/m.onnx");
  EXPECT_NE(outside.find("'w.bin' has 2 hard links"), std::string::npos) << outside;
  fs::remove(dir / "outside.bin");
  ASSERT_TRUE(LoadModel(dir / "model/m.onnx").ok());

  fs::create_hard_link(dir / "model/w.bin", dir / "model/other.bin");
  std::string inside = LoadError(dir / "model/m.onnx");
  EXPECT_NE(inside.find("'w.bin' has 2 hard links"), std::string::npos) << inside;
}

// A Constant's value (an attribute tensor) may be external too, and onnx and onnxruntime
// read it. The IR has no external storage for attributes, so its bytes are read at load:
// before, the model saved elsewhere named a data file that was not beside it.
TEST(ExternalData, AttributeTensorsAreReadAtLoad) {
  TempDir dir;
  fs::create_directories(dir.path() / "out");
  onnx::ModelProto p = ParseProto(R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[4] X) => (float[4] Y) { C = Constant<value = float[4] {1, 2, 3, 4}>()  Y = Add(X, C) })");
  onnx::TensorProto* c = p.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  std::string bytes = c->raw_data().empty() ? std::string() : c->raw_data();
  for (float f : c->float_data()) bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
  c->clear_float_data();
  c->clear_raw_data();
  SetExternal(c, "c.bin");
  WriteFile(dir / "c.bin", bytes);
  WriteFile(dir / "m.onnx", p.SerializeAsString());

  auto model = LoadModel(dir / "m.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(SaveModel(**model, dir / "out/m.onnx").ok());
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(ReadFile(dir / "out/m.onnx")));
  const onnx::TensorProto& t = saved.graph().node(0).attribute(0).t();
  EXPECT_NE(t.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(t.external_data_size(), 0);
  EXPECT_EQ(t.raw_data(), bytes);
  EXPECT_FALSE(fs::exists(dir.path() / "out/c.bin"));

  c->mutable_external_data(0)->set_value("../c.bin");  // the same rules as for initializers
  fs::create_directories(dir.path() / "sub");
  WriteFile(dir / "sub/m.onnx", p.SerializeAsString());
  EXPECT_NE(LoadError(dir / "sub/m.onnx").find("'..'"), std::string::npos);
}

TEST(Save, FailureLeavesNothingBehind) {
  TempDir dir;
  auto model = Parse(kRich);
  WriteFile(dir / "keep.onnx", "previous");
  SaveOptions bad;
  bad.external_data = ExternalDataMode::kAll;
  bad.location = "../outside.data";
  EXPECT_FALSE(SaveModel(*model, dir / "keep.onnx", bad).ok());
  EXPECT_EQ(ReadFile(dir / "keep.onnx"), "previous");
  EXPECT_FALSE(SaveModel(*model, dir / "no/such/dir/out.onnx").ok());
  int entries = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1) << "no temporary files left";
}

}  // namespace
}  // namespace onnxsurgeon

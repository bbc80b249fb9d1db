// The save side: what a save may write, the commit protocol for model +
// external data, and the temporaries a killed save leaves (core/io/output_files.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "core/io/model_io.h"
#include "core/io/output_files.h"
#include "onnx/onnx_pb.h"
#include "tests/cpp/temp_files.h"
#include "tests/cpp/test_util.h"

namespace onnxsurgeon {
namespace {
namespace fs = std::filesystem;
using testing::Parse;
using testing::ReadBytes;
using testing::ScratchDir;
using testing::WriteBytes;

constexpr const char* kModel = R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[64] X) => (float[64] Y) <float[64] W = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,
27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64}>
{ Y = Add(X, W) })";

SaveOptions AllExternal(std::string location = "") {
  SaveOptions o;
  o.external_data = ExternalDataMode::kAll;
  o.size_threshold = 0;
  o.location = std::move(location);
  return o;
}

std::set<std::string> Locations(const std::string& model_path) {
  onnx::ModelProto p;
  EXPECT_TRUE(p.ParseFromString(ReadBytes(model_path)));
  std::set<std::string> out;
  for (const auto& t : p.graph().initializer())
    for (const auto& e : t.external_data())
      if (e.key() == "location") out.insert(e.value());
  return out;
}

std::set<std::string> Entries(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

long DeadPid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(SaveProtocol, ResavingTakesAVersionedDataNameAndRemovesTheOldOne) {
  ScratchDir dir;
  auto model = Parse(kModel);
  ASSERT_TRUE(SaveModel(*model, dir / "out.onnx", AllExternal()).ok());
  EXPECT_EQ(Locations(dir / "out.onnx"), std::set<std::string>{"out.onnx.data"});
  // out.onnx reads out.onnx.data until the new model's rename: the new data is elsewhere.
  ASSERT_TRUE(SaveModel(*model, dir / "out.onnx", AllExternal()).ok());
  EXPECT_EQ(Locations(dir / "out.onnx"), std::set<std::string>{"out.onnx.1.data"});
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"out.onnx", "out.onnx.1.data"}));
  // And back: the requested name is free again.
  ASSERT_TRUE(SaveModel(*model, dir / "out.onnx", AllExternal()).ok());
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"out.onnx", "out.onnx.data"}));
  EXPECT_TRUE(LoadModel(dir / "out.onnx").ok());
  // Inline now: the replaced model's data file goes with it.
  SaveOptions inl;
  inl.external_data = ExternalDataMode::kInline;
  ASSERT_TRUE(SaveModel(*model, dir / "out.onnx", inl).ok());
  EXPECT_EQ(Entries(dir.path()), std::set<std::string>{"out.onnx"});
}

TEST(SaveProtocol, AnotherModelsDataFileIsNeverReplaced) {
  ScratchDir dir;
  auto model = Parse(kModel);
  ASSERT_TRUE(SaveModel(*model, dir / "other.onnx", AllExternal("w.bin")).ok());
  std::string other_data = ReadBytes(dir / "w.bin");
  auto s = SaveModel(*model, dir / "new.onnx", AllExternal("w.bin"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'w.bin'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("another model"), std::string::npos) << s.message();
  EXPECT_EQ(ReadBytes(dir / "w.bin"), other_data);
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"other.onnx", "w.bin"}));
  // The data file may not be the model itself either.
  auto self = SaveModel(*model, dir / "self.onnx", AllExternal("self.onnx"));
  ASSERT_FALSE(self.ok());
  EXPECT_NE(self.message().find("the output model itself"), std::string::npos) << self.message();
}

TEST(SaveProtocol, InputFilesAreRefusedHoweverSpelled) {
  ScratchDir dir;
  auto built = Parse(kModel);
  ASSERT_TRUE(SaveModel(*built, dir / "in.onnx", AllExternal("w.bin")).ok());
  fs::create_symlink(dir / "w.bin", dir.path() / "link.bin");
  fs::create_symlink(dir / "in.onnx", dir.path() / "in_link.onnx");
  auto model = LoadModel(dir / "in.onnx");
  ASSERT_TRUE(model.ok()) << model.status().message();
  // Made after the load: a data file with two links is refused at load (as onnx does).
  fs::create_hard_link(dir / "w.bin", dir.path() / "hard.bin");
  std::string data = ReadBytes(dir / "w.bin"), onnx_bytes = ReadBytes(dir / "in.onnx");
  for (const std::string& out : {"w.bin", "link.bin", "hard.bin", "./in.onnx", "in_link.onnx", "in.onnx"}) {
    auto s = SaveModel(**model, (dir.path() / out).string());
    EXPECT_FALSE(s.ok()) << out;
    EXPECT_NE(s.message().find("refusing"), std::string::npos) << s.message();
  }
  for (const std::string& location : {"w.bin", "link.bin", "hard.bin", "./w.bin"}) {
    auto s = SaveModel(**model, dir / "out.onnx", AllExternal(location));
    EXPECT_FALSE(s.ok()) << location;
    EXPECT_NE(s.message().find("input model"), std::string::npos) << s.message();
  }
  EXPECT_EQ(ReadBytes(dir / "w.bin"), data);
  EXPECT_EQ(ReadBytes(dir / "in.onnx"), onnx_bytes);
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"in.onnx", "w.bin", "link.bin", "hard.bin", "in_link.onnx"}));
  // Once the model is gone its files are no one's input any more.
  model = absl::CancelledError("dropped");
  fs::remove(dir.path() / "hard.bin");
  auto again = LoadModel(dir / "in.onnx");
  ASSERT_TRUE(again.ok());
  SaveOptions in_place;
  in_place.replace_source = true;
  EXPECT_TRUE(SaveModel(**again, dir / "in.onnx", in_place).ok());
}

TEST(SaveProtocol, OutputFolderMustExistAndOutputMustNotBeAFolder) {
  ScratchDir dir;
  auto model = Parse(kModel);
  fs::create_directories(dir.path() / "taken");
  auto folder = SaveModel(*model, dir / "taken", AllExternal());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.message().find("it is a folder"), std::string::npos) << folder.message();
  for (const SaveOptions& o : {SaveOptions{}, AllExternal()}) {
    auto missing = SaveModel(*model, dir / "no/such/out.onnx", o);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.message().find("does not exist"), std::string::npos) << missing.message();
  }
  EXPECT_EQ(Entries(dir.path()), std::set<std::string>{"taken"});
  EXPECT_TRUE(fs::is_empty(dir.path() / "taken"));
  // A data location in a subfolder of the output folder is created with it.
  ASSERT_TRUE(SaveModel(*model, dir / "m.onnx", AllExternal("weights/m.bin")).ok());
  EXPECT_TRUE(LoadModel(dir / "m.onnx").ok());
}

// A journal line as core/io/output_files.cc writes it.
std::string JournalLine(const char* kind, const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  std::string hex;
  for (unsigned char c : path) {
    static const char kDigits[] = "0123456789abcdef";
    hex += {kDigits[c >> 4], kDigits[c & 15]};
  }
  return std::string(kind) + " " + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + hex + "\n";
}

TEST(SaveProtocol, AKilledSaveThatNeverCommittedIsUndone) {
  ScratchDir dir;
  auto model = Parse(kModel);
  std::string tag = std::to_string(DeadPid());
  // Killed after publishing out.onnx.data, before its model's rename: the model's
  // temporary and the journal are left, and a data temporary of another file. All go, and
  // so does the published file, which nothing references.
  WriteBytes(dir / (".out.onnx.tmp." + tag + ".AbCdE1"), "half a model");
  WriteBytes(dir / (".w2.bin.tmp." + tag + ".AbCdE1.d"), "data");
  WriteBytes(dir / "out.onnx.data", "published");
  WriteBytes(dir / (".out.onnx.tmp." + tag + ".AbCdE1.journal"), JournalLine("new", dir / "out.onnx.data"));
  // A file of the same name as a journal entry but another inode is not touched.
  WriteBytes(dir / "same_name_other_inode.bin", "someone's");
  std::string stale_line = JournalLine("new", dir / "same_name_other_inode.bin");
  fs::remove(dir / "same_name_other_inode.bin");
  WriteBytes(dir / "keep_me.bin", "not in any journal");
  WriteBytes(dir / "same_name_other_inode.bin", "someone else's, written later");
  WriteBytes(dir / (".x.onnx.tmp." + tag + ".Other1"), "model temporary");
  WriteBytes(dir / (".x.onnx.tmp." + tag + ".Other1.journal"), stale_line);
  // A live process's temporary is not ours to remove; nor is anything off the pattern.
  std::string live = ".out.onnx.tmp." + std::to_string(::getppid()) + ".QwErTy";
  WriteBytes(dir / live, "busy");
  WriteBytes(dir / ".out.onnx.tmp.notapid.AbCdE1", "other");
  ASSERT_TRUE(SaveModel(*model, dir / "out.onnx", AllExternal()).ok());
  EXPECT_EQ(Entries(dir.path()),
            (std::set<std::string>{"out.onnx", "out.onnx.data", "keep_me.bin", "same_name_other_inode.bin", live,
                                   ".out.onnx.tmp.notapid.AbCdE1"}));
  EXPECT_TRUE(LoadModel(dir / "out.onnx").ok());
  EXPECT_EQ(ReadBytes(dir / "same_name_other_inode.bin"), "someone else's, written later");
}

TEST(SaveProtocol, AKilledSaveThatCommittedIsFinished) {
  ScratchDir dir;
  auto model = Parse(kModel);
  ASSERT_TRUE(SaveModel(*model, dir / "out.onnx", AllExternal()).ok());
  ASSERT_TRUE(SaveModel(*model, dir / "out.onnx", AllExternal()).ok());  // now reads out.onnx.1.data
  // Killed after its commit, before deleting the data file the replaced model used: only
  // the journal is left, and the old file, unreferenced. The next save removes it (and
  // can then use its name).
  std::string tag = std::to_string(DeadPid());
  WriteBytes(dir / "out.onnx.data", "old weights");
  WriteBytes(dir / (".out.onnx.tmp." + tag + ".Old123.journal"),
             JournalLine("old", dir / "out.onnx.data") + JournalLine("new", dir / "out.onnx.1.data"));
  ASSERT_TRUE(SaveModel(*model, dir / "out.onnx", AllExternal()).ok());
  EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"out.onnx", "out.onnx.data"}));
  EXPECT_EQ(Locations(dir / "out.onnx"), std::set<std::string>{"out.onnx.data"});
  EXPECT_TRUE(LoadModel(dir / "out.onnx").ok());
}

// A cleanup can itself be killed. Replay every prefix of its removals on the leftovers of a
// save killed before its commit, then a whole cleanup (the next run's): the model the folder
// holds must still load with its weights. (Removing the model's temporary before the
// journal made a later cleanup read the journal as committed and delete out.onnx.data.)
TEST(SaveProtocol, ACleanupKilledAtAnyPointIsSafeToRedo) {
  auto model = Parse(kModel);
  std::string tag = std::to_string(DeadPid());
  auto leftovers = [&](const ScratchDir& dir) {
    EXPECT_TRUE(SaveModel(*model, dir / "out.onnx", AllExternal()).ok());  // reads out.onnx.data
    WriteBytes(dir / (".out.onnx.tmp." + tag + ".Kill01"), "half a model");
    WriteBytes(dir / (".out.onnx.1.data.tmp." + tag + ".Kill01.d"), "unpublished");
    WriteBytes(dir / "out.onnx.1.data", "published, never referenced");
    WriteBytes(dir / (".out.onnx.tmp." + tag + ".Kill01.journal"),
               JournalLine("old", dir / "out.onnx.data") + JournalLine("new", dir / "out.onnx.1.data"));
  };
  size_t steps = 0;
  {
    ScratchDir dir;
    leftovers(dir);
    steps = StaleTemporaryRemovals({dir.path().string()}).size();
    EXPECT_EQ(steps, 4u);  // the published file, the data temporary, the journal, the model temporary
  }
  for (size_t killed_after = 0; killed_after <= steps; ++killed_after) {
    ScratchDir dir;
    leftovers(dir);
    std::vector<std::string> removals = StaleTemporaryRemovals({dir.path().string()});
    for (size_t i = 0; i < killed_after && i < removals.size(); ++i) fs::remove(removals[i]);
    RemoveStaleTemporaries({dir.path().string()});
    EXPECT_EQ(Entries(dir.path()), (std::set<std::string>{"out.onnx", "out.onnx.data"})) << killed_after;
    EXPECT_TRUE(LoadModel(dir / "out.onnx").ok()) << killed_after;
  }
}

TEST(SaveProtocol, VersionedLocations) {
  EXPECT_EQ(VersionedLocation("w.bin", 2), "w.2.bin");
  EXPECT_EQ(VersionedLocation("out.onnx.data", 1), "out.onnx.1.data");
  EXPECT_EQ(VersionedLocation("sub.d/weights", 3), "sub.d/weights.3");
  EXPECT_EQ(VersionedLocation(".hidden", 1), ".hidden.1");
}

}  // namespace
}  // namespace onnxsurgeon

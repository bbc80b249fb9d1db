#include "core/io/output_files.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>

#include "core/io/mapped_file.h"
#include "core/io/model_io.h"
#include "core/io/wire.h"

namespace onnxsurgeon {
namespace fs = std::filesystem;
namespace {

std::mutex& RegistryMutex() {
  static std::mutex m;
  return m;
}
std::vector<std::weak_ptr<const std::vector<FileIdentity>>>& Registry() {
  static std::vector<std::weak_ptr<const std::vector<FileIdentity>>> inputs;
  return inputs;
}

bool ProcessIsGone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

std::optional<FileIdentity> LinkIdentity(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

}  // namespace

std::optional<FileIdentity> IdentityOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

std::shared_ptr<const std::vector<FileIdentity>> RegisterInputFiles(std::vector<FileIdentity> files) {
  auto handle = std::make_shared<const std::vector<FileIdentity>>(std::move(files));
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto& inputs = Registry();
  std::erase_if(inputs, [](const auto& w) { return w.expired(); });
  inputs.push_back(handle);
  return handle;
}

bool IsInputFile(const FileIdentity& id, const std::vector<FileIdentity>* except) {
  // A model replacing its own source maps those files itself: only other models count.
  bool own = except && std::find(except->begin(), except->end(), id) != except->end();
  if (!own && MappedFile::IsMapped(id.device, id.inode)) return true;
  std::lock_guard<std::mutex> lock(RegistryMutex());
  for (const auto& w : Registry()) {
    auto files = w.lock();
    if (files && files.get() != except && std::find(files->begin(), files->end(), id) != files->end()) return true;
  }
  return false;
}

void RemoveStaleTemporaries(const std::vector<std::string>& dirs) {
  static const std::regex kTemp(R"(\.(.+)\.tmp\.([0-9]+)\.([A-Za-z0-9]{6})(\.d)?)");
  struct Temp {
    std::string dir, name, final_name;
    bool data;
  };
  std::map<std::pair<long, std::string>, std::vector<Temp>> saves;  // (pid, token) -> its temporaries
  std::set<std::string> seen;
  for (const std::string& dir : dirs) {
    if (!seen.insert(dir).second) continue;
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;
    while (dirent* e = ::readdir(d)) {
      std::cmatch m;
      if (!std::regex_match(e->d_name, m, kTemp)) continue;
      long pid = std::strtol(m[2].str().c_str(), nullptr, 10);
      if (pid == ::getpid() || !ProcessIsGone(pid)) continue;
      saves[{pid, m[3].str()}].push_back({dir, e->d_name, m[1].str(), m[4].matched});
    }
    ::closedir(d);
  }
  for (auto& [key, temps] : saves) {
    // The model's temporary still there: the save never committed, so a data file it
    // published (a second name of its temporary) is referenced by nothing.
    bool uncommitted = std::any_of(temps.begin(), temps.end(), [](const Temp& t) { return !t.data; });
    for (const Temp& t : temps) {
      std::string temp_path = t.dir + "/" + t.name;
      if (t.data && uncommitted) {
        std::string final_path = t.dir + "/" + t.final_name;
        auto a = LinkIdentity(temp_path), b = LinkIdentity(final_path);
        if (a && b && *a == *b) ::unlink(final_path.c_str());
      }
      ::unlink(temp_path.c_str());
    }
  }
}

std::vector<std::string> ReferencedDataFiles(const std::string& model_path) {
  std::vector<std::string> out;
  onnx::ModelProto proto;
  {
    auto file = MappedFile::Open(model_path);  // dropped before anyone asks IsMapped
    if (!file.ok()) return out;
    auto stripped = wire::StripInitializerPayloads((*file)->bytes());
    if (!stripped.ok() || !proto.ParseFromString(stripped->remainder)) return out;
  }
  std::string dir = fs::absolute(fs::path(model_path)).parent_path().string();
  std::set<std::string> found;
  auto visit_tensor = [&](const onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return;
    for (const auto& kv : t.external_data()) {
      if (kv.key() != "location") continue;
      auto full = ResolveExternalLocation(dir, kv.value(), t.name());
      if (full.ok() && found.insert(*full).second) out.push_back(*full);
    }
  };
  std::function<void(const onnx::GraphProto&)> visit_graph = [&](const onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) visit_tensor(t);
    for (const auto& s : g.sparse_initializer()) visit_tensor(s.values()), visit_tensor(s.indices());
    for (const auto& n : g.node())
      for (const auto& a : n.attribute()) {
        if (a.has_t()) visit_tensor(a.t());
        for (const auto& t : a.tensors()) visit_tensor(t);
        if (a.has_g()) visit_graph(a.g());
        for (const auto& sub : a.graphs()) visit_graph(sub);
      }
  };
  visit_graph(proto.graph());
  for (const auto& f : proto.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = f.node();
    visit_graph(body);
  }
  return out;
}

std::string VersionedLocation(const std::string& location, int version) {
  auto slash = location.rfind('/');
  size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  auto dot = location.rfind('.');
  if (dot == std::string::npos || dot <= name_start) return absl::StrCat(location, ".", version);
  return absl::StrCat(location.substr(0, dot), ".", version, location.substr(dot));
}

}  // namespace onnxsurgeon

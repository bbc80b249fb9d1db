#include "core/io/output_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>

#include "core/io/external_location.h"
#include "core/io/mapped_file.h"
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

namespace {

std::string Hex(std::string_view s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) out += {kDigits[c >> 4], kDigits[c & 15]};
  return out;
}

std::optional<std::string> Unhex(std::string_view s) {
  if (s.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    int v = 0;
    for (char c : s.substr(i, 2)) {
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + d;
    }
    out += static_cast<char>(v);
  }
  return out;
}

std::vector<SaveJournal::Entry> ReadJournal(const std::string& path) {
  std::vector<SaveJournal::Entry> entries;
  std::ifstream in(path);
  std::string kind, hex;
  uint64_t device, inode;
  while (in >> kind >> device >> inode >> hex) {
    auto file = Unhex(hex);
    if (file && (kind == "new" || kind == "old")) entries.push_back({kind == "new", {device, inode}, *file});
  }
  return entries;
}

}  // namespace

StatusOr<std::unique_ptr<SaveJournal>> SaveJournal::Write(const std::string& model_path, const std::string& token,
                                                          const std::vector<Entry>& entries) {
  std::unique_ptr<SaveJournal> journal(new SaveJournal());
  if (entries.empty()) return journal;
  fs::path p(model_path);
  std::string path =
      absl::StrCat(p.parent_path().string(), "/.", p.filename().string(), ".tmp.", ::getpid(), ".", token, ".journal");
  std::string text;
  for (const Entry& e : entries)
    absl::StrAppend(&text, e.published ? "new " : "old ", e.id.device, " ", e.id.inode, " ", Hex(e.path), "\n");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot create '", path, "': ", std::strerror(errno)));
  journal->path_ = path;  // from here the destructor removes it
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fdatasync(fd) == 0;
  ::close(fd);
  if (!ok) return absl::InternalError(absl::StrCat("cannot write '", path, "': ", std::strerror(errno)));
  return journal;
}

SaveJournal::~SaveJournal() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

std::vector<std::string> StaleTemporaryRemovals(const std::vector<std::string>& dirs) {
  static const std::regex kTemp(R"(\.(.+)\.tmp\.([0-9]+)\.([A-Za-z0-9]{6})(\.d|\.journal)?)");
  enum class Kind { kModel, kData, kJournal };
  struct Temp {
    std::string path;
    Kind kind;
  };
  std::map<std::pair<long, std::string>, std::vector<Temp>> saves;  // (pid, token) -> its temporaries
  std::set<std::string> seen;
  for (const std::string& dir : dirs) {
    if (!seen.insert(dir).second) continue;
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;
    while (dirent* e = ::readdir(d)) {
      std::cmatch m;
      if (e->d_name[0] != '.' || !std::strstr(e->d_name, ".tmp.") || !std::regex_match(e->d_name, m, kTemp)) continue;
      long pid = std::strtol(m[2].str().c_str(), nullptr, 10);
      if (pid == ::getpid() || !ProcessIsGone(pid)) continue;
      Kind kind = !m[4].matched ? Kind::kModel : m[4].str() == ".d" ? Kind::kData : Kind::kJournal;
      saves[{pid, m[3].str()}].push_back({dir + "/" + e->d_name, kind});
    }
    ::closedir(d);
  }
  std::vector<std::string> removals;
  for (auto& [key, temps] : saves) {
    // The model's temporary still there: the save never committed, so the data files it
    // published are referenced by nothing. Gone: it committed, so the replaced model's are.
    bool uncommitted = std::any_of(temps.begin(), temps.end(), [](const Temp& t) { return t.kind == Kind::kModel; });
    for (const Temp& t : temps) {
      if (t.kind != Kind::kJournal) continue;
      for (const SaveJournal::Entry& e : ReadJournal(t.path))
        if (e.published == uncommitted && LinkIdentity(e.path) == e.id) removals.push_back(e.path);
    }
    // Then the data temporaries, the journal, and the model's temporary last: that file is
    // what says "never committed". Removed before the journal, a cleanup killed between the
    // two would leave a journal that reads as committed, and the next cleanup would delete
    // the data files the current model still reads.
    for (Kind kind : {Kind::kData, Kind::kJournal, Kind::kModel})
      for (const Temp& t : temps)
        if (t.kind == kind) removals.push_back(t.path);
  }
  return removals;
}

void RemoveStaleTemporaries(const std::vector<std::string>& dirs) {
  for (const std::string& path : StaleTemporaryRemovals(dirs)) ::unlink(path.c_str());
}

std::vector<std::string> ReferencedDataFiles(const std::string& model_path) {
  std::vector<std::string> out;
  StatusOr<std::vector<std::string>> locations = absl::NotFoundError("");
  {
    auto file = MappedFile::Open(model_path);  // dropped before anyone asks IsMapped
    if (!file.ok()) return out;
    // A walk of the wire format: parsing the whole ModelProto cost more than the rest of
    // a save for graphs of many nodes.
    locations = wire::ExternalDataLocations((*file)->bytes());
  }
  if (!locations.ok()) return out;
  std::string dir = fs::absolute(fs::path(model_path)).parent_path().string();
  std::set<std::string> found;
  for (const std::string& location : *locations) {
    auto full = ResolveExternalLocation(dir, location, "");
    if (full.ok() && found.insert(*full).second) out.push_back(*full);
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

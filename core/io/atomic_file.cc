#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>

#include "core/io/mapped_file.h"

namespace onnxsurgeon {
namespace {
constexpr size_t kBufferSize = 1 << 20;

std::string DirName(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
Status IoError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " '", path, "': ", std::strerror(errno)));
}
}  // namespace

std::string AtomicFile::NewToken() {
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ (uint64_t(::getpid()) << 32));
  std::string token(6, 'x');
  for (char& c : token) c = kChars[rng() % (sizeof kChars - 1)];
  return token;
}

StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path, Role role, const std::string& token) {
  std::unique_ptr<AtomicFile> f(new AtomicFile());
  f->path_ = path;
  f->temp_path_ = absl::StrCat(DirName(path), "/.", BaseName(path), ".tmp.", ::getpid(), ".", token,
                               role == Role::kData ? ".d" : "");
  mode_t mask = ::umask(0);
  ::umask(mask);
  int fd = ::open(f->temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666 & ~mask);
  if (fd < 0) {
    f->temp_path_.clear();
    return IoError("cannot create a temporary file beside", path);
  }
  f->fd_ = fd;
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    f->device_ = static_cast<uint64_t>(st.st_dev);
    f->inode_ = static_cast<uint64_t>(st.st_ino);
  }
  f->buffer_.reserve(kBufferSize);
  return f;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (state_ == State::kPublished) ::unlink(path_.c_str());  // the save failed after Publish
  else if (state_ != State::kDone && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

Status AtomicFile::Flush() {
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.clear();
  return absl::OkStatus();
}

Status AtomicFile::Write(std::string_view bytes) {
  size_ += bytes.size();
  if (buffer_.size() + bytes.size() <= kBufferSize) {
    buffer_.append(bytes);
    return absl::OkStatus();
  }
  OS_RETURN_IF_ERROR(Flush());
  if (bytes.size() < kBufferSize) {
    buffer_.append(bytes);
    return absl::OkStatus();
  }
  buffer_ = std::string();  // write large payloads directly, without a copy
  const char* p = bytes.data();
  size_t left = bytes.size();
  // Bytes still in a loaded file: copy file-to-file in the kernel. Falls back to write()
  // where the filesystems do not support it.
  if (auto source = MappedFile::Find(bytes)) {
    loff_t in_offset = static_cast<loff_t>(source->offset);
    while (left > 0) {
      ssize_t n = ::copy_file_range(source->fd, &in_offset, fd_, nullptr, left, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EXDEV, EINVAL, ENOSYS...: write() the rest
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  while (left > 0) {
    ssize_t n = ::write(fd_, p, std::min<size_t>(left, size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.reserve(kBufferSize);
  return absl::OkStatus();
}

Status AtomicFile::Skip(uint64_t n) {
  if (n == 0) return absl::OkStatus();
  OS_RETURN_IF_ERROR(Flush());
  size_ += n;
  if (::lseek(fd_, static_cast<off_t>(size_), SEEK_SET) < 0) return IoError("cannot seek in", path_);
  return absl::OkStatus();
}

Status AtomicFile::Sync() {
  if (state_ != State::kWriting) return absl::OkStatus();
  OS_RETURN_IF_ERROR(Flush());
  // A trailing hole needs the size set explicitly.
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) return IoError("cannot size", path_);
  // On disk before it gets a name a reader uses: else a crash after the rename can leave
  // the new name on an empty or partial file.
  if (::fdatasync(fd_) != 0) return IoError("cannot sync", path_);
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return IoError("cannot close", path_);
  state_ = State::kSynced;
  return absl::OkStatus();
}

Status AtomicFile::Commit() {
  OS_RETURN_IF_ERROR(Sync());
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) return IoError("cannot rename into", path_);
  state_ = State::kDone;
  return absl::OkStatus();
}

Status AtomicFile::Publish() {
  OS_RETURN_IF_ERROR(Sync());
  // No hard link (onnx refuses to load external data with more than one link) and no
  // replacing: the name was free when the save began, and must still be.
  if (::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat("'", path_, "' appeared while saving; not replacing it"));
    }
    if (errno != EINVAL && errno != ENOSYS) return IoError("cannot create", path_);
    // A filesystem without RENAME_NOREPLACE: check, then rename (a narrow race).
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0) {
      return absl::AlreadyExistsError(absl::StrCat("'", path_, "' appeared while saving; not replacing it"));
    }
    if (::rename(temp_path_.c_str(), path_.c_str()) != 0) return IoError("cannot create", path_);
  }
  state_ = State::kPublished;
  return absl::OkStatus();
}

void AtomicFile::Finish() {
  if (state_ == State::kPublished) state_ = State::kDone;
}

Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open folder", dir);
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0 && errno != EINVAL) return IoError("cannot sync folder", dir);
  return absl::OkStatus();
}

}  // namespace onnxsurgeon

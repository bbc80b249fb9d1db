#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

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

StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path) {
  std::unique_ptr<AtomicFile> f(new AtomicFile());
  f->path_ = path;
  std::string tmpl = DirName(path) + "/." + BaseName(path) + ".tmp.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0) return IoError("cannot create a temporary file beside", path);
  f->fd_ = fd;
  f->temp_path_ = buf.data();
  // mkstemp creates 0600; give the output the usual permissions.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  f->buffer_.reserve(kBufferSize);
  return f;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
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

Status AtomicFile::Commit() {
  OS_RETURN_IF_ERROR(Flush());
  // A trailing hole needs the size set explicitly.
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) return IoError("cannot size", path_);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return IoError("cannot close", path_);
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) return IoError("cannot rename into", path_);
  committed_ = true;
  return absl::OkStatus();
}

}  // namespace onnxsurgeon

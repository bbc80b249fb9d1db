#include "core/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

namespace onnxsurgeon {
namespace {

// Live mappings, for MappedFile::Find. A model maps a handful of files.
std::mutex& RegistryMutex() {
  static std::mutex m;
  return m;
}
std::vector<const MappedFile*>& Registry() {
  static std::vector<const MappedFile*> files;
  return files;
}

}  // namespace

StatusOr<std::shared_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  // O_NOCTTY: a terminal device must not become our controlling terminal.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* kind = S_ISDIR(st.st_mode)                            ? "a folder"
                       : S_ISFIFO(st.st_mode)                         ? "a FIFO"
                       : S_ISSOCK(st.st_mode)                         ? "a socket"
                       : (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) ? "a device"
                                                                      : "not a regular file";
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a regular file (", kind, ")"));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  file->device_ = static_cast<uint64_t>(st.st_dev);
  file->inode_ = static_cast<uint64_t>(st.st_ino);
  file->links_ = static_cast<uint64_t>(st.st_nlink);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("cannot map '", path, "': ", std::strerror(err)));
    }
    ::madvise(p, file->size_, MADV_SEQUENTIAL);
    file->data_ = p;
    file->fd_ = fd;
    std::lock_guard<std::mutex> lock(RegistryMutex());
    Registry().push_back(file.get());
  } else {
    ::close(fd);
  }
  return file;
}

MappedFile::~MappedFile() {
  if (data_) {
    {
      std::lock_guard<std::mutex> lock(RegistryMutex());
      auto& files = Registry();
      files.erase(std::remove(files.begin(), files.end(), this), files.end());
    }
    ::munmap(data_, size_);
  }
  if (fd_ >= 0) ::close(fd_);
}

bool MappedFile::IsMapped(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return IsMapped(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
}

bool MappedFile::IsMapped(uint64_t device, uint64_t inode) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  for (const MappedFile* f : Registry())
    if (f->device_ == device && f->inode_ == inode) return true;
  return false;
}

std::optional<MappedFile::Source> MappedFile::Find(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  for (const MappedFile* f : Registry()) {
    const char* base = static_cast<const char*>(f->data_);
    if (bytes.data() >= base && bytes.data() + bytes.size() <= base + f->size_) {
      return Source{f->fd_, static_cast<uint64_t>(bytes.data() - base)};
    }
  }
  return std::nullopt;
}

}  // namespace onnxsurgeon

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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a regular file"));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
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
    file->device_ = static_cast<uint64_t>(st.st_dev);
    file->inode_ = static_cast<uint64_t>(st.st_ino);
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
  std::lock_guard<std::mutex> lock(RegistryMutex());
  for (const MappedFile* f : Registry())
    if (f->device_ == static_cast<uint64_t>(st.st_dev) && f->inode_ == static_cast<uint64_t>(st.st_ino)) return true;
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

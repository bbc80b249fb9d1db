// MappedFile: a read-only mmap of a whole file. Tensors loaded from it keep a
// shared_ptr to it, so the mapping lives exactly as long as some tensor needs it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/ir/status.h"

namespace onnxsurgeon {

class MappedFile {
 public:
  // Only regular files are opened: a FIFO, device or folder is refused without blocking
  // (the open itself does not wait for a FIFO's writer).
  static StatusOr<std::shared_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }
  const std::string& path() const { return path_; }

  // Where bytes held in memory came from: the descriptor of a live mapping holding all
  // of `bytes`, and their offset in it. Lets a writer copy them file-to-file inside the
  // kernel (copy_file_range) instead of faulting the mapping in page by page.
  struct Source {
    int fd = -1;
    uint64_t offset = 0;
  };
  static std::optional<Source> Find(std::string_view bytes);
  // True when `path` is (the same inode as) a file some live mapping holds: a loaded
  // model still reads it, so it must not be rewritten under it.
  static bool IsMapped(const std::string& path);
  static bool IsMapped(uint64_t device, uint64_t inode);
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }
  // The file's hard-link count when it was opened (external data with more than one is
  // refused, as onnx refuses it: the other name may be outside the model's folder).
  uint64_t links() const { return links_; }

 private:
  MappedFile() = default;
  std::string path_;
  void* data_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;  // kept open for Find()
  uint64_t device_ = 0, inode_ = 0, links_ = 0;
};

}  // namespace onnxsurgeon

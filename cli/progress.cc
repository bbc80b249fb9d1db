#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace onnxsurgeon::cli {

Progress::Progress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {
  // ONNXSURGEON_PROGRESS_DELAY=0 shows every step (the tests use it).
  if (const char* delay = std::getenv("ONNXSURGEON_PROGRESS_DELAY")) delay_ = std::atof(delay);
  if (enabled_) thread_ = std::thread([this] { Loop(); });
}

Progress::~Progress() {
  if (!enabled_) return;
  End();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Progress::Begin(const std::string& step) {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  step_ = step;
  start_ = std::chrono::steady_clock::now();
  visited_ = 0;
}

void Progress::End() {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (shown_) std::fprintf(stderr, "\r\033[K");  // clear the line for what comes next
  std::fflush(stderr);
  shown_ = false;
  step_.clear();
}

void Progress::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(delay_ < 0.2 ? 20 : 200));
    if (stop_ || step_.empty()) continue;
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (seconds < delay_) continue;
    int64_t visited = visited_.load(std::memory_order_relaxed);
    std::fprintf(stderr, "\r\033[K  %s  %.1f s", step_.c_str(), seconds);
    if (visited > 0) std::fprintf(stderr, "  %lld nodes visited", static_cast<long long>(visited));
    std::fflush(stderr);
    shown_ = true;
  }
}

}  // namespace onnxsurgeon::cli

#pragma once
// A one-line progress display on stderr ("simulating: plans 12288 / 40960, 3.2 s"), redrawn in place at most ten
// times a second; for long searches on a terminal (the caller decides when: a terminal, not JSON mode).
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace zeropp::cli {

class ProgressLine {
 public:
  void show(const char* phase, std::int64_t done, std::int64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "\r\033[K%s: plans %lld / %lld, %.1f s", phase, static_cast<long long>(done),
                 static_cast<long long>(total), std::chrono::duration<double>(now - start_).count());
    std::fflush(stderr);
  }
  // Clears the line, so that the results print on a clean one.
  void finish() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_;
  bool shown_ = false;
};

}  // namespace zeropp::cli

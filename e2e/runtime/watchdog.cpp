#include "e2e/runtime/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "e2e/runtime/fault.hpp"

namespace zeropp::e2e {

double Watchdog::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Watchdog::Watchdog(Communicator& world, double timeout_s, Clock clock)
    : world_(world), timeout_s_(timeout_s), clock_(std::move(clock)) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Watchdog::watch() {
  using Steady = std::chrono::steady_clock;
  // A few looks per timeout bound the overshoot; at most one per second keeps the thread idle in long timeouts.
  const auto poll =
      std::clamp<Steady::duration>(std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(
                                       timeout_s_ / 8)),
                                   std::chrono::milliseconds(5), std::chrono::seconds(1));
  std::uint64_t seen = 0;
  double since = clock_();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, poll, [this] { return stop_; })) {
    const std::uint64_t now_seq = sequence_.load(std::memory_order_acquire);
    const double now = clock_();
    if (now_seq != seen) {
      seen = now_seq;
      since = now;
    } else if (now_seq % 2 == 1 && now - since >= timeout_s_) {
      const WaitSite* site = site_.load(std::memory_order_relaxed);
      const std::int64_t detail = detail_.load(std::memory_order_relaxed);
      if (sequence_.load(std::memory_order_acquire) != now_seq) continue;  // it moved on after all
      fire(site->describe(detail));
    }
  }
}

void Watchdog::fire(const std::string& what) {
  abort_job(world_, fmt::format("timed out after {:g} s waiting in {}", timeout_s_, what), kTimeoutExitCode);
}

}  // namespace zeropp::e2e

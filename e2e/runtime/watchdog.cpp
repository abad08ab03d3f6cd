#include "e2e/runtime/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "e2e/runtime/fault.hpp"

namespace zeropp::e2e {

Watchdog::Watchdog(Communicator& world, double timeout_s) : world_(world), timeout_s_(timeout_s) {
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
  using Clock = std::chrono::steady_clock;
  const auto timeout = std::chrono::duration<double>(timeout_s_);
  // A few looks per timeout bound the overshoot; at most one per second keeps the thread idle in long timeouts.
  const auto poll = std::clamp<Clock::duration>(std::chrono::duration_cast<Clock::duration>(timeout / 8),
                                                std::chrono::milliseconds(5), std::chrono::seconds(1));
  // A look that comes much later than planned means this process was not running in between: stopped (SIGSTOP,
  // a debugger, mpirun suspending the job) or the machine suspended. That time is nobody's wait, so it is not
  // counted: a stopped rank that is resumed must not blame its own stop on the step it was in. steady_clock
  // (CLOCK_MONOTONIC) runs on while a process is stopped, so the gap between two looks is what shows it. Half a
  // second of slack past the poll keeps a thread that load delays a little counting as usual; one delayed more
  // only times out later, never sooner.
  const auto stalled = poll + std::max<Clock::duration>(poll, std::chrono::milliseconds(500));
  std::uint64_t seen = 0;
  Clock::time_point since = Clock::now();
  Clock::time_point last = since;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, poll, [this] { return stop_; })) {
    const std::uint64_t now_seq = sequence_.load(std::memory_order_acquire);
    const Clock::time_point now = Clock::now();
    if (now - last > stalled) since += now - last - poll;  // not running, so not waiting either
    last = now;
    if (now_seq != seen) {
      seen = now_seq;
      since = now;
    } else if (now_seq % 2 == 1 && now - since >= timeout) {
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

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
  // A look that comes much later than planned means this process was not running in between: stopped (SIGSTOP,
  // a debugger, mpirun suspending the job) or the machine suspended. That time is nobody's wait, so it is not
  // counted: a stopped rank that is resumed must not blame its own stop on the step it was in. The gap is seen on
  // the real steady clock (CLOCK_MONOTONIC runs on while a process is stopped), whatever clock measures steps;
  // what is not counted is that clock's advance over the gap, less one poll. Half a second of slack past the poll
  // keeps a thread that load delays a little counting as usual; one delayed more only times out later, never
  // sooner.
  const auto stalled = poll + std::max<Steady::duration>(poll, std::chrono::milliseconds(500));
  const double poll_s = std::chrono::duration<double>(poll).count();
  std::uint64_t seen = 0;
  double since = clock_();
  double last = since;
  Steady::time_point last_look = Steady::now();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, poll, [this] { return stop_; })) {
    const std::uint64_t now_seq = sequence_.load(std::memory_order_acquire);
    const double now = clock_();
    const Steady::time_point look = Steady::now();
    if (look - last_look > stalled) since += std::max(0.0, now - last - poll_s);  // not running: not waiting either
    last = now;
    last_look = look;
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

#pragma once
// The measured timeline of a run: one event per executed action (start and end, seconds since the common
// start of the step loop), collected per rank and gathered on rank 0. Written as Chrome trace JSON with the
// simulator's vocabulary: the event name is the action's text ("2F0", "1UNSHARD"), the process is the pipeline
// rank's world rank and the thread is the simulator's stream ("compute", "p2p_send", ...), so a measured and a
// predicted trace of the same plan open side by side in Perfetto.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/schedule/action.hpp"
#include "e2e/comm/communicator.hpp"

namespace zeropp::e2e {

struct ActionEvent {
  schedule::Action action;
  std::int32_t step = 0;  // iteration
  double start = 0;       // seconds
  double end = 0;
};

class MeasuredTrace {
 public:
  void reserve(std::size_t n) { events_.reserve(n); }
  void record(const schedule::Action& a, int step, double start, double end) {
    events_.push_back({a, step, start, end});
  }
  const std::vector<ActionEvent>& events() const { return events_; }
  void clear() { events_.clear(); }
  // Shifts every event by -origin (absolute clock -> seconds since the run's start).
  void rebase(double origin) {
    for (ActionEvent& e : events_) {
      e.start -= origin;
      e.end -= origin;
    }
  }

  // Collective over `world`: every rank's events, indexed by world rank (only on `root`; empty elsewhere).
  std::vector<std::vector<ActionEvent>> gather(Communicator& world, int root = 0) const;

 private:
  std::vector<ActionEvent> events_;
};

// {"traceEvents": [...], "displayTimeUnit": "ms"}; ranks[r] are world rank r's events.
nlohmann::json chrome_trace(const std::vector<std::vector<ActionEvent>>& ranks);

}  // namespace zeropp::e2e

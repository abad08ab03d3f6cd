#pragma once
// Counters of every communication call, per kind: how many calls and how many bytes. Bytes follow
// nccl-tests' S: the full buffer (the gathered output of an all-gather, the input of a reduce-scatter, the
// buffer of an all-reduce, the message of a send or recv).
#include <array>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

namespace zeropp::e2e {

enum class CommKind : std::uint8_t { send, recv, all_reduce, all_gather, reduce_scatter, barrier };
inline constexpr int kCommKinds = 6;
std::string_view name(CommKind);

struct CommCount {
  std::int64_t calls = 0;
  std::int64_t bytes = 0;
};

class CommStats {
 public:
  void add(CommKind kind, std::int64_t bytes) {
    auto& c = counts_[static_cast<int>(kind)];
    ++c.calls;
    c.bytes += bytes;
  }
  const CommCount& operator[](CommKind kind) const { return counts_[static_cast<int>(kind)]; }
  void reset() { counts_ = {}; }
  CommStats& operator+=(const CommStats& other);
  // {"all_gather": {"calls": 3, "bytes": 1024}, ...}; kinds with no calls are left out.
  nlohmann::json to_json() const;

 private:
  std::array<CommCount, kCommKinds> counts_{};
};

}  // namespace zeropp::e2e

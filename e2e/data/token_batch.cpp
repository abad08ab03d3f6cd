#include "e2e/data/token_batch.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace zeropp::e2e {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

TokenBatch DataSource::batch(std::int64_t iteration, int g, int M, int b, int T) const {
  if (g < 0 || g >= M) {
    throw std::out_of_range("DataSource::batch: micro-batch " + std::to_string(g) + " outside [0, " +
                            std::to_string(M) + ")");
  }
  TokenBatch out;
  out.b = b;
  out.T = T;
  out.inputs.resize(static_cast<std::size_t>(b) * T);
  out.targets.resize(out.inputs.size());
  std::vector<std::int32_t> seq(static_cast<std::size_t>(T) + 1);
  for (int j = 0; j < b; ++j) {
    const std::int64_t n = (iteration * M + g) * b + j;
    sequence(n, T, seq.data());
    for (int t = 0; t < T; ++t) {
      out.inputs[static_cast<std::size_t>(j) * T + t] = seq[static_cast<std::size_t>(t)];
      out.targets[static_cast<std::size_t>(j) * T + t] = seq[static_cast<std::size_t>(t) + 1];
    }
  }
  return out;
}

SyntheticData::SyntheticData(int vocab, std::uint64_t seed, double noise)
    : vocab_(vocab), seed_(seed), noise_(noise), perm_(static_cast<std::size_t>(vocab)) {
  if (vocab < 2) throw std::invalid_argument("SyntheticData: vocab must be >= 2");
  if (!(noise >= 0.0 && noise <= 1.0)) throw std::invalid_argument("SyntheticData: noise must be in [0, 1]");
  // Fisher-Yates shuffle driven by the seed: the permutation is a pure function of (vocab, seed).
  std::iota(perm_.begin(), perm_.end(), 0);
  std::uint64_t state = splitmix64(seed ^ 0x5A4E524F50505A31ull);
  for (int i = vocab - 1; i > 0; --i) {
    state = splitmix64(state);
    const int j = static_cast<int>(state % static_cast<std::uint64_t>(i + 1));
    std::swap(perm_[static_cast<std::size_t>(i)], perm_[static_cast<std::size_t>(j)]);
  }
}

void SyntheticData::sequence(std::int64_t n, int T, std::int32_t* tokens) const {
  std::uint64_t state = splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(n)));
  auto next = [&]() {
    state = splitmix64(state);
    return state;
  };
  tokens[0] = static_cast<std::int32_t>(next() % static_cast<std::uint64_t>(vocab_));
  const auto threshold = static_cast<std::uint64_t>(noise_ * 9007199254740992.0);  // noise * 2^53
  for (int t = 1; t <= T; ++t) {
    const bool random = (next() >> 11) < threshold;
    tokens[t] = random ? static_cast<std::int32_t>(next() % static_cast<std::uint64_t>(vocab_))
                       : perm_[static_cast<std::size_t>(tokens[t - 1])];
  }
}

double SyntheticData::entropy_floor() const {
  const double V = vocab_;
  const double p_follow = 1.0 - noise_ + noise_ / V;  // the permutation's successor (also drawn at random)
  const double p_other = noise_ / V;
  double h = 0.0;
  if (p_follow > 0.0) h -= p_follow * std::log(p_follow);
  if (p_other > 0.0) h -= (V - 1.0) * p_other * std::log(p_other);
  return h;
}

}  // namespace zeropp::e2e

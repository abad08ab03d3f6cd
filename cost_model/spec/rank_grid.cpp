#include "cost_model/spec/rank_grid.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "cost_model/spec/strategy.hpp"

namespace zeropp {

namespace {

constexpr std::array<const char*, kGridDims> kNames = {"tp", "cp", "z", "dp_shard", "dp", "pp"};

bool in_mask(GridMask mask, int d) { return (mask >> d) & 1u; }

}  // namespace

void RankGrid::bad_size(int dim, int n) {
  throw std::invalid_argument(fmt::format("rank grid: {}={} must be >= 1", kNames[static_cast<std::size_t>(dim)], n));
}

void RankGrid::too_large(long long world) {
  throw std::invalid_argument(fmt::format("rank grid: world {} too large", world));
}

void RankGrid::bad_shard(int shard, int dp) {
  throw std::invalid_argument(fmt::format("rank grid: dp_shard={} does not divide dp={}", shard, dp));
}

GridCoords RankGrid::coords(int rank) const {
  if (rank < 0 || rank >= world_)
    throw std::out_of_range(fmt::format("rank grid: rank {} outside world {}", rank, world_));
  GridCoords c;
  for (std::size_t d = 0; d < kGridDims; ++d) {
    c.at[d] = rank % size_[d];
    rank /= size_[d];
  }
  return c;
}

int RankGrid::rank(const GridCoords& c) const {
  int r = 0;
  for (std::size_t d = 0; d < kGridDims; ++d) {
    if (c.at[d] < 0 || c.at[d] >= size_[d])
      throw std::out_of_range(fmt::format("rank grid: {} index {} outside [0, {})", kNames[d], c.at[d], size_[d]));
    r += c.at[d] * stride_[d];
  }
  return r;
}

std::vector<int> RankGrid::members(GridMask mask, int rank) const {
  GridCoords c = coords(rank);
  for (std::size_t d = 0; d < kGridDims; ++d)
    if (in_mask(mask, static_cast<int>(d))) c.at[d] = 0;
  const int base = this->rank(c);
  std::vector<int> out{base};
  // Each masked dimension, inner first, repeats the members so far at its stride: mixed radix, inner fastest.
  for (std::size_t d = 0; d < kGridDims; ++d) {
    if (!in_mask(mask, static_cast<int>(d))) continue;
    const std::size_t n = out.size();
    for (int i = 1; i < size_[d]; ++i)
      for (std::size_t k = 0; k < n; ++k) out.push_back(out[k] + i * stride_[d]);
  }
  return out;
}

std::vector<std::vector<int>> RankGrid::groups(GridMask mask) const {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(world_ / size(mask)));
  for (int r = 0; r < world_; ++r)
    if (index(mask, r) == 0) out[static_cast<std::size_t>(color(mask, r))] = members(mask, r);
  return out;
}

int RankGrid::color(GridMask mask, int rank) const {
  // The unmasked coordinates in mixed radix, inner first: groups numbered by their first rank.
  const GridCoords c = coords(rank);
  int color = 0, scale = 1;
  for (std::size_t d = 0; d < kGridDims; ++d) {
    if (in_mask(mask, static_cast<int>(d))) continue;
    color += c.at[d] * scale;
    scale *= size_[d];
  }
  return color;
}

int RankGrid::index(GridMask mask, int rank) const {
  const GridCoords c = coords(rank);
  int index = 0, scale = 1;
  for (std::size_t d = 0; d < kGridDims; ++d) {
    if (!in_mask(mask, static_cast<int>(d))) continue;
    index += c.at[d] * scale;
    scale *= size_[d];
  }
  return index;
}

}  // namespace zeropp

#pragma once
// What a collective benchmark sends and must receive, independent of the backend (MPI or NCCL), like
// nccl-tests' per-collective plug-ins. Elements are fp32; S (bytes) is the full buffer in nccl-tests' sense:
// the all-reduced tensor, the all-gathered output, the reduce-scattered input, the message of a send/recv.
// Values are small integers, so every sum over ranks is exact in fp32 and the check compares bit for bit.
#include <cstddef>
#include <string>
#include <vector>

#include "cost_model/analytic/collectives.hpp"

namespace zeropp::microbench {

using analytic::Collective;

// Elements of the full buffer for a request of `bytes`: rounded down to a multiple of n for all-gather and
// reduce-scatter (each rank owns an equal slice), at least one element per rank.
std::size_t full_count(Collective c, std::size_t bytes, int n);

// Elements each rank sends and receives for a full buffer of `count` elements on n ranks.
std::size_t send_count(Collective c, std::size_t count, int n);
std::size_t recv_count(Collective c, std::size_t count, int n);

// Rank r's send buffer. send_recv sends to rank (r+1) mod n and receives from (r-1) mod n (nccl-tests'
// sendrecv pattern: every rank sends and receives at once).
void fill_send(Collective c, int rank, std::vector<float>& send);
// The value rank r must find at index i of its receive buffer.
float expected_recv(Collective c, int rank, int n, std::size_t count, std::size_t i);
// Index of the first element of `recv` that differs from expected_recv, or recv.size() when all match.
std::size_t first_mismatch(Collective c, int rank, int n, std::size_t count, const std::vector<float>& recv);

// nccl-tests' metrics for one timed collective: algbw = S / t, busbw = algbw * busbw_factor(c, n), in GB/s
// (GB = 1e9 bytes).
struct Bandwidth {
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};
Bandwidth bandwidth(Collective c, int n, double bytes, double seconds);

}  // namespace zeropp::microbench

#include "microbench/cpu/mpi_collectives.hpp"

#include <limits>
#include <string>
#include <vector>

#include "microbench/mpi_world.hpp"
#include "microbench/suites.hpp"

namespace zeropp::microbench {

void run_mpi_collective(Collective c, const float* send, float* recv, std::size_t count, MPI_Comm comm) {
  int rank = 0, n = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  const int slice = static_cast<int>(count / static_cast<std::size_t>(n));
  const int full = static_cast<int>(count);
  switch (c) {
    case Collective::all_reduce:
      MPI_Allreduce(send, recv, full, MPI_FLOAT, MPI_SUM, comm);
      break;
    case Collective::all_gather:
      MPI_Allgather(send, slice, MPI_FLOAT, recv, slice, MPI_FLOAT, comm);
      break;
    case Collective::reduce_scatter:
      MPI_Reduce_scatter_block(send, recv, slice, MPI_FLOAT, MPI_SUM, comm);
      break;
    case Collective::send_recv:
      MPI_Sendrecv(send, full, MPI_FLOAT, (rank + 1) % n, 0, recv, full, MPI_FLOAT, (rank - 1 + n) % n, 0, comm,
                   MPI_STATUS_IGNORE);
      break;
  }
}

void bench_mpi_collective(benchmark::State& state, Collective c, MPI_Comm comm) {
  int rank = 0, n = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  const std::size_t count = full_count(c, static_cast<std::size_t>(state.range(0)), n);
  if (count > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    state.SkipWithError("buffer exceeds MPI's int element count");
    return;
  }
  std::vector<float> send(send_count(c, count, n));
  std::vector<float> recv(recv_count(c, count, n));
  fill_send(c, rank, send);

  // Check once, on poisoned output, before timing; every rank must agree on the verdict or none skips.
  recv.assign(recv.size(), std::numeric_limits<float>::quiet_NaN());
  run_mpi_collective(c, send.data(), recv.data(), count, comm);
  const std::size_t bad = first_mismatch(c, rank, n, count, recv);
  if (!all_ranks_ok(bad == recv.size(), comm)) {
    state.SkipWithError(bad == recv.size() ? "data check failed on another rank"
                                           : ("data check failed at element " + std::to_string(bad)).c_str());
    return;
  }

  const int inner = inner_repeats_for_bytes(static_cast<double>(count * sizeof(float)));
  for (int i = 0; i < inner; ++i) run_mpi_collective(c, send.data(), recv.data(), count, comm);  // warm-up

  double total = 0;
  for (auto _ : state) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    for (int i = 0; i < inner; ++i) run_mpi_collective(c, send.data(), recv.data(), count, comm);
    const double seconds = max_over_ranks((MPI_Wtime() - start) / inner, comm);
    state.SetIterationTime(seconds);
    total += seconds;
  }
  const double bytes = static_cast<double>(count * sizeof(float));
  const double mean = total / static_cast<double>(state.iterations());
  const Bandwidth bw = bandwidth(c, n, bytes, mean);
  state.counters["bytes"] = bytes;
  state.counters["ranks"] = n;
  state.counters["inner"] = inner;
  state.counters["algbw_GBps"] = bw.algbw_gbps;
  state.counters["busbw_GBps"] = bw.busbw_gbps;
}

}  // namespace zeropp::microbench

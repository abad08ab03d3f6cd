#include "microbench/cpu/mpi_collectives.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "e2e/comm/mpi_communicator.hpp"
#include "microbench/mpi_world.hpp"
#include "microbench/suites.hpp"

namespace zeropp::microbench {

void run_trainer_collective(Collective c, const float* send, float* recv, std::size_t count, e2e::Communicator& comm,
                            bool copy_send) {
  const int n = comm.size(), rank = comm.rank();
  const std::size_t slice = count / static_cast<std::size_t>(n);
  switch (c) {
    case Collective::all_reduce:
      if (copy_send) std::copy(send, send + count, recv);
      comm.all_reduce(recv, count, e2e::DataType::f32);
      break;
    case Collective::all_gather:
      comm.all_gather(send, recv, slice, e2e::DataType::f32);
      break;
    case Collective::reduce_scatter:
      comm.reduce_scatter(send, recv, slice, e2e::DataType::f32);
      break;
    case Collective::send_recv:
      comm.send(send, count, e2e::DataType::f32, (rank + 1) % n, 0);
      comm.recv(recv, count, e2e::DataType::f32, (rank - 1 + n) % n, 0);
      comm.flush();
      break;
  }
}

void bench_mpi_collective(benchmark::State& state, Collective c, MPI_Comm comm) {
  int rank = 0, n = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  MPI_Comm own;  // the communicator frees what it wraps
  MPI_Comm_dup(comm, &own);
  e2e::MpiCommunicator trainer_comm(own, "bench");
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
  run_trainer_collective(c, send.data(), recv.data(), count, trainer_comm, true);
  const std::size_t bad = first_mismatch(c, rank, n, count, recv);
  if (!all_ranks_ok(bad == recv.size(), comm)) {
    state.SkipWithError(bad == recv.size() ? "data check failed on another rank"
                                           : ("data check failed at element " + std::to_string(bad)).c_str());
    return;
  }

  // The in-place all-reduce would multiply its values by n per call; zeros keep them finite (and exact).
  if (c == Collective::all_reduce) recv.assign(recv.size(), 0.0f);
  const int inner = inner_repeats_for_bytes(static_cast<double>(count * sizeof(float)));
  auto run = [&]() { run_trainer_collective(c, send.data(), recv.data(), count, trainer_comm, false); };
  for (int i = 0; i < inner; ++i) run();  // warm-up

  double total = 0;
  for (auto _ : state) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    for (int i = 0; i < inner; ++i) run();
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

#include "microbench/cuda/nccl_collectives.hpp"

#include <limits>
#include <string>

#include "microbench/cuda/device_buffer.hpp"
#include "microbench/mpi_world.hpp"
#include "microbench/suites.hpp"

namespace zeropp::microbench::cuda {

void run_nccl_collective(Collective c, const float* send, float* recv, std::size_t count, const NcclComm& comm,
                         cudaStream_t stream) {
  const int n = comm.size(), r = comm.rank();
  const std::size_t slice = count / static_cast<std::size_t>(n);
  switch (c) {
    case Collective::all_reduce:
      NCCL_CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm.get(), stream));
      break;
    case Collective::all_gather:
      NCCL_CHECK(ncclAllGather(send, recv, slice, ncclFloat, comm.get(), stream));
      break;
    case Collective::reduce_scatter:
      NCCL_CHECK(ncclReduceScatter(send, recv, slice, ncclFloat, ncclSum, comm.get(), stream));
      break;
    case Collective::send_recv:
      // nccl-tests' sendrecv: send to the next rank and receive from the previous one, grouped.
      NCCL_CHECK(ncclGroupStart());
      NCCL_CHECK(ncclSend(send, count, ncclFloat, (r + 1) % n, comm.get(), stream));
      NCCL_CHECK(ncclRecv(recv, count, ncclFloat, (r - 1 + n) % n, comm.get(), stream));
      NCCL_CHECK(ncclGroupEnd());
      break;
  }
}

void bench_nccl_collective(benchmark::State& state, Collective c, const NcclComm& comm, cudaStream_t stream) {
  const int n = comm.size(), rank = comm.rank();
  const std::size_t count = full_count(c, static_cast<std::size_t>(state.range(0)), n);
  std::vector<float> host_send(send_count(c, count, n));
  fill_send(c, rank, host_send);
  DeviceBuffer<float> send(host_send.size());
  DeviceBuffer<float> recv(recv_count(c, count, n));
  send.upload(host_send);
  recv.upload(std::vector<float>(recv.size(), std::numeric_limits<float>::quiet_NaN()));

  run_nccl_collective(c, send.data(), recv.data(), count, comm, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<float> got = recv.download();
  const std::size_t bad = first_mismatch(c, rank, n, count, got);
  if (!all_ranks_ok(bad == got.size(), comm.mpi())) {
    state.SkipWithError(bad == got.size() ? "data check failed on another rank"
                                          : ("data check failed at element " + std::to_string(bad)).c_str());
    return;
  }

  const int inner = inner_repeats_for_bytes(static_cast<double>(count * sizeof(float)));
  for (int i = 0; i < inner; ++i) run_nccl_collective(c, send.data(), recv.data(), count, comm, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EventTimer timer;
  double total = 0;
  for (auto _ : state) {
    MPI_Barrier(comm.mpi());
    timer.start(stream);
    for (int i = 0; i < inner; ++i) run_nccl_collective(c, send.data(), recv.data(), count, comm, stream);
    timer.stop(stream);
    const double seconds = max_over_ranks(timer.elapsed_seconds() / inner, comm.mpi());
    state.SetIterationTime(seconds);
    total += seconds;
  }
  const double bytes = static_cast<double>(count * sizeof(float));
  const Bandwidth bw = bandwidth(c, n, bytes, total / static_cast<double>(state.iterations()));
  state.counters["bytes"] = bytes;
  state.counters["ranks"] = n;
  state.counters["inner"] = inner;
  state.counters["algbw_GBps"] = bw.algbw_gbps;
  state.counters["busbw_GBps"] = bw.busbw_gbps;
}

}  // namespace zeropp::microbench::cuda

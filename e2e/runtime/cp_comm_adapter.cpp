#include "e2e/runtime/cp_comm_adapter.hpp"

#include "e2e/runtime/tp_comm_adapter.hpp"

namespace zeropp::e2e {

namespace {
constexpr int kRingTag = 0;  // the cp group carries only the ring's shifts and the all-to-alls, in program order
}  // namespace

// Every rank sends first, then receives: the send is staged (Communicator: it returns once its buffer may be
// reused), so the ring cannot deadlock; flush() retires it before the shift returns.
void ContextParallelCommAdapter::ring_shift(Tensor send, Tensor recv, std::int64_t n) {
  const int p = cp_.size(), r = cp_.rank();
  const DataType dt = comm_type(send.dtype);
  cp_.send(send.data, static_cast<std::size_t>(n), dt, (r + 1) % p, kRingTag);
  cp_.recv(recv.data, static_cast<std::size_t>(n), dt, (r + p - 1) % p, kRingTag);
  cp_.flush();
}

// Point-to-point, every send staged before the first receive (as the ring): the bytes of an all-to-all.
void ContextParallelCommAdapter::all_to_all(Tensor send, Tensor recv, std::int64_t n) {
  const int p = cp_.size(), r = cp_.rank();
  const DataType dt = comm_type(send.dtype);
  for (int i = 1; i < p; ++i) {
    const int to = (r + i) % p;
    cp_.send(send.slice(to * n, n).data, static_cast<std::size_t>(n), dt, to, kRingTag);
  }
  for (int i = 1; i < p; ++i) {
    const int from = (r + p - i) % p;
    cp_.recv(recv.slice(from * n, n).data, static_cast<std::size_t>(n), dt, from, kRingTag);
  }
  cp_.flush();
}

}  // namespace zeropp::e2e

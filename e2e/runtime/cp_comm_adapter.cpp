#include "e2e/runtime/cp_comm_adapter.hpp"

#include "e2e/runtime/tp_comm_adapter.hpp"

namespace zeropp::e2e {

namespace {
constexpr int kRingTag = 0;  // the cp group carries only the ring's shifts, in program order
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

}  // namespace zeropp::e2e

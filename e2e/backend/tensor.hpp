#pragma once
// Non-owning views of backend memory and the RAII buffers behind them.
//
// The model never touches memory directly: every buffer is allocated by a Backend and every computation goes
// through the Backend's virtual operations. A CPU backend hands out host pointers; a CUDA backend hands out device
// pointers (bf16 activations, fp32 master weights). The runtime moves data between ranks with the same views
// (pointer, element count, dtype), so it never needs to know which backend it runs on.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zeropp::e2e {

enum class DType : std::uint8_t { f32, bf16, i32 };

std::size_t dtype_size(DType);
std::string_view dtype_name(DType);  // "f32", "bf16", "i32"

class Backend;

// A view of `numel` elements of type `dtype` at `data` (host or device memory, depending on the backend).
// Views are cheap to copy and never own memory. An empty view has data == nullptr and numel == 0.
struct Tensor {
  void* data = nullptr;
  std::int64_t numel = 0;
  DType dtype = DType::f32;

  bool empty() const { return data == nullptr; }
  std::size_t bytes() const { return static_cast<std::size_t>(numel) * dtype_size(dtype); }
  // Elements [offset, offset + count) as a view; throws std::out_of_range when outside the view.
  Tensor slice(std::int64_t offset, std::int64_t count) const;
  // Typed host pointers, checked against `dtype` (std::logic_error on mismatch). Only meaningful for backends
  // whose memory is host memory (the CPU backend); the CUDA backend's views point at device memory.
  float* f32() const;
  std::int32_t* i32() const;
};

// Memory owned by one backend: allocated in the constructor, returned in the destructor. Move-only.
// Buffers are how the model and the runtime hold activations, parameters, gradients and optimizer state;
// the backend counts their bytes (current and peak), which is what the trainer reports as peak memory.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend& backend, std::int64_t numel, DType dtype = DType::f32);  // contents uninitialised
  ~Buffer();
  Buffer(Buffer&&) noexcept;
  Buffer& operator=(Buffer&&) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Tensor view() const { return view_; }
  Tensor slice(std::int64_t offset, std::int64_t count) const { return view_.slice(offset, count); }
  bool empty() const { return view_.empty(); }
  std::int64_t numel() const { return view_.numel; }
  void reset();  // frees the memory now

 private:
  Backend* backend_ = nullptr;
  Tensor view_;
};

}  // namespace zeropp::e2e

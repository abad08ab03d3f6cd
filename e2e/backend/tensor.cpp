#include "e2e/backend/tensor.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "e2e/backend/backend.hpp"

namespace zeropp::e2e {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::bf16:
      return 2;
    case DType::i32:
      return 4;
  }
  throw std::logic_error("dtype_size: unknown dtype");
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::i32:
      return "i32";
  }
  return "?";
}

Tensor Tensor::slice(std::int64_t offset, std::int64_t count) const {
  if (offset < 0 || count < 0 || offset + count > numel) {
    throw std::out_of_range("Tensor::slice [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                            ") outside a view of " + std::to_string(numel) + " elements");
  }
  Tensor t = *this;
  t.data = static_cast<char*>(data) + offset * static_cast<std::int64_t>(dtype_size(dtype));
  t.numel = count;
  return t;
}

float* Tensor::f32() const {
  if (dtype != DType::f32) {
    throw std::logic_error("Tensor::f32 on a " + std::string(dtype_name(dtype)) + " view");
  }
  return static_cast<float*>(data);
}

std::int32_t* Tensor::i32() const {
  if (dtype != DType::i32) {
    throw std::logic_error("Tensor::i32 on a " + std::string(dtype_name(dtype)) + " view");
  }
  return static_cast<std::int32_t*>(data);
}

Buffer::Buffer(Backend& backend, std::int64_t numel, DType dtype) : backend_(&backend) {
  if (numel < 0) throw std::invalid_argument("Buffer: negative element count");
  view_.dtype = dtype;
  view_.numel = numel;
  view_.data = numel > 0 ? backend.allocate(static_cast<std::size_t>(numel) * dtype_size(dtype)) : nullptr;
}

Buffer::~Buffer() { reset(); }

Buffer::Buffer(Buffer&& o) noexcept : backend_(o.backend_), view_(o.view_) {
  o.backend_ = nullptr;
  o.view_ = {};
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    backend_ = std::exchange(o.backend_, nullptr);
    view_ = std::exchange(o.view_, {});
  }
  return *this;
}

void Buffer::reset() {
  if (backend_ != nullptr && view_.data != nullptr) backend_->deallocate(view_.data, view_.bytes());
  view_ = {};
}

}  // namespace zeropp::e2e

#include "tests/e2e/flash_mma_emulation/fiber.hpp"

#include <pthread.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define ZEROPP_EMU_ASAN 1
#endif

// zeropp_emu_switch(void** save, void* load): pushes the System V callee-saved registers, stores the stack pointer
// in *save, loads `load` as the stack pointer, pops the registers saved there and returns into that context. The
// floating-point control words are not switched: every fiber runs with the thread's.
asm(R"(
  .text
  .p2align 4
  .globl zeropp_emu_switch
  .type zeropp_emu_switch, @function
zeropp_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size zeropp_emu_switch, .-zeropp_emu_switch
  .section .note.GNU-stack, "", @progbits
  .text
)");

extern "C" void zeropp_emu_switch(void** save, void* load);

namespace zeropp::emu {

Context make_context(unsigned char* stack, std::size_t bytes, void (*entry)()) {
#ifdef ZEROPP_EMU_ASAN
  ASAN_UNPOISON_MEMORY_REGION(stack, bytes);  // a reused stack keeps the redzones of frames that never returned
#endif
  // From the 16-byte aligned top down: a zero return address for `entry` (it never returns), the address the first
  // switch returns to (`entry`, entered with the stack aligned as after a call), six zeroed saved registers.
  auto top = (reinterpret_cast<std::uintptr_t>(stack) + bytes) & ~std::uintptr_t{15};
  auto* p = reinterpret_cast<std::uint64_t*>(top);
  *--p = 0;
  *--p = reinterpret_cast<std::uint64_t>(entry);
  for (int i = 0; i < 6; ++i) *--p = 0;
  return Context{p, stack, bytes};
}

Context thread_context() {
  Context c;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) c.stack_bottom = addr, c.stack_size = size;
    pthread_attr_destroy(&attr);
  }
  return c;
}

void fiber_entered() {
#ifdef ZEROPP_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

void switch_context(Context& from, const Context& to) {
#ifdef ZEROPP_EMU_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, to.stack_bottom, to.stack_size);
  zeropp_emu_switch(&from.sp, to.sp);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
  zeropp_emu_switch(&from.sp, to.sp);
#endif
}

}  // namespace zeropp::emu

#pragma once
// Stackful fibers for the warp emulation: each emulated GPU thread runs on its own stack, and control passes between
// them only by switch_context (one OS thread runs all of a block's threads in turn). A switch saves the x86-64
// callee-saved registers and swaps stack pointers: 25 ns on the development VM, where glibc's swapcontext, which makes
// a system call per switch, took 670 ns and would stretch the emulation tests from seconds to minutes. x86-64 only
// (tests/e2e/CMakeLists.txt builds the emulation there). Under AddressSanitizer every switch is announced to it.
#include <cstddef>

namespace zeropp::emu {

struct Context {
  void* sp = nullptr;                  // the saved stack pointer
  const void* stack_bottom = nullptr;  // the stack's lowest address and size, for AddressSanitizer
  std::size_t stack_size = 0;
};

// A context that starts `entry` (which must never return) on [stack, stack + bytes) at its first switch.
Context make_context(unsigned char* stack, std::size_t bytes, void (*entry)());
// The calling OS thread's own context (its stack's bounds filled in), to switch back to.
Context thread_context();
// The first call of every entry function (tells AddressSanitizer the switch into the new stack is done).
void fiber_entered();
// Saves the running context in `from` and resumes `to`; returns when something switches back to `from`.
void switch_context(Context& from, const Context& to);

}  // namespace zeropp::emu

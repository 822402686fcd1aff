//===- GpuEmulatorFibers.cpp - stacks and context switches for GPU threads ===//
//
// Every GPU thread is a fiber. A switch happens each time a thread blocks
// (barrier, warp collective) and each time the scheduler resumes one, so it
// must be cheap: on x86-64 it is the few instructions below, which save the
// callee-saved registers (and the SSE/x87 control words, which are
// callee-saved too in the System V ABI) on the old stack, store the stack
// pointer, load the new one and pop the same registers: no system call, no
// signal mask (swapcontext saves the signal mask with a system call on every
// switch). Elsewhere, or with -DROPE_GPU_EMU_UCONTEXT, the slower but
// portable makecontext/swapcontext pair is used.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorInternal.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

namespace rope::gpuemu {

namespace {
std::size_t pageSize() {
  static const std::size_t size = [] {
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<std::size_t>(page) : std::size_t(4096);
  }();
  return size;
}

std::size_t roundToPages(std::size_t bytes) {
  std::size_t page = pageSize();
  return (bytes + page - 1) / page * page;
}

/// A positive integer from environment variable `name`, or 0 if unset or
/// not a positive integer.
int64_t positiveEnv(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  return (*end == '\0' && value > 0) ? static_cast<int64_t>(value) : 0;
}
} // namespace

Stack::Stack(Stack &&other) noexcept
    : mapping(std::exchange(other.mapping, nullptr)),
      mappedBytes(std::exchange(other.mappedBytes, 0)) {}

Stack &Stack::operator=(Stack &&other) noexcept {
  if (this != &other) {
    release();
    mapping = std::exchange(other.mapping, nullptr);
    mappedBytes = std::exchange(other.mappedBytes, 0);
  }
  return *this;
}

bool Stack::allocate(std::size_t bytes) {
  release();
  std::size_t page = pageSize();
  std::size_t total = roundToPages(bytes) + page;
  void *memory = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED)
    return false;
  // The lowest page is the guard: an overflow faults instead of silently
  // writing into the neighbouring fiber's stack.
  if (mprotect(memory, page, PROT_NONE) != 0) {
    munmap(memory, total);
    return false;
  }
  mapping = static_cast<char *>(memory);
  mappedBytes = total;
  return true;
}

void Stack::release() {
  if (mapping)
    munmap(mapping, mappedBytes);
  mapping = nullptr;
  mappedBytes = 0;
}

std::size_t Stack::usableBytes() const {
  return mappedBytes ? mappedBytes - pageSize() : 0;
}

namespace {
/// Stacks of finished launches, kept for the next ones: mapping a stack,
/// faulting in its top page and unmapping it (system calls and a page
/// fault) costs far more than running a block's barriers. At most kPooledStacks
/// are kept (each holds two memory mappings and a few resident pages).
class StackPool {
public:
  static StackPool &instance() {
    static StackPool *pool = new StackPool(); // never destroyed
    return *pool;
  }
  bool take(Stack &stack, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    while (!stacks.empty()) {
      Stack candidate = std::move(stacks.back());
      stacks.pop_back();
      if (candidate.usableBytes() == bytes) {
        stack = std::move(candidate);
        return true;
      }
    }
    return false;
  }
  void give(Stack &stack) {
    std::lock_guard<std::mutex> lock(mutex);
    if (stacks.size() < kPooledStacks)
      stacks.push_back(std::move(stack));
  }

private:
  static constexpr std::size_t kPooledStacks = 4096;
  std::mutex mutex;
  std::vector<Stack> stacks;
};
} // namespace

bool takeStack(Stack &stack, std::size_t bytes) {
  return StackPool::instance().take(stack, roundToPages(bytes)) ||
         stack.allocate(bytes);
}

void returnStack(Stack &stack) {
  if (stack.usableBytes() != 0)
    StackPool::instance().give(stack);
  stack.release();
}

std::size_t stackBytesFromEnv() {
  int64_t kib = positiveEnv("ROPE_GPU_EMU_STACK_KB");
  if (kib <= 0)
    kib = 256;
  return static_cast<std::size_t>(kib) * 1024;
}

int64_t hostThreadsFromEnv(int64_t numBlocks, int64_t threadsPerBlock) {
  int64_t threads = positiveEnv("ROPE_GPU_EMU_THREADS");
  if (threads <= 0)
    threads = static_cast<int64_t>(std::thread::hardware_concurrency());
  // Each fiber stack is two mappings (stack, guard page); the kernel allows
  // 65530 per process by default (vm.max_map_count).
  threads = std::min(threads, kMaxFibersPerLaunch / threadsPerBlock);
  return std::max<int64_t>(1, std::min(threads, numBlocks));
}

} // namespace rope::gpuemu

#ifndef ROPE_GPU_EMU_USE_UCONTEXT

// void ropeGpuEmuSwitchStacks(void **saveSp, void *loadSp)
// Pushes rbp, rbx, r12-r15 and an 8-byte slot holding MXCSR (low half) and
// the x87 control word, stores rsp into *saveSp, switches to loadSp and pops
// the same frame there; `ret` continues where that context switched out (or
// at the entry written by prepareContext). Hidden: not part of the ABI.
extern "C" void ropeGpuEmuSwitchStacks(void **saveSp, void *loadSp);
asm(R"(
  .text
  .p2align 4
  .globl ropeGpuEmuSwitchStacks
  .hidden ropeGpuEmuSwitchStacks
  .type ropeGpuEmuSwitchStacks, @function
ropeGpuEmuSwitchStacks:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size ropeGpuEmuSwitchStacks, .-ropeGpuEmuSwitchStacks
)");

namespace rope::gpuemu {

void prepareContext(Context &context, Stack &stack, void (*entry)(),
                    std::size_t skew) {
  // The frame that ropeGpuEmuSwitchStacks pops, from the new stack pointer
  // up: control words, r15, r14, r13, r12, rbx, rbp, return address
  // (`entry`), and a null fake return address for `entry` itself, so that
  // entry starts with rsp = 8 (mod 16) as after a call.
  auto *top = reinterpret_cast<uint64_t *>(stack.top() - skew);
  uint32_t mxcsr = 0;
  uint16_t fpuControl = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpuControl));
  top[-1] = 0;
  top[-2] = reinterpret_cast<uint64_t>(entry);
  for (int slot = 3; slot <= 8; ++slot)
    top[-slot] = 0;
  top[-9] = static_cast<uint64_t>(mxcsr) |
            (static_cast<uint64_t>(fpuControl) << 32);
  context.sp = &top[-9];
}

void switchContext(Context &from, Context &to) {
  ropeGpuEmuSwitchStacks(&from.sp, to.sp);
}

} // namespace rope::gpuemu

#else // ROPE_GPU_EMU_USE_UCONTEXT

namespace rope::gpuemu {

void prepareContext(Context &context, Stack &stack, void (*entry)(),
                    std::size_t skew) {
  getcontext(&context.uc);
  context.uc.uc_stack.ss_sp = stack.top() - stack.usableBytes();
  context.uc.uc_stack.ss_size = stack.usableBytes() - skew;
  context.uc.uc_link = nullptr;
  makecontext(&context.uc, entry, 0);
}

void switchContext(Context &from, Context &to) {
  swapcontext(&from.uc, &to.uc);
}

} // namespace rope::gpuemu

#endif // ROPE_GPU_EMU_USE_UCONTEXT

//===- RuntimeErrors.cpp - how compiled code reports a failed check -------===//
//
// See RuntimeErrors.h. A failed check unwinds to the active ropeRuntimeCall
// with longjmp: compiled code keeps no state that needs cleaning up on the
// way (no destructors; what it allocated is lost), and ropeRuntimeCall's own
// frame holds nothing across setjmp but its arguments. Only header-only C++
// is used, so the library needs the C library alone.
//
//===----------------------------------------------------------------------===//

#include "rope/Runtime/RuntimeErrors.h"

#include <algorithm>
#include <array>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace {
/// Messages longer than this are cut (they are one diagnostic line).
constexpr std::size_t kMessageCapacity = 4096;

/// The innermost ropeRuntimeCall of this thread, if any.
struct ActiveCall {
  std::jmp_buf target;
  char message[kMessageCapacity];
};
thread_local ActiveCall *activeCall = nullptr;

RopeRuntimeErrorHandler handler = nullptr;
void *handlerData = nullptr;

/// `format` with `{i}` (i < count) replaced by values[i] in decimal, into
/// `out` (NUL-terminated, cut at `capacity`). Plain C: the library depends
/// on the C library alone.
void substitute(const char *format, int64_t count, const int64_t *values,
                char *out, std::size_t capacity) {
  std::size_t used = 0;
  auto append = [&](const char *text, std::size_t n) {
    n = std::min(n, capacity - 1 - used);
    std::memcpy(out + used, text, n);
    used += n;
  };
  for (const char *p = format; *p && used + 1 < capacity; ++p) {
    if (*p == '{') {
      char *end = nullptr;
      long long index = std::strtoll(p + 1, &end, 10);
      if (end != p + 1 && *end == '}' && index >= 0 && index < count) {
        char number[24];
        int n = std::snprintf(number, sizeof(number), "%lld",
                              static_cast<long long>(values[index]));
        append(number, static_cast<std::size_t>(n));
        p = end;
        continue;
      }
    }
    append(p, 1);
  }
  out[used] = '\0';
}

/// Calls `fn` with the N pointers of `args`.
template <std::size_t... I>
void callWith(void *fn, void *const *args, std::index_sequence<I...>) {
  using Fn = void (*)(decltype((void)I, static_cast<void *>(nullptr))...);
  reinterpret_cast<Fn>(fn)(args[I]...);
}

using Trampoline = void (*)(void *, void *const *);
template <std::size_t... N>
constexpr auto makeTrampolines(std::index_sequence<N...>) {
  return std::array<Trampoline, sizeof...(N)>{+[](void *fn, void *const *args) {
    callWith(fn, args, std::make_index_sequence<N>());
  }...};
}
} // namespace

static const auto trampolines =
    makeTrampolines(std::make_index_sequence<kRopeRuntimeMaxCallArgs + 1>());

extern "C" void ropeRuntimeError(const char *message, int64_t numValues,
                                 const int64_t *values) {
  if (ActiveCall *call = activeCall) {
    substitute(message, numValues, values, call->message, kMessageCapacity);
    std::longjmp(call->target, 1);
  }
  static thread_local char text[kMessageCapacity];
  substitute(message, numValues, values, text, kMessageCapacity);
  if (RopeRuntimeErrorHandler h = handler) {
    h(text, handlerData);
    std::fprintf(stderr, "rope runtime: the error handler returned; aborting\n");
    std::abort();
  }
  std::fprintf(stderr, "%s\n", text);
  std::fflush(stderr);
  std::exit(1);
}

extern "C" RopeRuntimeErrorHandler
ropeRuntimeSetErrorHandler(RopeRuntimeErrorHandler newHandler, void *userData) {
  RopeRuntimeErrorHandler previous = handler;
  handler = newHandler;
  handlerData = userData;
  return previous;
}

extern "C" int ropeRuntimeCall(void *function, int numArgs, void *const *args,
                               char *message, size_t capacity) {
  if (numArgs < 0 || numArgs > kRopeRuntimeMaxCallArgs)
    return -1;
  ActiveCall call;
  ActiveCall *outer = activeCall;
  activeCall = &call;
  // `call` and `outer` are not modified between setjmp and longjmp.
  if (setjmp(call.target) == 0) {
    trampolines[numArgs](function, args);
    activeCall = outer;
    return 0;
  }
  activeCall = outer;
  if (message && capacity) {
    std::size_t n = std::min(std::strlen(call.message), capacity - 1);
    std::memcpy(message, call.message, n);
    message[n] = '\0';
  }
  return 1;
}

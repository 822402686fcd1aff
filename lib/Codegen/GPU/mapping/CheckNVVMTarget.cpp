//===- CheckNVVMTarget.cpp - reject targets NVPTX cannot compile for ------===//

#include "rope/Codegen/GPU/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include <optional>

namespace mlir::rope {
#define GEN_PASS_DEF_ROPECHECKNVVMTARGET
#include "rope/Codegen/GPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {
/// Rejects an NVIDIA target that LLVM 22's NVPTX backend would not compile
/// for: an unknown chip is only warned about (and the PTX is then wrong for
/// the GPU), and a PTX ISA too old for the chip aborts the process inside
/// the backend ("LLVM ERROR: PTX version ... does not support target").
struct RopeCheckNVVMTargetPass
    : public rope::impl::RopeCheckNVVMTargetBase<RopeCheckNVVMTargetPass> {
  using RopeCheckNVVMTargetBase::RopeCheckNVVMTargetBase;

  /// The oldest PTX ISA (×10) that LLVM 22 emits for each chip it knows,
  /// read off `llc -mcpu=<chip> -mattr=+ptx<N>` for every N.
  static std::optional<int> minimumPTX(StringRef chip) {
    static const std::pair<const char *, int> table[] = {
        {"sm_20", 32},   {"sm_21", 32},   {"sm_30", 32},   {"sm_32", 40},
        {"sm_35", 32},   {"sm_37", 41},   {"sm_50", 40},   {"sm_52", 41},
        {"sm_53", 42},   {"sm_60", 50},   {"sm_61", 50},   {"sm_62", 50},
        {"sm_70", 60},   {"sm_72", 61},   {"sm_75", 63},   {"sm_80", 70},
        {"sm_86", 71},   {"sm_87", 74},   {"sm_88", 90},   {"sm_89", 78},
        {"sm_90", 78},   {"sm_90a", 80},  {"sm_100", 86},  {"sm_100a", 86},
        {"sm_100f", 88}, {"sm_101", 86},  {"sm_101a", 86}, {"sm_101f", 88},
        {"sm_103", 88},  {"sm_103a", 88}, {"sm_103f", 88}, {"sm_110", 90},
        {"sm_110a", 90}, {"sm_110f", 90}, {"sm_120", 87},  {"sm_120a", 87},
        {"sm_120f", 88}, {"sm_121", 88},  {"sm_121a", 88}, {"sm_121f", 88}};
    for (auto [name, ptx] : table)
      if (chip == name)
        return ptx;
    return std::nullopt;
  }

  void runOnOperation() override {
    auto fail = [&](const Twine &message) {
      getOperation().emitError("--rope-lower-to-nvvm: ") << message;
      signalPassFailure();
    };
    std::optional<int> needed = minimumPTX(chip);
    if (!needed)
      return fail("unknown chip '" + chip +
                  "' (LLVM 22 knows sm_20 ... sm_121f, e.g. sm_80, sm_90)");
    int ptx = 0;
    SmallVector<StringRef> list;
    StringRef(features).split(list, ',', -1, /*KeepEmpty=*/false);
    for (StringRef feature : list) {
      int version;
      StringRef number = feature;
      if (!number.consume_front("+ptx") || number.getAsInteger(10, version) ||
          version < 32 || version > 90)
        return fail("unsupported feature '" + feature +
                    "' (expected +ptxNN, PTX ISA 3.2 to 9.0)");
      ptx = std::max(ptx, version);
    }
    if (ptx < *needed)
      return fail("chip " + chip + " needs PTX ISA " + Twine(*needed / 10) +
                  "." + Twine(*needed % 10) + " or newer: add features=+ptx" +
                  Twine(*needed));
    // The spellings gpu-module-to-binary accepts.
    if (!llvm::is_contained({"fatbin", "fatbinary", "bin", "binary", "isa",
                             "assembly", "llvm", "offloading"},
                            StringRef(format)))
      return fail("unknown format '" + format +
                  "' (fatbin, bin, isa or llvm)");
  }
};
} // namespace

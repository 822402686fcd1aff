//===- CpuFeatures.cpp - the CPU features codegen selects by --------------===//

#include "rope/Codegen/CPU/CpuFeatures.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::rope;

namespace {
/// A feature's LLVM name and its field.
struct NamedFeature {
  llvm::StringLiteral name;
  bool CpuFeatures::*field;
};
} // namespace

static constexpr NamedFeature kFeatures[] = {
    {"avx512f", &CpuFeatures::avx512f},
    {"avx512bf16", &CpuFeatures::avx512bf16},
    {"avx512fp16", &CpuFeatures::avx512fp16},
    {"amx-tile", &CpuFeatures::amxTile},
    {"amx-bf16", &CpuFeatures::amxBf16},
    {"amx-fp16", &CpuFeatures::amxFp16},
};

const CpuFeatures &CpuFeatures::host() {
  // The features of the machine do not change under a process.
  static const CpuFeatures features = [] {
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    CpuFeatures result;
    for (const NamedFeature &feature : kFeatures)
      result.*feature.field = host.lookup(feature.name);
    return result;
  }();
  return features;
}

FailureOr<CpuFeatures> CpuFeatures::parse(StringRef spec, std::string &error) {
  SmallVector<StringRef> items;
  llvm::SplitString(spec, items, ",");
  CpuFeatures result;
  for (auto [index, entry] : llvm::enumerate(items)) {
    StringRef item = entry.trim();
    if (item == "host" && index == 0) {
      result = host();
      continue;
    }
    bool on = !item.consume_front("-");
    if (on)
      item.consume_front("+");
    const NamedFeature *feature = llvm::find_if(
        kFeatures, [&](const NamedFeature &f) { return f.name == item; });
    if (feature == std::end(kFeatures)) {
      error = ("unknown CPU feature '" + item + "' (known: host, ").str();
      llvm::interleave(
          kFeatures, [&](const NamedFeature &f) { error += f.name; },
          [&] { error += ", "; });
      error += ")";
      return failure();
    }
    result.*feature->field = on;
  }
  return result;
}

bool CpuFeatures::hasTileProducts(Type elementType) const {
  if (!amxTile)
    return false;
  return (elementType.isBF16() && amxBf16) || (elementType.isF16() && amxFp16);
}

bool CpuFeatures::hasDotProducts(Type elementType) const {
  return elementType.isBF16() && avx512f && avx512bf16;
}

std::string CpuFeatures::str() const {
  SmallVector<StringRef> on;
  for (const NamedFeature &feature : kFeatures)
    if (this->*feature.field)
      on.push_back(feature.name);
  return llvm::join(on, ",");
}

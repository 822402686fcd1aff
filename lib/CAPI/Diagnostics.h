//===- Diagnostics.h - diagnostics and strings across the C API -*- C++ -*-===//
//
// What every entry point of the C API shares: MLIR diagnostics recorded as
// the JSON list the API documents (include/rope-c/Compiler.h) instead of
// printed, and strings handed to the caller on the C heap (ropeFreeString).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_CAPI_DIAGNOSTICS_H
#define ROPE_LIB_CAPI_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::rope::capi {

/// A copy of `text` on the C heap, NUL-terminated, for the caller to free.
char *copyString(llvm::StringRef text);

/// `value` as compact JSON text.
std::string toJson(llvm::json::Value value);

/// Records every diagnostic `context` reports while it lives, as
/// {"severity", "location", "message", "notes": [{"location", "message"}]}.
class DiagnosticRecorder {
public:
  DiagnosticRecorder(MLIRContext *context, std::string sourceName);

  /// An error with no better location than the source itself.
  void recordError(const llvm::Twine &message);

  /// The recorded list as JSON on the C heap; the recorder is empty after.
  char *take();

private:
  void record(Diagnostic &diag);

  std::string sourceName;
  llvm::json::Array diagnostics;
  ScopedDiagnosticHandler handler;
};

} // namespace mlir::rope::capi

#endif // ROPE_LIB_CAPI_DIAGNOSTICS_H

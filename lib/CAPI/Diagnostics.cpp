//===- Diagnostics.cpp - diagnostics and strings across the C API ---------===//

#include "Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::rope::capi;

char *mlir::rope::capi::copyString(llvm::StringRef text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  return copy;
}

std::string mlir::rope::capi::toJson(llvm::json::Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  return text;
}

namespace {

/// "file:line:col" for the innermost file location of `loc`, else MLIR's
/// own spelling of it.
std::string locationText(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    loc.print(os);
  return text;
}

llvm::StringRef severityText(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  llvm_unreachable("unknown diagnostic severity");
}

} // namespace

DiagnosticRecorder::DiagnosticRecorder(MLIRContext *context,
                                       std::string sourceName)
    : sourceName(std::move(sourceName)),
      handler(context, [this](Diagnostic &diag) {
        record(diag);
        return success();
      }) {}

void DiagnosticRecorder::recordError(const llvm::Twine &message) {
  llvm::json::Object diag;
  diag["severity"] = "error";
  diag["location"] = sourceName;
  diag["message"] = message.str();
  diag["notes"] = llvm::json::Array();
  diagnostics.push_back(std::move(diag));
}

char *DiagnosticRecorder::take() {
  char *text = copyString(toJson(llvm::json::Value(std::move(diagnostics))));
  diagnostics = llvm::json::Array();
  return text;
}

void DiagnosticRecorder::record(Diagnostic &diag) {
  llvm::json::Object entry;
  entry["severity"] = severityText(diag.getSeverity());
  entry["location"] = locationText(diag.getLocation());
  entry["message"] = diag.str();
  llvm::json::Array notes;
  for (Diagnostic &note : diag.getNotes()) {
    llvm::json::Object noteEntry;
    noteEntry["location"] = locationText(note.getLocation());
    noteEntry["message"] = note.str();
    notes.push_back(std::move(noteEntry));
  }
  entry["notes"] = std::move(notes);
  diagnostics.push_back(std::move(entry));
}

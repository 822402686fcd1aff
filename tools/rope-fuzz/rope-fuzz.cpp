//===- rope-fuzz.cpp - libFuzzer target for the rope compiler -------------===//
//
// Treats each input as MLIR text and
//   1. parses and verifies it with only the dialects rope IR is written in
//      (most inputs stop here), then again with everything rope-opt has;
//   2. checks that it round-trips: printed in custom and in generic form it
//      reparses, verifies, and prints the same again;
//   3. runs each of our passes and pipelines on its own copy of the module in
//      a fresh PassManager with the verifier on, and prints the result.
// A pass may fail (a diagnostic); diagnostics are swallowed. What counts is a
// crash, a sanitizer report, an assert in our code (compiled with assertions),
// or a round-trip mismatch (reported as a trap). With ROPE_FUZZ_MUTATE=tokens
// half of the mutations are MLIR-aware edits (TokenMutator.h) instead of
// libFuzzer's byte edits. See docs/reliability.md.
//
//===----------------------------------------------------------------------===//

#include "RopeTestPasses.h"
#include "TokenMutator.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Registration/InitAllRope.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include <optional>
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// The registry rope-opt uses: every upstream dialect and extension plus
/// ours. Passes run in a context with it, so they behave as in rope-opt
/// (several external models, e.g. for bufferization, are registered along
/// with the dialects).
DialectRegistry &fullRegistry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    registerAllDialects(*reg);
    registerAllExtensions(*reg);
    rope::registerAllRopeDialects(*reg);
    return reg;
  }();
  return *r;
}

/// The input language: ours, the upstream dialects rope IR is written with
/// (func, arith, math, tensor) and the frontend dialects --rope-raise reads
/// (linalg, tosa). An input must parse and verify with only these before
/// it is parsed again with the full registry; otherwise most of the effort
/// goes into upstream parsers (ROPE_FUZZ_ALL_DIALECTS=1 skips this gate; see
/// docs/reliability.md for what that finds).
DialectRegistry &inputRegistry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    reg->insert<func::FuncDialect, arith::ArithDialect, math::MathDialect,
                tensor::TensorDialect, linalg::LinalgDialect,
                tosa::TosaDialect>();
    rope::registerAllRopeDialects(*reg);
    return reg;
  }();
  return *r;
}

/// Inputs that crash upstream MLIR 22 code (not ours) before our code runs;
/// skipped so that a run can go on. Each has a reproducer in
/// test/fuzz/inputs/ and an entry in docs/reliability.md.
bool hitsKnownUpstreamCrash(llvm::StringRef text) {
  // linalg.transpose / linalg.broadcast: the custom parser stores a null
  // attribute when `permutation = ` / `dimensions = ` is not followed by a
  // well-formed integer list (NamedAttrList::set on null, SEGV).
  if (text.contains("linalg.transpose") || text.contains("linalg.broadcast")) {
    static const llvm::Regex keyword("(permutation|dimensions)[[:space:]]*=");
    static const llvm::Regex wellFormed(
        "^(permutation|dimensions)[[:space:]]*=[[:space:]]*\\[[[:space:]]*"
        "(-?[0-9]{1,18}[[:space:]]*(,[[:space:]]*-?[0-9]{1,18}[[:space:]]*)*)?\\]");
    llvm::StringRef rest = text;
    llvm::SmallVector<llvm::StringRef, 2> match;
    while (keyword.match(rest, &match)) {
      rest = rest.drop_front(match[0].data() - rest.data());
      if (!wellFormed.match(rest))
        return true;
      rest = rest.drop_front(match[0].size());
    }
  }
  // linalg.batch_matmul on `index` elements: the parser's region builder
  // crashes (SEGV at a null function; the stock mlir-opt too). The token
  // mode makes `index` one edit away from every seed.
  if (text.contains("linalg.batch_matmul") && text.contains("index>"))
    return true;
  return false;
}

/// Pass pipelines run on every module that verifies, each on its own copy.
/// Names not registered in this build (e.g. a pass still in review) are
/// skipped, so the list can name passes ahead of time.
std::vector<std::string> &pipelines() {
  static std::vector<std::string> *p = new std::vector<std::string>();
  return *p;
}

void initPipelines() {
  // (pass or pipeline name, options) pairs.
  static const char *const candidates[][2] = {
      {"convert-rope-to-linalg", ""},
      {"rope-fold-rotation-into-qk", ""},
      {"rope-decompose-attention", ""},
      // Small tiles: partial tiles at both ends, the causal skip.
      {"rope-decompose-attention", "{query-tile=3 key-tile=2}"},
      // Split-K: parallel partial states and their merge.
      {"rope-decompose-attention", "{split-keys=3 key-tile=2}"},
      {"rope-decompose-attention-rows", ""},
      // Rows with key tiles that do not divide the keys (partial tiles).
      {"rope-decompose-attention-rows", "{key-tile=3}"},
      // The online op's own passes, one at a time, then decomposed.
      {"rope-convert-attention-to-online", ""},
      {"rope-tile-attention", ""},
      {"rope-tile-attention", "{query-tile=2 key-tile=3 split-keys=2}"},
      {"rope-tile-attention", "{rows=1 key-tile=2}"},
      {"rope-skip-invisible-attention-tiles", ""},
      {"rope-decompose-online-attention", ""},
      {"rope-raise", ""},
      {"canonicalize", ""},
      // Our ops' ReifyRankedShapedTypeOpInterface (tensor.dim of a result).
      {"resolve-ranked-shaped-type-result-dims", ""},
      {"rope-lower-to-cpu", ""},
      {"rope-lower-to-cpu",
       "{fold-rotation=0 decompose-attention=0 parallel=0 c-wrappers=0}"},
      {"rope-lower-to-cpu", "{split-keys=2 key-tile=3}"},
      // The GPU mapping (buffers on the device, loops to kernels) without
      // NVPTX code generation: kernels run as host loops.
      {"rope-test-gpu-mapping-on-cpu", ""},
  };
  for (const auto &c : candidates) {
    llvm::StringRef name = c[0];
    if (!PassInfo::lookup(name) && !PassPipelineInfo::lookup(name))
      continue;
    // Added to a PassManager anchored on builtin.module: no anchor here
    // (`builtin.module(...)` would nest, and run on nested modules only).
    pipelines().push_back((name + c[1]).str());
  }
}

[[noreturn]] void reportMismatch(const char *what, const std::string &a,
                                 const std::string &b) {
  fprintf(stderr, "rope-fuzz: %s\n--- first ---\n%s\n--- second ---\n%s\n",
          what, a.c_str(), b.c_str());
  __builtin_trap();
}

std::string print(Operation *op, bool generic) {
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  op->print(os, flags);
  return s;
}

OwningOpRef<ModuleOp> parse(llvm::StringRef text, MLIRContext &ctx) {
  // The lexer relies on a NUL after the buffer (std::string provides one).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "fuzz-input",
                                       /*RequiresNullTerminator=*/true),
      llvm::SMLoc());
  // parseSourceFile verifies after parsing.
  return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&ctx));
}

/// print -> parse -> print is a fixed point, in both forms.
void checkRoundTrip(ModuleOp module, MLIRContext &ctx) {
  for (bool generic : {false, true}) {
    std::string first = print(module, generic);
    // Blob names are unique within a context: reparsing a module's
    // dialect_resources in the context that already holds them renames each
    // blob (`name` becomes `name_1`), and so does reparsing a dense_resource
    // that names a blob the module does not define (the parse made an
    // empty one), so such a module is reparsed in a fresh context.
    std::optional<MLIRContext> fresh;
    MLIRContext *parseContext = &ctx;
    llvm::StringRef text(first);
    if (text.contains("dialect_resources") ||
        text.contains("dense_resource<")) {
      fresh.emplace(fullRegistry(), MLIRContext::Threading::DISABLED);
      parseContext = &*fresh;
    }
    OwningOpRef<ModuleOp> again = parse(first, *parseContext);
    if (!again)
      reportMismatch(generic ? "generic form does not reparse"
                             : "custom form does not reparse",
                     first, "");
    std::string second = print(*again, generic);
    if (first != second)
      reportMismatch("printing is not a fixed point", first, second);
  }
}

/// Runs `pipeline` on a copy of `module`; true when it succeeds.
bool runPipeline(ModuleOp module, MLIRContext &ctx, const std::string &pipeline,
                 OwningOpRef<ModuleOp> &result) {
  result = module.clone();
  PassManager pm(&ctx);
  pm.enableVerifier(true);
  if (failed(parsePassPipeline(pipeline, pm))) {
    fprintf(stderr, "rope-fuzz: cannot parse pipeline %s\n", pipeline.c_str());
    abort();
  }
  return succeeded(pm.run(*result));
}

/// The harness must really run the passes: lower a rotation and check that
/// no rope op is left (a pipeline that silently ran on nothing once made the
/// fuzzer exercise only the parser and verifiers).
void selfTest() {
  MLIRContext ctx(fullRegistry(), MLIRContext::Threading::DISABLED);
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @f(%x: tensor<2x4xf32>, %p: tensor<2xi64>) -> tensor<2x4xf32> {
      %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x4xf32>, tensor<2xi64>
      return %r : tensor<2x4xf32>
    })mlir", ctx);
  for (const std::string &pipeline : pipelines()) {
    if (pipeline.rfind("rope-lower-to-cpu", 0) != 0 &&
        pipeline != "convert-rope-to-linalg")
      continue;
    OwningOpRef<ModuleOp> out;
    bool lowered = module && runPipeline(*module, ctx, pipeline, out);
    if (lowered)
      out->walk([&](Operation *op) {
        if (isa<rope::RopeDialect>(op->getDialect()))
          lowered = false;
      });
    if (!lowered) {
      fprintf(stderr, "rope-fuzz: self-test failed: %s does not lower rope.rotate\n",
              pipeline.c_str());
      if (out)
        llvm::errs() << print(*out, /*generic=*/false) << "\n";
      abort();
    }
  }
}

} // namespace

/// ASan defaults (ASAN_OPTIONS still overrides them):
/// * allow_user_poisoning=0: LLVM's BumpPtrAllocator, inline in headers,
///   poisons fresh slabs when compiled with ASan (our code) but not in the
///   uninstrumented libMLIR.so, which then hands out memory from such a slab
///   without unpoisoning it: use-after-poison reports that are artefacts of
///   the mixed build, not bugs;
/// * detect_leaks=0: libMLIR.so keeps process-lifetime allocations (pass and
///   dialect registries, cl::opt storage) that LeakSanitizer would report at
///   exit; leaks per input would show up as growing RSS (-rss_limit_mb).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  registerAllPasses();
  rope::registerAllRopePasses();
  rope::test::registerRopeTestPasses();
  (void)fullRegistry();
  (void)inputRegistry();
  initPipelines();
  selfTest();
  return 0;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

/// ROPE_FUZZ_MUTATE=tokens: every other mutation is a token edit (an extent,
/// an element type, a float, a keyword's integer), the rest libFuzzer's.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  static const bool tokens = [] {
    const char *mode = getenv("ROPE_FUZZ_MUTATE");
    return mode && llvm::StringRef(mode) == "tokens";
  }();
  if (tokens && seed % 2 == 0) {
    std::string text(reinterpret_cast<const char *>(data), size);
    if (rope::fuzz::mutateTokens(text, seed / 2) && text.size() <= maxSize) {
      memcpy(data, text.data(), text.size());
      return text.size();
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  if (hitsKnownUpstreamCrash(text))
    return -1; // Not added to the corpus.

  static const bool allDialects = getenv("ROPE_FUZZ_ALL_DIALECTS") != nullptr;
  if (!allDialects) {
    MLIRContext gate(inputRegistry(), MLIRContext::Threading::DISABLED);
    ScopedDiagnosticHandler swallow(&gate, [](Diagnostic &) { return success(); });
    if (!parse(text, gate))
      return 0;
  }

  MLIRContext ctx(fullRegistry(), MLIRContext::Threading::DISABLED);
  // Diagnostics are expected (most inputs are invalid): swallow them.
  // ROPE_FUZZ_VERBOSE=1 prints them and what happened to each input.
  static const bool verbose = getenv("ROPE_FUZZ_VERBOSE") != nullptr;
  ScopedDiagnosticHandler swallow(&ctx, [](Diagnostic &diag) {
    if (verbose)
      llvm::errs() << "rope-fuzz: diagnostic: " << diag << "\n";
    return success();
  });

  OwningOpRef<ModuleOp> module = parse(text, ctx);
  if (verbose)
    fprintf(stderr, "rope-fuzz: input %s\n", module ? "verifies" : "rejected");
  if (!module)
    return 0;
  // Parsed and verified: keep it in the corpus even if the passes fail.
  checkRoundTrip(*module, ctx);

  for (const std::string &pipeline : pipelines()) {
    OwningOpRef<ModuleOp> copy;
    bool ok = runPipeline(*module, ctx, pipeline, copy);
    if (ok)
      (void)print(*copy, /*generic=*/false);
    if (verbose)
      fprintf(stderr, "rope-fuzz:   %s: %s\n", pipeline.c_str(),
              ok ? "ok" : "failed");
  }
  return 0;
}

//===- Compiler.cpp - compile rope modules in process ---------------------===//
//
// The C API of include/rope-c/Compiler.h: parse, run a pipeline, translate to
// LLVM IR and compile for the host, inside the caller's process. Every
// failure comes back as diagnostics with their source locations; nothing is
// printed, nothing aborts.
//
//===----------------------------------------------------------------------===//

#include "rope-c/Compiler.h"

#include "Diagnostics.h"

#include "rope/Registration/InitAllRope.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>

using namespace mlir;
using mlir::rope::capi::copyString;
using mlir::rope::capi::toJson;

namespace {

/// The dialects, extensions and LLVM IR translations a module may use: every
/// upstream one (frontends' IR comes in many) plus ours. Built once.
const DialectRegistry &getRegistry() {
  static const DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerAllDialects(*r);
    registerAllExtensions(*r);
    rope::registerAllRopeDialects(*r);
    registerAllToLLVMIRTranslations(*r);
    registerAllGPUToLLVMIRTranslations(*r);
    return r;
  }();
  return *registry;
}

/// Pass registration (textual pipelines name passes) and the host target.
void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    rope::registerAllRopePasses();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// One compilation: a context of its own (so that nothing a module creates
/// outlives it), the diagnostics it reported, the module being lowered.
class Compilation {
public:
  Compilation(const char *source, size_t length,
              const RopeCompileOptions *options)
      : context(getRegistry(), MLIRContext::Threading::DISABLED),
        source(source, length),
        sourceName(options && options->sourceName ? options->sourceName
                                                   : "<source>"),
        pipeline(options && options->pipeline ? options->pipeline : ""),
        optLevel(options ? std::clamp(options->optLevel, 0, 3) : 2),
        diagnostics(&context, sourceName) {}

  /// Parses the source, records the signatures of its public functions and
  /// runs the pipeline (none if it is empty). Failures are recorded as
  /// diagnostics.
  LogicalResult runPipeline();

  /// `runPipeline` with a pipeline that must be there (to reach LLVM).
  LogicalResult lowerToLLVMDialect() {
    if (pipeline.empty()) {
      recordError("no pass pipeline given");
      return failure();
    }
    return runPipeline();
  }

  /// Records an error at the start of the source (for failures that have no
  /// better location: LLVM's own errors).
  void recordError(const llvm::Twine &message) {
    diagnostics.recordError(message);
  }

  /// The recorded diagnostics as a JSON string for the caller to free.
  char *takeDiagnostics() { return diagnostics.take(); }

  /// The host's target machine; position-independent code for objects that
  /// go into shared libraries.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
  createHostTargetMachine(bool positionIndependent) const {
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder)
      return builder.takeError();
    builder->setCodeGenOptLevel(codeGenOptLevel());
    if (positionIndependent)
      builder->setRelocationModel(llvm::Reloc::PIC_);
    return builder->createTargetMachine();
  }

  llvm::CodeGenOptLevel codeGenOptLevel() const {
    switch (optLevel) {
    case 0:
      return llvm::CodeGenOptLevel::None;
    case 1:
      return llvm::CodeGenOptLevel::Less;
    case 2:
      return llvm::CodeGenOptLevel::Default;
    default:
      return llvm::CodeGenOptLevel::Aggressive;
    }
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string signatures;
  llvm::StringRef source;
  std::string sourceName;
  std::string pipeline;
  int optLevel;
  std::vector<std::string> functionNames;

private:
  std::string argumentName(BlockArgument argument) const;
  llvm::json::Object describe(Type type, std::string name) const;
  void recordSignatures();

  rope::capi::DiagnosticRecorder diagnostics;
};

/// The SSA name an argument has in the source ("%q"), read at its location:
/// the parser locates each argument at its name. "" when it has none there.
std::string Compilation::argumentName(BlockArgument argument) const {
  auto loc = dyn_cast<FileLineColLoc>(argument.getLoc());
  if (!loc || loc.getFilename().getValue() != sourceName || !loc.getLine() ||
      !loc.getColumn())
    return "";
  llvm::StringRef rest = source;
  for (unsigned line = 1; line < loc.getLine() && !rest.empty(); ++line)
    rest = rest.split('\n').second;
  rest = rest.split('\n').first;
  if (loc.getColumn() > rest.size() || rest[loc.getColumn() - 1] != '%')
    return "";
  rest = rest.drop_front(loc.getColumn() - 1);
  size_t end = 1;
  while (end < rest.size() &&
         (llvm::isAlnum(rest[end]) || llvm::StringRef("$._-").contains(rest[end])))
    ++end;
  return rest.take_front(end).str();
}

llvm::json::Object Compilation::describe(Type type, std::string name) const {
  llvm::json::Object entry;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  entry["name"] = std::move(name);
  entry["type"] = text;
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !isa<TensorType, BaseMemRefType>(type)) {
    entry["kind"] = "scalar";
    entry["element"] = text;
    return entry;
  }
  entry["kind"] = isa<TensorType>(type) ? "tensor" : "memref";
  std::string element;
  llvm::raw_string_ostream es(element);
  es << shaped.getElementType();
  entry["element"] = element;
  if (shaped.hasRank()) {
    llvm::json::Array shape;
    for (int64_t extent : shaped.getShape())
      shape.push_back(ShapedType::isDynamic(extent) ? llvm::json::Value(nullptr)
                                                    : llvm::json::Value(extent));
    entry["shape"] = std::move(shape);
  }
  return entry;
}

void Compilation::recordSignatures() {
  llvm::json::Array functions;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (func.isDeclaration() || !func.isPublic())
      continue;
    llvm::json::Array inputs, results;
    for (BlockArgument argument : func.getArguments())
      inputs.push_back(describe(argument.getType(), argumentName(argument)));
    for (Type type : func.getResultTypes())
      results.push_back(describe(type, ""));
    llvm::json::Object entry;
    entry["name"] = func.getSymName().str();
    entry["inputs"] = std::move(inputs);
    entry["results"] = std::move(results);
    functions.push_back(std::move(entry));
    functionNames.push_back(func.getSymName().str());
  }
  signatures = toJson(llvm::json::Value(std::move(functions)));
}

LogicalResult Compilation::runPipeline() {
  ParserConfig config(&context);
  module = parseSourceString<ModuleOp>(source, config, sourceName);
  if (!module)
    return failure();
  recordSignatures();
  if (pipeline.empty())
    return success();

  std::string anchored = pipeline;
  if (!llvm::StringRef(anchored).starts_with("builtin.module("))
    anchored = "builtin.module(" + anchored + ")";
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  FailureOr<OpPassManager> parsed = parsePassPipeline(anchored, errorStream);
  if (failed(parsed)) {
    recordError("invalid pass pipeline '" + pipeline + "': " + error);
    return failure();
  }
  PassManager passManager(&context);
  static_cast<OpPassManager &>(passManager) = *parsed;
  return passManager.run(*module);
}

std::string errorText(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::logAllUnhandledErrors(std::move(error), os);
  return llvm::StringRef(text).rtrim().str();
}

/// Adds `_rope_packed_<name>(void **args)` beside each C interface wrapper
/// `_mlir_ciface_<name>` that takes pointers only (memref descriptors): it
/// calls the wrapper with args[0], args[1], .... A caller that cannot pass
/// many arguments (ropeRuntimeCall passes at most kRopeRuntimeMaxCallArgs; a
/// model's graph takes every weight) calls this one-pointer form instead.
void addPackedEntryPoints(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  auto *pointer = llvm::PointerType::getUnqual(context);
  llvm::StringRef prefix = "_mlir_ciface_";
  SmallVector<llvm::Function *> wrappers;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() && function.getName().starts_with(prefix) &&
        function.getReturnType()->isVoidTy() &&
        llvm::all_of(function.args(), [](const llvm::Argument &arg) {
          return arg.getType()->isPointerTy();
        }))
      wrappers.push_back(&function);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                       {pointer}, /*isVarArg=*/false);
  for (llvm::Function *wrapper : wrappers) {
    std::string name =
        ("_rope_packed_" + wrapper->getName().drop_front(prefix.size())).str();
    auto *packed = llvm::Function::Create(
        type, llvm::GlobalValue::ExternalLinkage, name, module);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(context, "entry", packed));
    SmallVector<llvm::Value *> args;
    for (unsigned i = 0, e = wrapper->arg_size(); i < e; ++i)
      args.push_back(builder.CreateLoad(
          pointer, builder.CreateConstGEP1_64(pointer, packed->getArg(0), i)));
    builder.CreateCall(wrapper, args);
    builder.CreateRetVoid();
  }
}

/// On an AVX-512 host, the loops LLVM vectorizes itself (the elementwise ops,
/// the softmax's exp polynomial, the masks) use 512-bit vectors, as the
/// micro-kernels do. x86's tuning prefers 256 bits on such parts, which
/// spares code that uses zmm rarely the clock drop it costs on older ones;
/// the micro-kernels' zmm FMAs pay it anyway.
void preferHostVectorWidth(llvm::Module &module,
                           const llvm::TargetMachine &targetMachine) {
  if (!llvm::is_contained(
          llvm::split(targetMachine.getTargetFeatureString(), ','), "+avx512f"))
    return;
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      function.addFnAttr("prefer-vector-width", "512");
}

/// Whether `module` calls the runtime's entry check `check`: every function
/// --rope-lower-tile-products puts on an engine calls the engine's check,
/// declared once (ropeRequireCpuTiles, ropeRequireCpuDotProducts).
bool callsCheck(ModuleOp module, StringRef check) {
  return SymbolTable::lookupSymbolIn(module, check) != nullptr;
}
bool usesTiles(ModuleOp module) {
  return callsCheck(module, "ropeRequireCpuTiles");
}
bool usesDotProducts(ModuleOp module) {
  return callsCheck(module, "ropeRequireCpuDotProducts");
}

/// Linux hands a process the AMX tile data state only on request (since
/// 5.16); without it the first tile instruction faults. Asked once.
llvm::Error requestTileData() {
  static const int refused = [] {
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0
               ? 0
               : errno;
  }();
  if (!refused)
    return llvm::Error::success();
  return llvm::createStringError(
      "the module uses AMX tiles, and Linux refused this process the tile "
      "data state (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): " +
      std::string(std::strerror(refused)) +
      "); compile with cpu-features=host,-amx-bf16,-amx-fp16");
}

/// A module whose products run on a matrix engine compiles only for a
/// target that has it (LLVM cannot select the engine's intrinsics
/// otherwise): a clear error here.
llvm::Error checkTargetHasEngines(ModuleOp module,
                                  const llvm::TargetMachine &targetMachine) {
  auto targetHas = [&](StringRef feature) {
    return llvm::is_contained(
        llvm::split(targetMachine.getTargetFeatureString(), ','), feature);
  };
  if (usesTiles(module) && !targetHas("+amx-tile"))
    return llvm::createStringError(
        "the module uses AMX tiles (its cpu-features named them), but the "
        "host CPU has none; compile with cpu-features=host");
  if (usesDotProducts(module) && !targetHas("+avx512bf16"))
    return llvm::createStringError(
        "the module uses AVX-512 BF16 dot products (its cpu-features named "
        "avx512bf16), but the host CPU has none; compile with "
        "cpu-features=host");
  return llvm::Error::success();
}

/// A JIT module on a matrix engine runs only where the host has it (and
/// Linux grants the tiles): a clear error here, never an illegal
/// instruction. (An object asks at run time: ropeRequireCpuTiles,
/// ropeRequireCpuDotProducts.)
llvm::Error checkEnginesForHost(ModuleOp module,
                                const llvm::TargetMachine &targetMachine) {
  if (llvm::Error error = checkTargetHasEngines(module, targetMachine))
    return error;
  if (!usesTiles(module))
    return llvm::Error::success();
  return requestTileData();
}

/// What every module gets before LLVM optimizes it for `targetMachine`, in
/// the JIT and in objects alike.
void prepareForHost(llvm::Module &module,
                    const llvm::TargetMachine &targetMachine) {
  addPackedEntryPoints(module);
  preferHostVectorWidth(module, targetMachine);
}

} // namespace

/// What a JIT-compiled module keeps: its code (the engine owns its own LLVM
/// context; the MLIR context was the compilation's and is gone) and the
/// signatures of its functions.
struct RopeJitModule {
  std::string signatures;
  std::unique_ptr<ExecutionEngine> engine;
};

extern "C" RopeJitModule *ropeJitCompile(const char *source, size_t length,
                                         const RopeCompileOptions *options,
                                         char **diagnostics) {
  initializeOnce();
  Compilation compilation(source, length, options);
  auto fail = [&]() -> RopeJitModule * {
    if (diagnostics)
      *diagnostics = compilation.takeDiagnostics();
    return nullptr;
  };
  if (failed(compilation.lowerToLLVMDialect()))
    return fail();

  auto targetMachine = compilation.createHostTargetMachine(false);
  if (!targetMachine) {
    compilation.recordError(errorText(targetMachine.takeError()));
    return fail();
  }
  // The optimisation pipeline clang runs at the same level (vectorisers
  // included), for the host's CPU and its features.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(compilation.optLevel, /*sizeLevel=*/0,
                                targetMachine->get());
  // The options hold a function_ref: the transformer must outlive them.
  const llvm::TargetMachine &host = **targetMachine;
  // Checked before the engine exists: ExecutionEngine::create cannot report
  // an error of the transformer (it cantFail's it, and LLVM then dies
  // selecting the tile intrinsics for a host without them).
  if (llvm::Error error = checkEnginesForHost(*compilation.module, host)) {
    compilation.recordError(errorText(std::move(error)));
    return fail();
  }
  std::function<llvm::Error(llvm::Module *)> transform =
      [&optimize, &host](llvm::Module *module) {
        prepareForHost(*module, host);
        return optimize(module);
      };
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transform;
  engineOptions.jitCodeGenOptLevel = compilation.codeGenOptLevel();
  // Listeners keep a record of every object they are told of: a process
  // that compiles many modules would grow without bound.
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(*compilation.module, engineOptions,
                                        std::move(*targetMachine));
  if (!engine) {
    compilation.recordError(errorText(engine.takeError()));
    return fail();
  }
  // Compile every function now, so that errors (an unresolved symbol) are
  // this call's and the first call of a function is not slower than the rest.
  for (const std::string &name : compilation.functionNames) {
    auto address = (*engine)->lookup("_mlir_ciface_" + name);
    if (!address) {
      compilation.recordError("@" + name +
                              " has no C interface after the pipeline: " +
                              errorText(address.takeError()));
      return fail();
    }
  }
  (*engine)->initialize();
  auto *module = new RopeJitModule();
  module->signatures = std::move(compilation.signatures);
  module->engine = std::move(*engine);
  return module;
}

/// The address of `prefix` + `name` in `module`'s code, or null.
static void *lookupSymbol(const RopeJitModule *module, llvm::StringRef prefix,
                          const char *name) {
  if (!module || !name)
    return nullptr;
  auto address = module->engine->lookup((prefix + name).str());
  if (!address) {
    llvm::consumeError(address.takeError());
    return nullptr;
  }
  return *address;
}

extern "C" void *ropeJitLookupPacked(const RopeJitModule *module,
                                     const char *name) {
  return lookupSymbol(module, "_rope_packed_", name);
}

extern "C" void *ropeJitLookup(const RopeJitModule *module, const char *name) {
  return lookupSymbol(module, "_mlir_ciface_", name);
}

extern "C" const char *ropeJitGetSignatures(const RopeJitModule *module) {
  return module ? module->signatures.c_str() : "[]";
}

extern "C" void ropeJitDestroy(RopeJitModule *module) { delete module; }

extern "C" int ropeCompileToObject(const char *source, size_t length,
                                   const RopeCompileOptions *options,
                                   const char *outputPath, char **signatures,
                                   char **diagnostics) {
  initializeOnce();
  Compilation compilation(source, length, options);
  auto fail = [&] {
    if (diagnostics)
      *diagnostics = compilation.takeDiagnostics();
    return 1;
  };
  if (!outputPath) {
    compilation.recordError("no output path given");
    return fail();
  }
  if (failed(compilation.lowerToLLVMDialect()))
    return fail();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*compilation.module, llvmContext);
  if (!llvmModule) {
    compilation.recordError("could not translate the module to LLVM IR");
    return fail();
  }
  auto targetMachine = compilation.createHostTargetMachine(true);
  if (!targetMachine) {
    compilation.recordError(errorText(targetMachine.takeError()));
    return fail();
  }
  ExecutionEngine::setupTargetTripleAndDataLayout(llvmModule.get(),
                                                  targetMachine->get());
  if (llvm::Error error =
          checkTargetHasEngines(*compilation.module, **targetMachine)) {
    compilation.recordError(errorText(std::move(error)));
    return fail();
  }
  prepareForHost(*llvmModule, **targetMachine);
  if (llvm::Error error = makeOptimizingTransformer(
          compilation.optLevel, /*sizeLevel=*/0,
          targetMachine->get())(llvmModule.get())) {
    compilation.recordError(errorText(std::move(error)));
    return fail();
  }

  std::error_code errorCode;
  llvm::raw_fd_ostream output(outputPath, errorCode);
  if (errorCode) {
    compilation.recordError(llvm::Twine("cannot write '") + outputPath +
                            "': " + errorCode.message());
    return fail();
  }
  llvm::legacy::PassManager codegen;
  if ((*targetMachine)
          ->addPassesToEmitFile(codegen, output, nullptr,
                                llvm::CodeGenFileType::ObjectFile)) {
    compilation.recordError("the host target cannot emit object files");
    return fail();
  }
  codegen.run(*llvmModule);
  output.close();
  if (output.has_error()) {
    compilation.recordError(llvm::Twine("cannot write '") + outputPath +
                            "': " + output.error().message());
    output.clear_error();
    return fail();
  }
  if (signatures)
    *signatures = copyString(compilation.signatures);
  return 0;
}

extern "C" int ropeRunPipeline(const char *source, size_t length,
                               const RopeCompileOptions *options, char **output,
                               char **diagnostics) {
  initializeOnce();
  Compilation compilation(source, length, options);
  if (failed(compilation.runPipeline())) {
    if (diagnostics)
      *diagnostics = compilation.takeDiagnostics();
    return 1;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  compilation.module->print(os);
  if (output)
    *output = copyString(text);
  // What the passes remarked or warned (--rope-raise=report=true's near
  // misses), for a caller that reports them.
  if (diagnostics)
    *diagnostics = compilation.takeDiagnostics();
  return 0;
}

extern "C" void ropeFreeString(char *string) { std::free(string); }

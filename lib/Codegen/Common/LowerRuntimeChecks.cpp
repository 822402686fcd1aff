//===- LowerRuntimeChecks.cpp - failed checks report to the host ----------===//

#include "rope/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPELOWERRUNTIMECHECKS
#include "rope/Codegen/Common/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

/// The rope runtime's entry point for failed checks (RuntimeErrors.h).
static constexpr StringLiteral kReportFunction = "ropeRuntimeError";

namespace {
struct RopeLowerRuntimeChecksPass
    : public rope::impl::RopeLowerRuntimeChecksBase<
          RopeLowerRuntimeChecksPass> {
  void runOnOperation() override;

private:
  /// `void ropeRuntimeError(ptr, i64, ptr)`, declared once, noreturn.
  LLVM::LLVMFuncOp getOrDeclareReport(ModuleOp module);
  /// A private constant global holding `message` NUL-terminated; equal
  /// messages share one.
  LLVM::GlobalOp getOrCreateMessage(ModuleOp module, StringRef message);
  /// `if (!condition) ropeRuntimeError(message, values)` in place of `op`.
  void lower(Operation *op, Value condition, StringRef message,
             ValueRange values);

  llvm::StringMap<LLVM::GlobalOp> messages;
};
} // namespace

LLVM::LLVMFuncOp RopeLowerRuntimeChecksPass::getOrDeclareReport(ModuleOp module) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(kReportFunction))
    return fn;
  MLIRContext *ctx = module.getContext();
  auto builder = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(ctx), {ptr, IntegerType::get(ctx, 64), ptr});
  auto fn = LLVM::LLVMFuncOp::create(builder, module.getLoc(), kReportFunction,
                                     type);
  fn.setPassthroughAttr(builder.getArrayAttr({builder.getStringAttr("noreturn")}));
  return fn;
}

LLVM::GlobalOp RopeLowerRuntimeChecksPass::getOrCreateMessage(ModuleOp module,
                                                              StringRef message) {
  auto it = messages.find(message);
  if (it != messages.end())
    return it->second;
  MLIRContext *ctx = module.getContext();
  auto builder = OpBuilder::atBlockEnd(module.getBody());
  std::string bytes = message.str();
  bytes.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), bytes.size());
  std::string name =
      ("__rope_check_message_" + Twine(messages.size())).str();
  while (module.lookupSymbol(name))
    name += "_";
  auto global = LLVM::GlobalOp::create(
      builder, module.getLoc(), type, /*isConstant=*/true,
      LLVM::Linkage::Private, name, builder.getStringAttr(bytes));
  messages[message] = global;
  return global;
}

void RopeLowerRuntimeChecksPass::lower(Operation *op, Value condition,
                                       StringRef message, ValueRange values) {
  auto module = op->getParentOfType<ModuleOp>();
  LLVM::LLVMFuncOp report = getOrDeclareReport(module);
  LLVM::GlobalOp text = getOrCreateMessage(module, message);

  OpBuilder b(op);
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  Type i64 = b.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  Value failed = arith::XOrIOp::create(
      b, loc, condition, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  auto ifOp = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value address = LLVM::AddressOfOp::create(b, loc, text);
  Value count = LLVM::ConstantOp::create(b, loc, i64,
                                         b.getI64IntegerAttr(values.size()));
  Value array;
  if (values.empty()) {
    array = LLVM::ZeroOp::create(b, loc, ptr);
  } else {
    array = LLVM::AllocaOp::create(b, loc, ptr, i64, count);
    for (auto [i, value] : llvm::enumerate(values)) {
      Value wide =
          value.getType().isIndex()
              ? arith::IndexCastOp::create(b, loc, i64, value).getResult()
          : value.getType().getIntOrFloatBitWidth() < 64
              ? arith::ExtSIOp::create(b, loc, i64, value).getResult()
          : value.getType().getIntOrFloatBitWidth() > 64
              ? arith::TruncIOp::create(b, loc, i64, value).getResult()
              : value;
      Value slot = LLVM::GEPOp::create(b, loc, ptr, i64, array,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      LLVM::StoreOp::create(b, loc, wide, slot);
    }
  }
  LLVM::CallOp::create(b, loc, report, ValueRange{address, count, array});
  op->erase();
}

void RopeLowerRuntimeChecksPass::runOnOperation() {
  ModuleOp module = getOperation();
  messages.clear();
  SmallVector<Operation *> asserts;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::GPUModuleOp>(op))
      return WalkResult::skip();
    if (isa<rope::AssertOp, cf::AssertOp>(op))
      asserts.push_back(op);
    return WalkResult::advance();
  });
  for (Operation *op : asserts) {
    if (auto check = dyn_cast<rope::AssertOp>(op))
      lower(op, check.getCondition(), check.getMessage(), check.getValues());
    else if (auto check = dyn_cast<cf::AssertOp>(op))
      lower(op, check.getArg(), check.getMsg(), {});
  }
}

//===- TensorCoreUtils.cpp - pieces the tensor-core kernels share ---------===//

#include "common/TensorCoreUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::rope::nvidia;

SmallVector<Value> mlir::rope::nvidia::buildMmaSync(OpBuilder &b, Location loc,
                                                    Type element,
                                                    ArrayRef<Value> a, Value b0,
                                                    Value b1, ArrayRef<Value> c) {
  bool bf16 = element.isBF16();
  auto reg = [&](Value pair) -> Value {
    if (!bf16)
      return pair;
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
  };
  SmallVector<Value> aRegs = llvm::map_to_vector(a, reg);
  SmallVector<Value> bRegs{reg(b0), reg(b1)};
  Type f32 = b.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  NVVM::MMATypes type = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, aRegs, bRegs, c, ArrayRef<int64_t>{16, 8, 16},
      std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op.getRes(),
                                             ArrayRef<int64_t>{i}));
  return d;
}

static Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value ChunkSwizzle::column(OpBuilder &b, Location loc, Value row,
                           Value chunk) const {
  Value phase = arith::RemUIOp::create(b, loc, row, indexConst(b, loc, phases));
  Value x = arith::XOrIOp::create(b, loc, chunk, phase);
  return arith::MulIOp::create(b, loc, x, indexConst(b, loc, chunkElements));
}

Value ChunkSwizzle::lanePart(OpBuilder &b, Location loc, Value row,
                             Value chunk) const {
  Value phase = arith::RemUIOp::create(b, loc, row, indexConst(b, loc, phases));
  return arith::XOrIOp::create(b, loc, chunk, phase);
}

Value ChunkSwizzle::column(OpBuilder &b, Location loc, Value lanePart,
                           int64_t chunk) const {
  Value low = arith::XOrIOp::create(b, loc, lanePart,
                                    indexConst(b, loc, chunk & (phases - 1)));
  Value whole = arith::AddIOp::create(b, loc, low,
                                      indexConst(b, loc, chunk & ~(phases - 1)));
  return arith::MulIOp::create(b, loc, whole, indexConst(b, loc, chunkElements));
}

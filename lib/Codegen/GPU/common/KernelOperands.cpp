//===- KernelOperands.cpp - tensors in and out of hand-built kernels ------===//

#include "common/KernelOperands.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

Value mlir::rope::nvidia::readOnlyBuffer(OpBuilder &b, Location loc, Value tensor) {
  if (!tensor)
    return Value();
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

Value mlir::rope::nvidia::allocLike(OpBuilder &b, Location loc, Value tensor,
                                    Value leading) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<Value> dynamic;
  if (leading) {
    shape.insert(shape.begin(), ShapedType::kDynamic);
    dynamic.push_back(leading);
  }
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(tensor::DimOp::create(b, loc, tensor, i));
  return memref::AllocOp::create(
      b, loc, MemRefType::get(shape, type.getElementType()), dynamic);
}

bool mlir::rope::nvidia::isZeroFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

//===- RopeDialect.td - rope dialect definition ------------*- tablegen -*-===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEDIALECT_TD
#define ROPE_DIALECT_ROPE_IR_ROPEDIALECT_TD

include "mlir/IR/OpBase.td"

def Rope_Dialect : Dialect {
  let name = "rope";
  let cppNamespace = "::mlir::rope";
  let summary = "Rotary position embeddings and attention as first-class ops";
  let description = [{
    The `rope` dialect models rotary position embeddings (RoPE, RoFormer) and
    the attention computations they feed. A single attribute,
    `#rope.spec`, describes a rotary embedding completely: base, rotary dims
    and offset (partial rotary), pair layout, frequency scaling for long
    context, attention factor and direction. Ops take that attribute plus
    integer positions, so that the compiler sees the rotation as a rotation
    and can fold it into the Q·Kᵀ product instead of materialising rotated
    tensors.

    Semantics: `inv_freq_i = base^(-2i/r)`
    (before scaling), `φ = p · inv_freq_i`, and each pair `(a, b)` becomes
    `(m·(a cos φ − b sin φ), m·(b cos φ + a sin φ))`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let extraClassDeclaration = [{
    /// Registers the attributes; lives beside their storage classes.
    void registerAttributes();
  }];
}

// Every static shape an op names has a byte size that fits in int64_t: a
// buffer of it can be addressed (rope/Dialect/Rope/IR/RopeTraits.h).
def Rope_StaticSizesFit : NativeOpTrait<"StaticSizesFit"> {
  let cppNamespace = "::mlir::rope";
}

class Rope_Op<string mnemonic, list<Trait> traits = []>
    : Op<Rope_Dialect, mnemonic, !listconcat([Rope_StaticSizesFit], traits)>;

#endif // ROPE_DIALECT_ROPE_IR_ROPEDIALECT_TD

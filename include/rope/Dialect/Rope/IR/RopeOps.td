//===- RopeOps.td - rope operations ------------------------*- tablegen -*-===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEOPS_TD
#define ROPE_DIALECT_ROPE_IR_ROPEOPS_TD

include "rope/Dialect/Rope/IR/RopeDialect.td"
include "rope/Dialect/Rope/IR/RopeAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

// Data is stored as f32, f16 or bf16; all math is f32.
def Rope_DataTensor : RankedTensorOf<[F32, F16, BF16]>;
// Positions are integers (token indices), never floats.
def Rope_PositionTensor : RankedTensorOf<[I16, I32, I64]>;
def Rope_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16]>;

//===----------------------------------------------------------------------===//
// rope.rotate
//===----------------------------------------------------------------------===//

def Rope_RotateOp : Rope_Op<"rotate", [
    Pure, AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "Applies a rotary position embedding";
  let description = [{
    Rotates each pair of the last (head) dim of `input` by `p · inv_freq_i`,
    where `p` is the position of the element along `seq_dim` (default −2, the
    dim just before the head dim). `positions` is `[S]` (shared by every other
    dim) or `[B, S]` (per-sequence positions; `B` is dim 0 of `input`, e.g.
    for ragged batches and KV-cache decode).

    Example, Llama-style `[B, H, S, D]`:
    ```mlir
    %q_rot = rope.rotate %q, %pos rotary(#rope.spec<base = 500000.0>)
        : tensor<1x32x?x128xf32>, tensor<?xi64>
    ```
    `[B, S, H, D]` uses `seq_dim = 1`.
  }];
  let arguments = (ins Rope_DataTensor:$input,
                       Rope_PositionTensor:$positions,
                       Rope_RotarySpecAttr:$spec,
                       DefaultValuedAttr<I64Attr, "-2">:$seq_dim);
  let results = (outs Rope_DataTensor:$result);
  let assemblyFormat = [{
    $input `,` $positions `rotary` `(` qualified($spec) `)` (`seq_dim` `=` $seq_dim^)?
    attr-dict `:` type($input) `,` type($positions)
  }];
  let extraClassDeclaration = [{
    /// seq_dim as a non-negative index into the input's dims.
    int64_t getNormalizedSeqDim() {
      int64_t d = getSeqDim();
      return d < 0 ? d + getInput().getType().getRank() : d;
    }
    int64_t getHeadDim() { return getInput().getType().getShape().back(); }
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// rope.table
//===----------------------------------------------------------------------===//

def Rope_TableOp : Rope_Op<"table", [
    Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "Materialises the cos/sin coefficients of a rotation";
  let description = [{
    For positions of shape `P` returns `cos` and `sin` of shape `P × [r/2]`
    (f32): `cos[..., i] = m·cos(p·inv_freq_i)`, `sin[..., i] = ±m·sin(...)`,
    with the attention factor `m` folded in and the sign of `sin` negated for
    an inverse spec. A rotation is then a pure multiply-add with these tables,
    so two rotations with the same spec and positions (Q and K) share one.
    The phase is formed in f64 so the f32 tables stay within a few ulps for
    positions up to 2^20.
  }];
  let arguments = (ins Rope_PositionTensor:$positions,
                       Rope_RotarySpecAttr:$spec,
                       ConfinedAttr<I64Attr, [IntPositive]>:$head_dim);
  let results = (outs RankedTensorOf<[F32]>:$cos, RankedTensorOf<[F32]>:$sin);
  let assemblyFormat = [{
    $positions `rotary` `(` qualified($spec) `)` `head_dim` `=` $head_dim attr-dict
    `:` type($positions)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// rope.attention
//===----------------------------------------------------------------------===//

def Rope_AttentionOp : Rope_Op<"attention", [
    Pure, AttrSizedOperandSegments, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "Scaled dot-product attention, optionally with RoPE inside";
  let description = [{
    `softmax(scale · Q·Kᵀ + mask) · V` over `[B, H, S, D]` tensors:
    `query [B, Hq, Sq, D]`, `key [B, Hkv, Sk, D]`, `value [B, Hkv, Sk, Dv]`,
    result `[B, Hq, Sq, Dv]`. `Hq` must be a multiple of `Hkv` (GQA/MQA): query
    head `h` reads kv head `h / (Hq / Hkv)`.

    * `scale` defaults to `1/sqrt(D)`.
    * `mask` broadcasts (trailing-aligned, rank 2 to 4) to `[B, Hq, Sq, Sk]`:
      `i1` means true = may attend, a float mask is added to the logits.
    * `positions(%qp, %kp)` gives absolute query and key positions (`[S]` or
      `[B, S]`); by default keys are at `0..Sk-1` and queries at
      `Sk-Sq..Sk-1` (the decode convention).
    * `causal`: query i sees key j iff `p_k(j) <= p_q(i)`.
    * `rotary(#rope.spec<...>)`: Q and K are rotated at their positions inside
      the op, so no rotated tensor need exist.

    A row whose keys are all masked out yields zeros.
  }];
  let arguments = (ins Rope_DataTensor:$query,
                       Rope_DataTensor:$key,
                       Rope_DataTensor:$value,
                       Optional<Rope_MaskTensor>:$mask,
                       Optional<Rope_PositionTensor>:$query_positions,
                       Optional<Rope_PositionTensor>:$key_positions,
                       OptionalAttr<F64Attr>:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<Rope_RotarySpecAttr>:$rotary);
  let results = (outs Rope_DataTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`positions` `(` $query_positions^ `,` $key_positions `:`
       type($query_positions) `,` type($key_positions) `)`)?
    (`rotary` `(` qualified($rotary)^ `)`)?
    (`causal` $causal^)?
    (`scale` `=` $scale^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
  }];
  let extraClassDeclaration = [{
    /// The scale actually applied: the attribute, else 1/sqrt(D).
    double getEffectiveScale();
    int64_t getHeadDim() { return getQuery().getType().getShape().back(); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rope.linear_attention
//===----------------------------------------------------------------------===//

def Rope_LinearAttentionOp : Rope_Op<"linear_attention", [
    Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "Linear attention with RoPE (RoFormer eq. 19)";
  let description = [{
    With `φ(x) = elu(x) + 1` and `R_p` the rotation at position `p`:
    `out_m = Σ_n (R_m φ(q_m))ᵀ(R_n φ(k_n)) v_n / Σ_n φ(q_m)ᵀ φ(k_n)`,
    the denominator unrotated. `causal` sums over `n <= m` only. Q and K are
    `[B, H, S, D]`, V is `[B, H, S, Dv]`; `positions` (`[S]` or `[B, S]`)
    default to `0..S-1`; without `rotary` no rotation is applied.
  }];
  let arguments = (ins Rope_DataTensor:$query,
                       Rope_DataTensor:$key,
                       Rope_DataTensor:$value,
                       Optional<Rope_PositionTensor>:$positions,
                       OptionalAttr<Rope_RotarySpecAttr>:$rotary,
                       UnitAttr:$causal);
  let results = (outs Rope_DataTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`rotary` `(` qualified($rotary)^ `)`)?
    (`causal` $causal^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rope.sinusoidal
//===----------------------------------------------------------------------===//

def Rope_SinusoidalOp : Rope_Op<"sinusoidal", [
    Pure, DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "Absolute sinusoidal position encoding (Vaswani et al.)";
  let description = [{
    For positions of shape `P` produces `P × [D]`:
    `PE(p, 2i) = sin(p / base^(2i/D))`, `PE(p, 2i+1) = cos(p / base^(2i/D))`.
  }];
  let arguments = (ins Rope_PositionTensor:$positions,
                       DefaultValuedAttr<F64Attr, "10000.0">:$base);
  let results = (outs Rope_DataTensor:$result);
  let assemblyFormat = [{
    $positions (`base` `=` $base^)? attr-dict `:` type($positions) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // ROPE_DIALECT_ROPE_IR_ROPEOPS_TD

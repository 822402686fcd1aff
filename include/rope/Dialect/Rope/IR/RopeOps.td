//===- RopeOps.td - rope operations ------------------------*- tablegen -*-===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEOPS_TD
#define ROPE_DIALECT_ROPE_IR_ROPEOPS_TD

include "rope/Dialect/Rope/IR/RopeDialect.td"
include "rope/Dialect/Rope/IR/RopeAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/TilingInterface.td"
include "mlir/Dialect/Linalg/IR/LinalgInterfaces.td"
include "mlir/Interfaces/RuntimeVerifiableOpInterface.td"

// Data is stored as f32, f16 or bf16; all math is f32.
def Rope_DataTensor : RankedTensorOf<[F32, F16, BF16]>;
// Positions are integers (token indices), never floats.
def Rope_PositionTensor : RankedTensorOf<[I16, I32, I64]>;
def Rope_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16]>;
// Per-head logits, slopes and bias tables.
def Rope_HeadTensor : RankedTensorOf<[F32, F16, BF16]>;
// cos/sin tables and the online-softmax state are f32.
def Rope_F32Tensor : RankedTensorOf<[F32]>;

//===----------------------------------------------------------------------===//
// rope.rotate
//===----------------------------------------------------------------------===//

def Rope_RotateOp : Rope_Op<"rotate", [
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>,
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
    /// The relations between operand extents this op requires (checked by
    /// the verifier when static, at run time otherwise).
    ::llvm::SmallVector<::mlir::rope::ExtentRelation> getExtentRelations();
    /// seq_dim as a non-negative index into the input's dims.
    int64_t getNormalizedSeqDim() {
      int64_t d = getSeqDim();
      return d < 0 ? d + getInput().getType().getRank() : d;
    }
    int64_t getHeadDim() { return getInput().getType().getShape().back(); }
    /// The dims the spec rotates in this op's head.
    ::mlir::rope::RotaryRange getRotaryRange() {
      return getSpec().getRange(getHeadDim());
    }
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// rope.rotate_with_tables
//===----------------------------------------------------------------------===//

def Rope_RotateWithTablesOp : Rope_Op<"rotate_with_tables", [
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>,
    Pure, AllTypesMatch<["input", "result"]>, AllTypesMatch<["cos", "sin"]>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "Applies a rotary position embedding given as cos/sin tables";
  let description = [{
    The rotation of `rope.rotate` with its coefficients given as tensors
    rather than computed from a spec, as frontends export them (the cos/sin
    caches of a model, sliced to the sequence and gathered by position ids).
    The rotated dims are `[offset, offset + r)` of the last (head) dim, `r` =
    `dims` (default: the whole head), paired as `layout` says (`half`:
    `(i, i + r/2)`, `interleaved`: `(2i, 2i + 1)`); the other dims pass
    through. The tables have width `w`:

    * `w = r` (one coefficient per element, as frontends compute them, e.g.
      Hugging Face's `cat(freqs, freqs)`): element `j` of the range, with
      partner `j'`, becomes `x_j·cos_j − x_j'·sin_j` for the first member of
      its pair and `x_j·cos_j + x_j'·sin_j` for the second. This is
      `x·cos + rotate_half(x)·sin` (or `rotate_every_two` for `interleaved`)
      element for element, whatever the tables hold.
    * `w = r/2` (one coefficient per pair, as `rope.table` makes them): pair
      `i` rotates by `cos_i`, `sin_i`.

    The tables' other dims say where each coefficient applies:
    * as many dims as `input` (`[1, 1, S, w]`, `[B, 1, S, w]`): each is the
      input's extent or a static 1 (broadcast);
    * `[S, w]`: indexed by the sequence dim `seq_dim` (default −2);
    * `[B, S, w]`: indexed by dim 0 and the sequence dim.
    A static 1 broadcasts in the last two forms too. Tables may be f32, f16
    or bf16; the math is f32.

    With tables from `rope.table` this is `rope.rotate` with the table's spec
    (the canonical form: the tables need not exist then).
    ```mlir
    %q_rot = rope.rotate_with_tables %q, %cos, %sin
        : tensor<1x32x?x128xf32>, tensor<1x1x?x128xf32>
    ```
  }];
  let arguments = (ins Rope_DataTensor:$input,
                       Rope_DataTensor:$cos,
                       Rope_DataTensor:$sin,
                       DefaultValuedAttr<Rope_RotaryLayoutAttr,
                           "::mlir::rope::RotaryLayout::half">:$layout,
                       DefaultValuedAttr<I64Attr, "0">:$dims,
                       DefaultValuedAttr<I64Attr, "0">:$offset,
                       DefaultValuedAttr<I64Attr, "-2">:$seq_dim);
  let results = (outs Rope_DataTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin (`layout` `` $layout^)? (`dims` `=` $dims^)?
    (`offset` `=` $offset^)? (`seq_dim` `=` $seq_dim^)?
    attr-dict `:` type($input) `,` type($cos)
  }];
  let extraClassDeclaration = [{
    /// The relations between operand extents this op requires (checked by
    /// the verifier when static, at run time otherwise).
    ::llvm::SmallVector<::mlir::rope::ExtentRelation> getExtentRelations();
    int64_t getNormalizedSeqDim() {
      int64_t d = getSeqDim();
      return d < 0 ? d + getInput().getType().getRank() : d;
    }
    int64_t getHeadDim() { return getInput().getType().getShape().back(); }
    /// The rotary dims `r`, and the first rotated dim, signed.
    int64_t getRotaryDims() {
      int64_t dims = getDimsAttr().getInt();
      return dims == 0 ? getHeadDim() : dims;
    }
    int64_t getRotaryOffset() { return getOffsetAttr().getInt(); }
    ::mlir::rope::RotaryRange getRotaryRange() {
      return {getRotaryDims(), getRotaryOffset(), getLayout()};
    }
    /// Whether the tables hold one coefficient per element (width r) rather
    /// than one per pair (width r/2).
    bool hasElementTables() {
      return getCos().getType().getShape().back() == getRotaryDims();
    }
    /// The input dim each table dim but the last follows.
    SmallVector<int64_t> getTableRowDims() {
      return ::mlir::rope::getTableRowDims(getInput().getType().getRank(),
                                           getCos().getType().getRank(),
                                           getNormalizedSeqDim());
    }
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// rope.table
//===----------------------------------------------------------------------===//

def Rope_TableOp : Rope_Op<"table", [
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>,
    Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getLoopIteratorTypes", "getIterationDomain", "getTiledImplementation",
        "getResultTilePosition", "generateResultTileValue"]>,
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

    Tiling (TilingInterface) slices the positions: a tile of the table is
    the table of a slice of the positions, over every pair of the head.
    Where the frequencies depend on the largest position (dynamic NTK,
    LongRoPE's short/long factors) a tile would see only its own positions:
    such a table does not tile.
  }];
  let arguments = (ins Rope_PositionTensor:$positions,
                       Rope_RotarySpecAttr:$spec,
                       ConfinedAttr<I64Attr, [IntPositive]>:$head_dim);
  let results = (outs RankedTensorOf<[F32]>:$cos, RankedTensorOf<[F32]>:$sin);
  let assemblyFormat = [{
    $positions `rotary` `(` qualified($spec) `)` `head_dim` `=` $head_dim attr-dict
    `:` type($positions)
  }];
  let extraClassDeclaration = [{
    /// The relations between operand extents this op requires (checked by
    /// the verifier when static, at run time otherwise).
    ::llvm::SmallVector<::mlir::rope::ExtentRelation> getExtentRelations();
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// rope.attention
//===----------------------------------------------------------------------===//

def Rope_AttentionOp : Rope_Op<"attention", [
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>,
    Pure, AttrSizedOperandSegments, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "Scaled dot-product attention, optionally with RoPE inside";
  let description = [{
    `softmax(scale · Q·Kᵀ + mask) · V` over `[B, H, S, D]` tensors:
    `query [B, Hq, Sq, D]`, `key [B, Hkv, Sk, D]`, `value [B, Hkv, Sk, Dv]`,
    result `[B, Hq, Sq, Dv]`. `Hq` must be a multiple of `Hkv` (GQA/MQA): query
    head `h` reads kv head `h / (Hq / Hkv)`.

    * `scale` defaults to `1/sqrt(D)` (1 for an empty head, D = 0, whose
      logits are all 0).
    * `mask` broadcasts (trailing-aligned, rank 2 to 4) to `[B, Hq, Sq, Sk]`
      where its extent is a static 1 (a dynamic extent must be the full one):
      `i1` means true = may attend, a float mask is added to the logits.
    * `positions(%qp, %kp)` gives absolute query and key positions (`[S]` or
      `[B, S]`); by default keys are at `0..Sk-1` and queries at
      `Sk-Sq..Sk-1` (the decode convention).
    * `causal`: query i sees key j iff `p_k(j) <= p_q(i)`.
    * `rotary(#rope.spec<...>)`: Q and K are rotated at their positions inside
      the op, so no rotated tensor need exist.
    * `rotary_tables(%q_cos, %q_sin, %k_cos, %k_sin)`: Q and K are rotated
      inside the op by given cos/sin tables, as `rope.rotate_with_tables`
      rotates them (along the sequence dim 2), with `rotary_layout`,
      `rotary_dims` and `rotary_offset` in the roles of its `layout`, `dims`
      and `offset`. The op holds them as its `rotary`, a `#rope.pairs`, so
      that one attribute (`RotationAttrInterface`) describes the rotated
      dims whether a spec or tables rotate. Tables are `[S, w]`, `[B, S, w]` or `[B, 1, S, w]` (a
      static 1 batch broadcasts; the sequence extent is the operand's), `w`
      is `r` (per element) or `r/2` (per pair). This is what
      `--rope-fold-rotation-into-qk` makes of a frontend's rotations.
      Exclusive with `rotary`; the positions then only serve the masks.
    * `window = W` (with `causal`): sliding window, query at p sees keys with
      `p − W < p_k <= p` (Mistral, Gemma 2/3).
    * `softcap = c`: logits ← `c·tanh(logits / c)` after the scale and before
      any mask or bias (Gemma 2).
    * `sinks(%s : tensor<Hq x f>)`: one logit per query head that joins the
      softmax denominator and contributes no value (gpt-oss).
    * `alibi(%slopes : tensor<Hq x f>)`: ALiBi, logits += `−slope_h·|p_q − p_k|`
      (as FlashAttention defines it; under `causal` this equals BLOOM's and
      llama.cpp's `slope_h·p_k` up to a per-row constant, which the softmax
      ignores).
    * `relative_bias(%t : tensor<NB x Hq x f>) buckets(#rope.buckets<...>)`: T5's
      learned bias, logits += `t[bucket(p_k − p_q), h]` with T5's bucketing.

    Logits are `scale·q·k`, then capped, then the additive terms (float mask,
    ALiBi, T5 bias) are added, then keys that are not visible (i1 mask false,
    causal, window) are dropped. A row whose keys are all dropped yields
    zeros (with sinks too).

    Shape relations (positions against the sequence and batch, keys against
    values, mask, sinks, slopes and tables against what they cover) are
    checked by the verifier where extents are static; where one is dynamic,
    `--rope-insert-runtime-checks` (run by both lowering pipelines) checks it
    once per call before the op runs, with the same message. Positions may be
    any integers: distances that wrap (positions more than 2^63 − 1 apart)
    are defined (two's complement for ALiBi and windows, the last bucket for
    T5), and the rotation phase is reduced in f64 (accurate to a few ulps for
    |p| up to 2^20, bounded and norm-preserving beyond).
  }];
  let arguments = (ins Rope_DataTensor:$query,
                       Rope_DataTensor:$key,
                       Rope_DataTensor:$value,
                       Optional<Rope_MaskTensor>:$mask,
                       Optional<Rope_PositionTensor>:$query_positions,
                       Optional<Rope_PositionTensor>:$key_positions,
                       Optional<Rope_HeadTensor>:$sinks,
                       Optional<Rope_HeadTensor>:$alibi_slopes,
                       Optional<Rope_HeadTensor>:$relative_bias,
                       Optional<Rope_DataTensor>:$query_cos,
                       Optional<Rope_DataTensor>:$query_sin,
                       Optional<Rope_DataTensor>:$key_cos,
                       Optional<Rope_DataTensor>:$key_sin,
                       OptionalAttr<F64Attr>:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<Rope_RotationAttrInterface>:$rotary,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F64Attr>:$softcap,
                       OptionalAttr<Rope_RelativeBucketsAttr>:$relative_buckets);
  let results = (outs Rope_DataTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`positions` `(` $query_positions^ `,` $key_positions `:`
       type($query_positions) `,` type($key_positions) `)`)?
    (custom<Rotation>($rotary, $query_cos, $query_sin, $key_cos, $key_sin,
       type($query_cos), type($query_sin), type($key_cos), type($key_sin))^)?
    (`causal` $causal^)?
    (`window` `=` $window^)?
    (`softcap` `=` $softcap^)?
    (`scale` `=` $scale^)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`relative_bias` `(` $relative_bias^ `:` type($relative_bias) `)`)?
    (`buckets` `(` qualified($relative_buckets)^ `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
  }];
  let extraClassDeclaration = [{
    /// The relations between operand extents this op requires (checked by
    /// the verifier when static, at run time otherwise).
    ::llvm::SmallVector<::mlir::rope::ExtentRelation> getExtentRelations();
    /// The scale actually applied: the attribute, else 1/sqrt(D) (1 when
    /// D = 0).
    double getEffectiveScale();
    int64_t getHeadDim() { return getQuery().getType().getShape().back(); }
    /// True when a rule reads the positions of queries and keys.
    bool needsPositions() {
      return getCausal() || getRotary() || getWindow() || getAlibiSlopes() ||
             getRelativeBias();
    }
    /// True when Q and K are rotated inside, by a spec or by tables.
    bool rotatesInside() { return static_cast<bool>(getRotaryAttr()); }
    /// The rotation's spec when it has one (not when tables rotate).
    ::mlir::rope::RotarySpecAttr getRotarySpec() {
      return ::llvm::dyn_cast_if_present<::mlir::rope::RotarySpecAttr>(
          getRotaryAttr());
    }
    /// The dims Q and K rotate, with a spec or tables; none without.
    std::optional<::mlir::rope::RotaryRange> getRotaryRange() {
      if (auto rotary = getRotaryAttr())
        return rotary.getRange(getHeadDim());
      return std::nullopt;
    }
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$resultType,
                   "const ::mlir::rope::AttentionFields &":$fields)>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rope.online_attention
//===----------------------------------------------------------------------===//

def Rope_OnlineAttentionOp : Rope_Op<"online_attention", [
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>,
    Pure, AttrSizedOperandSegments, DestinationStyleOpInterface,
    AllTypesMatch<["outputs", "results"]>,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getLoopIteratorTypes", "getIterationDomain", "getTiledImplementation",
        "getResultTilePosition", "generateResultTileValue"]>,
    DeclareOpInterfaceMethods<PartialReductionOpInterface, [
        "generateInitialTensorForPartialReduction", "tileToPartialReduction",
        "mergeReductions", "getPartialResultTilePosition"]>,
    DeclareOpInterfaceMethods<AggregatedOpInterface, ["decomposeOperation"]>]> {
  let summary = "One online-softmax pass of attention over a range of keys";
  let description = [{
    The destination-style core of `rope.attention`, in the form that tiles.
    For every query row it folds its keys into the running state carried by
    the outs: the accumulator `acc` (Σ p·v), the running max `m` and the
    running sum `l` (Σ p), with `p = exp(s − m)`:
    `m' = max(m, max_j s_j)`, `l' = exp(m − m')·l + Σ_j exp(s_j − m')`,
    `acc' = exp(m − m')·acc + Σ_j exp(s_j − m')·v_j`. Keys that are not
    visible add nothing; while a row has seen no visible key its state stays
    `(0, −inf, 0)`. `rope.attention` is this op from the state
    `(0, −inf, 0)` (with sinks: `(0, sink, 1)`) followed by `acc / l`.

    Shapes, with query heads split by their kv head (GQA):
    `query [B, Hkv, G, Sq, D]`, `key [B, Hkv, Sk, D]`, `value [B, Hkv, Sk, Dv]`,
    `acc [B, Hkv, G, Sq, Dv]`, `m`, `l` `[B, Hkv, G, Sq]` (f32). The mask is
    rank 5 over `[B, Hkv, G, Sq, Sk]`, a static 1 broadcasting. Positions are
    `[S]` or `[B, S]`; `tables` are the cos/sin of Q and K, one row per token
    (`[S, w]` or `[B, S, w]`, f32, `w` = `r/2` per pair as `rope.table` makes
    them or `r` per element as `rope.rotate_with_tables` takes them), and
    `rotary`, a `#rope.pairs`, says which dims they rotate and how they pair
    (the tables carry the frequencies) (`key_tables` alone: the query is already rotated, and
    may then be f32 whatever K and V hold); `alibi` is `[Hkv, G]`, `relative_bias` `[NB, Hkv, G]`.
    The logit rules are those of `rope.attention`; `scale` is explicit.

    Iteration domain `(b, kv head, group, query, key, value dim)`; the key
    dim is the reduction. Tiling slices every operand consistently (Q/K/V,
    the mask, both positions, the four tables, the bias operands); tiles along
    the keys are reductions into the same state, and `PartialReductionOpInterface`
    splits the keys into independent partial states merged exactly
    (split-K). The head dim `D` is not part of the domain: the softmax is not
    linear in the Q·K reduction, and a rotation pair spans the head.
    `decomposeOperation` is the one online-softmax step, with Q and K rotated
    as they are loaded.
  }];
  let arguments = (ins Rope_DataTensor:$query,
                       Rope_DataTensor:$key,
                       Rope_DataTensor:$value,
                       Optional<Rope_MaskTensor>:$mask,
                       Optional<Rope_PositionTensor>:$query_positions,
                       Optional<Rope_PositionTensor>:$key_positions,
                       Optional<Rope_F32Tensor>:$query_cos,
                       Optional<Rope_F32Tensor>:$query_sin,
                       Optional<Rope_F32Tensor>:$key_cos,
                       Optional<Rope_F32Tensor>:$key_sin,
                       Optional<Rope_HeadTensor>:$alibi_slopes,
                       Optional<Rope_HeadTensor>:$relative_bias,
                       Variadic<Rope_F32Tensor>:$outputs,
                       F64Attr:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<Rope_RotaryPairsAttr>:$rotary,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F64Attr>:$softcap,
                       OptionalAttr<Rope_RelativeBucketsAttr>:$relative_buckets);
  let results = (outs Variadic<Rope_F32Tensor>:$results);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`positions` `(` $query_positions^ `,` $key_positions `:`
       type($query_positions) `,` type($key_positions) `)`)?
    (`rotary` `(` qualified($rotary)^ `)`)?
    (`query_tables` `(` $query_cos^ `,` $query_sin `:` type($query_cos) `,`
       type($query_sin) `)`)?
    (`key_tables` `(` $key_cos^ `,` $key_sin `:` type($key_cos) `,`
       type($key_sin) `)`)?
    (`causal` $causal^)?
    (`window` `=` $window^)?
    (`softcap` `=` $softcap^)?
    `scale` `=` $scale
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`relative_bias` `(` $relative_bias^ `:` type($relative_bias) `)`)?
    (`buckets` `(` qualified($relative_buckets)^ `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->` type($results)
  }];
  let extraClassDeclaration = [{
    /// The relations between operand extents this op requires (checked by
    /// the verifier when static, at run time otherwise).
    ::llvm::SmallVector<::mlir::rope::ExtentRelation> getExtentRelations();
    MutableOperandRange getDpsInitsMutable() { return getOutputsMutable(); }
    Value getAccumulatorInit() { return getOutputs()[0]; }
    Value getMaxInit() { return getOutputs()[1]; }
    Value getSumInit() { return getOutputs()[2]; }
    RankedTensorType getQueryType() {
      return ::llvm::cast<RankedTensorType>(getQuery().getType());
    }
    int64_t getHeadDim() { return getQueryType().getShape().back(); }
    /// The dims Q and K rotate by their tables; none without tables.
    std::optional<::mlir::rope::RotaryRange> getRotaryRange() {
      if (auto rotary = getRotaryAttr())
        return rotary.getRange(getHeadDim());
      return std::nullopt;
    }
    /// `decomposeOperation`, where a tile with at most
    /// `rowsRotatingKeysInScores` static query rows per kv head rotates its
    /// keys inside the Q·Kᵀ reduction (each pair as it is read) instead of
    /// into a tile of rotated keys (0: never). A decode tile uses each
    /// rotated key for a few rows, which do not pay for writing it out.
    ::mlir::FailureOr<::llvm::SmallVector<Value>>
    decompose(::mlir::OpBuilder &b, int64_t rowsRotatingKeysInScores);
    /// Iteration-domain dims.
    static constexpr unsigned kBatchDim = 0, kKvHeadDim = 1, kGroupDim = 2,
                              kQueryDim = 3, kKeyDim = 4, kValueDim = 5,
                              kNumLoops = 6;
  }];
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "const ::mlir::rope::AttentionFields &":$fields)>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rope.linear_attention
//===----------------------------------------------------------------------===//

def Rope_LinearAttentionOp : Rope_Op<"linear_attention", [
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>,
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
  let extraClassDeclaration = [{
    /// The relations between operand extents this op requires (checked by
    /// the verifier when static, at run time otherwise).
    ::llvm::SmallVector<::mlir::rope::ExtentRelation> getExtentRelations();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rope.sinusoidal
//===----------------------------------------------------------------------===//

def Rope_SinusoidalOp : Rope_Op<"sinusoidal", [
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>,
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
  let extraClassDeclaration = [{
    /// The relations between operand extents this op requires (checked by
    /// the verifier when static, at run time otherwise).
    ::llvm::SmallVector<::mlir::rope::ExtentRelation> getExtentRelations();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rope.assert
//===----------------------------------------------------------------------===//

def Rope_AssertOp : Rope_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "A run-time check whose message quotes run-time values";
  let description = [{
    `cf.assert` with values: when `condition` is false at run time, the
    program stops and reports `message` with each `{i}` replaced by the
    `i`-th of `values` (index or integers, printed as signed decimals). The
    rope ops' runtime verification (`--rope-insert-runtime-checks`) makes
    them, quoting the extents it compared:

    ```mlir
    rope.assert %ok, "x.mlir:3:8: error: 'rope.rotate' op expects positions to have {1} entries along the sequence, got {0}" (%np, %s : index, index)
    ```

    `--rope-lower-runtime-checks` turns it (and `cf.assert`) into a call of
    the rope runtime's `ropeRuntimeError`, which hands the message to the
    host and does not return (see docs/reliability.md). The memory write
    effect keeps it in place: nothing that reads or writes memory moves
    across it.
  }];
  let arguments = (ins I1:$condition, StrAttr:$message,
                       Variadic<AnySignlessIntegerOrIndex>:$values);
  let assemblyFormat = [{
    $condition `,` $message (`(` $values^ `:` type($values) `)`)? attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

#endif // ROPE_DIALECT_ROPE_IR_ROPEOPS_TD

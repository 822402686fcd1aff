//===- RopeAttrs.td - rope attributes ----------------------*- tablegen -*-===//
//
// The rotary spec and its frequency-scaling kinds. Each scaling kind is its own
// attribute implementing ScalingAttrInterface, so that the spec stays readable
// (`scaling = #rope.llama3<...>`) and a new kind is one more attribute.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEATTRS_TD
#define ROPE_DIALECT_ROPE_IR_ROPEATTRS_TD

include "rope/Dialect/Rope/IR/RopeDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

// A real-valued parameter, printed in a form that round-trips exactly.
class Rope_F64Parameter<string desc, string default = "">
    : AttrParameter<"double", desc> {
  let defaultValue = default;
}

// An optional real value: absent means "derive it" (see each use).
def Rope_OptionalF64Parameter
    : AttrParameter<"std::optional<double>", "optional f64"> {
  let defaultValue = "std::nullopt";
  let printer = "$_printer << *$_self";
}

class Rope_BoolParameter<string default>
    : AttrParameter<"bool", "true or false"> {
  let parser = "::mlir::rope::detail::parseBool($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
  let defaultValue = default;
}

// A list of reals printed as `[a, b, ...]`.
def Rope_F64ListParameter : ArrayRefParameter<"double", "list of f64"> {
  let parser = "::mlir::rope::detail::parseF64List($_parser)";
  let printer = "::mlir::rope::detail::printF64List($_printer, $_self)";
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Rope_RotaryLayout : I32EnumAttr<"RotaryLayout",
    "which dimensions of the head form a rotation pair", [
      I32EnumAttrCase<"half", 0>,
      I32EnumAttrCase<"interleaved", 1>
    ]> {
  let cppNamespace = "::mlir::rope";
  let genSpecializedAttr = 0;
}

def Rope_LayoutParameter : EnumParameter<Rope_RotaryLayout> {
  let defaultValue = "::mlir::rope::RotaryLayout::half";
}

// The layout on its own, for ops that rotate without a spec
// (`layout<interleaved>` in their assembly).
def Rope_RotaryLayoutAttr : EnumAttr<Rope_Dialect, Rope_RotaryLayout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Scaling interface
//===----------------------------------------------------------------------===//

def Rope_ScalingAttrInterface : AttrInterface<"ScalingAttrInterface"> {
  let cppNamespace = "::mlir::rope";
  let description = [{
    A frequency-scaling scheme for long context. It maps the base frequencies
    `f_i = base^(-2i/r)` to the inverse frequencies actually used, possibly
    depending on the largest position seen at run time (`dynamic`,
    `longrope`), and supplies the default attention factor.
  }];
  let methods = [
    InterfaceMethod<[{
        Inverse frequencies for rotary dims `r` when the largest position is
        `maxPosition` (ignored by kinds that do not depend on it).
      }],
      "::llvm::SmallVector<double>", "getInverseFrequencies",
      (ins "double":$base, "int64_t":$rotaryDims, "int64_t":$maxPosition)>,
    InterfaceMethod<[{
        True when the frequencies depend on the largest position, i.e. must be
        selected or computed at run time.
      }],
      "bool", "dependsOnMaxPosition", (ins),
      "", [{ return false; }]>,
    InterfaceMethod<"Attention factor `m` this scaling implies.",
      "double", "getDefaultAttentionFactor", (ins),
      "", [{ return 1.0; }]>,
    InterfaceMethod<[{
        Checks rules that involve the rotary dims (per-frequency list lengths).
      }],
      "::llvm::LogicalResult", "verifyForRotaryDims",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "int64_t":$rotaryDims),
      "", [{ return ::mlir::success(); }]>
  ];
}

//===----------------------------------------------------------------------===//
// Rotation interface
//===----------------------------------------------------------------------===//

def Rope_RotationAttrInterface : AttrInterface<"RotationAttrInterface"> {
  let cppNamespace = "::mlir::rope";
  let description = [{
    Which dims of a head a rotation turns and how they pair: `dims` rotated
    dims (0: the whole head) starting at `offset`, paired by `layout`. This is
    what every consumer of an op's rotation reads (`getRange`), whether the
    frequencies come with it (`#rope.spec`) or from cos/sin table operands
    (`#rope.pairs`).
  }];
  let methods = [
    InterfaceMethod<"How the rotated dims pair.",
      "::mlir::rope::RotaryLayout", "getLayout">,
    InterfaceMethod<"Rotated dims `r`; 0 means the whole head.",
      "int64_t", "getDims">,
    InterfaceMethod<"The first rotated dim.", "int64_t", "getOffset">
  ];
  let extraSharedClassDeclaration = [{
    /// Rotary dims for a head of `headDim` elements.
    int64_t getRotaryDims(int64_t headDim) const {
      return $_attr.getDims() == 0 ? headDim : $_attr.getDims();
    }
    /// The rotated range of a head of `headDim` elements.
    ::mlir::rope::RotaryRange getRange(int64_t headDim) const {
      return {getRotaryDims(headDim), $_attr.getOffset(), $_attr.getLayout()};
    }
  }];
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Rope_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Rope_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

class Rope_ScalingAttr<string name, string attrMnemonic>
    : Rope_Attr<name, attrMnemonic, [
        DeclareAttrInterfaceMethods<Rope_ScalingAttrInterface,
          ["dependsOnMaxPosition", "getDefaultAttentionFactor",
           "verifyForRotaryDims"]>]>;

def Rope_LinearScalingAttr : Rope_ScalingAttr<"LinearScaling", "linear"> {
  let summary = "Position interpolation (Chen et al. 2023): inv_freq / factor";
  let parameters = (ins Rope_F64Parameter<"interpolation factor">:$factor);
}

def Rope_DynamicScalingAttr : Rope_ScalingAttr<"DynamicScaling", "dynamic"> {
  let summary = "NTK-aware dynamic scaling of the base";
  let description = [{
    `θ' = θ·(factor·L/L_orig − (factor−1))^(r/(r−2))` with
    `L = max(max_position + 1, L_orig)`; below the original context this is
    the default rotation.
  }];
  let parameters = (ins
    Rope_F64Parameter<"scaling factor">:$factor,
    "int64_t":$original_max_position_embeddings);
}

def Rope_YarnScalingAttr : Rope_ScalingAttr<"YarnScaling", "yarn"> {
  let summary = "YaRN: ramp between interpolated and extrapolated frequencies";
  let description = [{
    As Hugging Face defines it: the correction range from `beta_fast` and
    `beta_slow` selects, per frequency, a blend of `f` (extrapolation) and
    `f/factor` (interpolation). The attention factor is `0.1·ln(factor)+1`, or
    `mscale(factor, mscale)/mscale(factor, mscale_all_dim)` when both are set.
  }];
  let parameters = (ins
    Rope_F64Parameter<"scaling factor">:$factor,
    "int64_t":$original_max_position_embeddings,
    Rope_F64Parameter<"fast boundary (rotations)", "32.0">:$beta_fast,
    Rope_F64Parameter<"slow boundary (rotations)", "1.0">:$beta_slow,
    Rope_OptionalF64Parameter:$mscale,
    Rope_OptionalF64Parameter:$mscale_all_dim,
    Rope_BoolParameter<"true">:$truncate);
}

def Rope_Llama3ScalingAttr : Rope_ScalingAttr<"Llama3Scaling", "llama3"> {
  let summary = "Llama 3.1 wavelength-based smooth interpolation";
  let parameters = (ins
    Rope_F64Parameter<"scaling factor">:$factor,
    Rope_F64Parameter<"low frequency factor", "1.0">:$low_freq_factor,
    Rope_F64Parameter<"high frequency factor", "4.0">:$high_freq_factor,
    "int64_t":$original_max_position_embeddings);
}

def Rope_LongRopeScalingAttr : Rope_ScalingAttr<"LongRopeScaling", "longrope"> {
  let summary = "LongRoPE: per-frequency short and long factors";
  let description = [{
    `inv_freq_i = f_i / ext_i` with `ext = long_factor` when
    `max_position + 1 > original_max_position_embeddings`, `short_factor`
    otherwise. `factor` (context extension ratio) only sets the attention
    factor `sqrt(1 + ln(factor)/ln(L_orig))`.
  }];
  let parameters = (ins
    Rope_F64ListParameter:$short_factor,
    Rope_F64ListParameter:$long_factor,
    Rope_F64Parameter<"context extension ratio", "1.0">:$factor,
    "int64_t":$original_max_position_embeddings);
}

def Rope_FreqFactorsScalingAttr
    : Rope_ScalingAttr<"FreqFactorsScaling", "freq_factors"> {
  let summary = "Explicit per-frequency divisors (llama.cpp style)";
  let parameters = (ins Rope_F64ListParameter:$factors);
}

def Rope_RotarySpecAttr
    : Rope_Attr<"RotarySpec", "spec", [Rope_RotationAttrInterface]> {
  let summary = "Complete description of a rotary position embedding";
  let description = [{
    Parameters (all optional, defaults in brackets):
    * `base` [10000.0]: θ in `inv_freq_i = θ^(-2i/r)`;
    * `dims` [0 = the whole head dim]: rotary dims `r`, even;
    * `offset` [0]: the rotated dims are `[offset, offset + r)`; the others
      pass through unchanged (partial rotary);
    * `layout` [half]: `half` pairs `(i, i + r/2)` (NeoX, Llama), `interleaved`
      pairs `(2i, 2i + 1)` (GPT-J, RoFormer);
    * `scaling` [none]: a `#rope.linear`, `#rope.dynamic`, `#rope.yarn`,
      `#rope.llama3`, `#rope.longrope` or `#rope.freq_factors` attribute;
    * `attention_factor` [from the scaling, else 1]: `m`, multiplies both
      rotated components;
    * `inverse` [false]: rotate by `−φ` (the transpose).

    Example:
    ```mlir
    #rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0,
               original_max_position_embeddings = 8192>>
    ```
  }];
  let parameters = (ins
    Rope_F64Parameter<"base θ", "10000.0">:$base,
    DefaultValuedParameter<"int64_t", "0", "rotary dims (0: head dim)">:$dims,
    DefaultValuedParameter<"int64_t", "0", "first rotated dim">:$offset,
    Rope_LayoutParameter:$layout,
    OptionalParameter<"::mlir::rope::ScalingAttrInterface">:$scaling,
    Rope_OptionalF64Parameter:$attention_factor,
    Rope_BoolParameter<"false">:$inverse);
  let extraClassDeclaration = [{
    /// The attention factor `m` actually applied.
    double getEffectiveAttentionFactor() const;
    /// Inverse frequencies for a head of `headDim` elements and the given
    /// largest position.
    ::llvm::SmallVector<double> getInverseFrequencies(int64_t headDim,
                                                      int64_t maxPosition) const;
    /// True when the frequencies depend on the positions seen at run time.
    bool dependsOnMaxPosition() const {
      return getScaling() && getScaling().dependsOnMaxPosition();
    }
    /// Checks the spec against a head dim (rules the attribute alone cannot
    /// check); reports through `emitError`.
    ::llvm::LogicalResult verifyForHeadDim(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        int64_t headDim) const;
    /// Checks what the spec implies for a head dim (its frequencies at both
    /// ends of the positions, its attention factor): finite and positive.
    ::llvm::LogicalResult verifyImpliedNumbers(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        int64_t headDim) const;
    /// Same spec with the direction flipped.
    RotarySpecAttr getInverted() const;
  }];
}

def Rope_RotaryPairsAttr
    : Rope_Attr<"RotaryPairs", "pairs", [Rope_RotationAttrInterface]> {
  let summary = "The rotated dims of a rotation whose cos/sin are operands";
  let description = [{
    Which dims of the head a rotation by table operands turns, and how they
    pair; the tables carry the frequencies, positions and attention factor.
    Parameters as in `#rope.spec`: `dims` [0 = the whole head dim], `offset`
    [0] and `layout` [half]. The attention ops carry it as their `rotary`
    when they rotate Q and K by tables.
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "0", "rotary dims (0: head dim)">:$dims,
    DefaultValuedParameter<"int64_t", "0", "first rotated dim">:$offset,
    Rope_LayoutParameter:$layout);
}

def Rope_RelativeBucketsAttr : Rope_Attr<"RelativeBuckets", "buckets"> {
  let summary = "T5 relative-position buckets";
  let description = [{
    How a learned relative position bias (T5, Raffel et al. 2020) buckets the
    distance `n = p_k − p_q` between a key and a query, exactly as T5 defines
    it: `bidirectional` gives half the buckets to keys after the query; of the
    (remaining) `num_buckets`, the first half are exact distances and the
    rest grow logarithmically up to `max_distance`, beyond which every
    distance shares the last bucket. The bias of query head `h` is
    `table[bucket(n), h]`.
  }];
  let parameters = (ins
    "int64_t":$num_buckets,
    "int64_t":$max_distance,
    Rope_BoolParameter<"true">:$bidirectional);
  let extraClassDeclaration = [{
    /// Buckets of one direction (half of `num_buckets` when bidirectional).
    int64_t getBucketsPerDirection() const {
      return getBidirectional() ? getNumBuckets() / 2 : getNumBuckets();
    }
    /// Distances below this have a bucket of their own.
    int64_t getMaxExact() const { return getBucketsPerDirection() / 2; }
  }];
}

#endif // ROPE_DIALECT_ROPE_IR_ROPEATTRS_TD

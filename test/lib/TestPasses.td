//===- TestPasses.td - test-only passes of rope-mlir -*- tablegen -*-===//
//
// Passes that exist only to test the libraries (linked into rope-opt and the
// test build of the C API, never into the production libraries), as
// upstream MLIR keeps its own under test/lib.
//
//===----------------------------------------------------------------------===//
#ifndef ROPE_TEST_LIB_TESTPASSES_TD
#define ROPE_TEST_LIB_TESTPASSES_TD

include "mlir/Pass/PassBase.td"

def RopeTestSpecRecovery : Pass<"rope-test-spec-recovery"> {
  let summary = "Testing aid: recover each rope.rotate's spec from its "
                "frequencies and check the round trip";
  let description = [{
    `--rope-raise` recovers a `#rope.spec` from the frequencies it finds in
    the IR. This pass checks that recovery against the spec's own frequency
    code, for every `rope.rotate`: the spec's inverse frequencies (at the
    largest position `max-position`, for `dynamic` and `longrope`), the spec
    recovered from them (with the rotation's `dims` and `offset`, which
    `--rope-raise` takes from where the rotated dims sit in the head), and
    that spec's inverse frequencies, which must be the same within the
    recovery's tolerance (2^-21 relative), with the same attention factor
    (within 2^-23), layout and direction.

    Each rotation gets a remark: `same spec: ...` when the recovered spec is
    the spec itself (no scaling, linear scaling, per-frequency factors that
    leave the two highest frequencies alone, each with parameters of at most
    7 significant digits), else `same frequencies: ...` with the spec
    recovered (YaRN, Llama 3, LongRoPE and `dynamic` come back as a base with
    per-frequency factors, or as a base alone). A rotation whose round trip
    fails is an error, and the pass fails. The IR is left unchanged.
  }];
  let options = [
    Option<"maxPosition", "max-position", "int64_t", /*default=*/"0",
           "The largest position, for the scaling kinds whose frequencies "
           "depend on it">
  ];
}

def RopeTestAnalysis : Pass<"rope-test-analysis"> {
  let summary = "Testing aid: remarks with what lib/Analysis says of each "
                "op tagged for it";
  let description = [{
    `lib/Analysis` (terms, constant and symbolic evaluation, sizes, op
    classification) has no pass of its own; raising and fusion read IR
    through it. This pass makes what it says visible to lit: every op that
    carries one of the unit attributes below gets one remark per analysis
    for each of its results (prefixed `result #i: ` when it has several).
    A tensor result is read at its own index space (`identityTerm`), a
    scalar in a linalg body at the op's loops, any other scalar at no index.

    * `test.constant` (ConstantEvaluation): `constant: V` when the element
      is V at every point, else `constant: elements [...]` with each
      element of a static space of at most 64 points (`?` where it does not
      evaluate), else `constant: none`.
    * `test.symbolic` (SymbolicEvaluation): `symbolic: N pieces, values
      [...]` (each piece's value: a constant, or an affine function of the
      point such as `d0 - d1`), then the value at each point of a static
      space of at most 64 points, or the opaque reads it depends on;
      `symbolic: none` where it cannot describe the element.
    * `test.sizes` (Sizes): `sizes: [...]` with each dim's canonical size
      for a ranked tensor, `size: S` for an integer or index; a size is a
      constant, `dim D of %t` or a value `%v`, plus or minus a constant, so
      two sizes known to be equal print the same.
    * `test.classify` (OpClassification): `classify: KIND(operands)` for an
      elementwise computation, `classify: view of T` (then `, reads T` for
      the end of the views) for an op that only moves elements, else
      `classify: none`; a linalg op adds its multiply-accumulate loop.
    * `test.analyze`: all four.

    Ops it does not understand get `none`. An element that may read an op
    without operands other than a constant or a loop index (`tensor.empty`,
    a call without arguments) is not given to constant evaluation (nor,
    through a `tosa.gather`, to the others), which reads such an op's
    operand 0 before checking what it is: the remark says `skipped, reads
    'OP' (no operands)`. The IR is left unchanged and the pass never fails.
  }];
}

#endif // ROPE_TEST_LIB_TESTPASSES_TD

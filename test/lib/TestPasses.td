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

#endif // ROPE_TEST_LIB_TESTPASSES_TD

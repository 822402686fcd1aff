// RUN: rope-opt %s --rope-test-analysis --split-input-file -verify-diagnostics -o /dev/null

// What lib/Analysis says of the ops tagged for --rope-test-analysis
// (test/lib/Analysis/TestAnalysis.cpp): `test.constant` asks for constant
// evaluation, `test.symbolic` for the piecewise form of an element,
// `test.sizes` for the canonical sizes, `test.classify` for what the op does
// to elements, `test.analyze` for all four. A tensor is read at its own
// index space (d0, d1, ...), a scalar of a linalg body at the op's loops.
// Each analysis has cases it must see through and cases it must refuse
// (`none`, or an opaque value): the refusals are what keeps raising from
// matching what a program does not compute.

//===----------------------------------------------------------------------===//
// ConstantEvaluation
//===----------------------------------------------------------------------===//

// A splat is one value at every point; a dense constant that varies is read
// element by element; a scalar ignores the index.
func.func @constants() {
  // expected-remark @below {{constant: 2.5}}
  %splat = arith.constant {test.constant} dense<2.5> : tensor<2x3xf32>
  // expected-remark @below {{constant: elements [[1, 2], [3, 4]]}}
  %dense = arith.constant {test.constant} dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  // Evaluation holds a float in its own precision: 0.1 as bf16 is not the
  // f64 0.1, and prints as the shortest bf16 that reads back the same.
  // expected-remark @below {{constant: elements [0.1, -0.5]}}
  %bf16 = arith.constant {test.constant} dense<[0.1, -0.5]> : tensor<2xbf16>
  // expected-remark @below {{constant: -3}}
  %scalar = arith.constant {test.constant} -3 : i32
  return
}

// -----

// The frequencies of a rotation as a frontend computes them,
// 1 / 10000 ** (2 * i / 8) for i = 0..3, each op rounding to f32.
func.func @inverse_frequencies() -> tensor<4xf32> {
  %init = tensor.empty() : tensor<4xf32>
  // expected-remark @below {{constant: elements [1, 0.1, 0.01, 0.001]}}
  %freq = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                          iterator_types = ["parallel"]}
      outs(%init : tensor<4xf32>) attrs = {test.constant} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %fi = arith.sitofp %i64 : i64 to f32
    %two = arith.constant 2.0 : f32
    %twice = arith.mulf %fi, %two : f32
    %eight = arith.constant 8.0 : f32
    %exponent = arith.divf %twice, %eight : f32
    %base = arith.constant 10000.0 : f32
    %power = math.powf %base, %exponent : f32
    %one = arith.constant 1.0 : f32
    %inv = arith.divf %one, %power : f32
    linalg.yield %inv : f32
  } -> tensor<4xf32>
  return %freq : tensor<4xf32>
}

// -----

// Views are followed to the constant: a slice of column 1, a transpose; a
// select on constants takes the side its condition picks.
func.func @through_views() {
  %cst = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // expected-remark @below {{constant: elements [[2], [4]]}}
  %column = tensor.extract_slice %cst[0, 1] [2, 1] [1, 1] {test.constant} : tensor<2x2xf32> to tensor<2x1xf32>
  // expected-remark @below {{constant: elements [[1, 3], [2, 4]]}}
  %t = tosa.transpose %cst {perms = array<i32: 1, 0>, test.constant} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %true = arith.constant true
  %a = arith.constant 5 : index
  %b = arith.constant 7 : index
  // expected-remark @below {{constant: 5}}
  %picked = arith.select %true, %a, %b {test.constant} : index
  return
}

// -----

// A dense_resource blob, as torch-mlir exports a model's buffers.
func.func @blob() {
  // expected-remark @below {{constant: elements [1, 2]}}
  %blob = arith.constant {test.constant} dense_resource<two_floats> : tensor<2xf32>
  return
}

{-#
  dialect_resources: {
    builtin: {
      two_floats: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// What does not evaluate: the program's inputs, an unsigned comparison (not
// an index comparison), a value computed from an argument.
func.func @not_constant(%x: tensor<4xf32>, %n: index) {
  %c1 = arith.constant dense<1.0> : tensor<4xf32>
  // expected-remark @below {{constant: none}}
  %sum = arith.addf %x, %c1 {test.constant} : tensor<4xf32>
  %a = arith.constant 1 : index
  %b = arith.constant 2 : index
  // expected-remark @below {{constant: none}}
  %ult = arith.cmpi ult, %a, %b {test.constant} : index
  // expected-remark @below {{constant: 1}}
  %slt = arith.cmpi slt, %a, %b {test.constant} : index
  // expected-remark @below {{constant: none}}
  %dynamic = arith.addi %n, %a {test.constant} : index
  return
}

// -----

// Ops without operands that are neither a constant nor a loop index (a
// tensor.empty, a call without arguments) are not constants, and asking
// about an element that reads one must not crash. Regression test for
// evaluateLogic (ConstantEvaluation.cpp), which read operand 0 of such an op
// before checking what the op is: directly, through an elementwise op, and
// through the indices of a tosa.gather (which classification evaluates to
// find the row it reads).
func.func private @make() -> tensor<4xf32>
func.func private @rows() -> tensor<1x2xi32>

func.func @without_operands(%values: tensor<1x4x3xf32>) {
  // expected-remark @below {{constant: none}}
  %empty = tensor.empty() {test.constant} : tensor<4xf32>
  // expected-remark @below {{constant: none}}
  %made = func.call @make() {test.constant} : () -> tensor<4xf32>
  // expected-remark @below {{constant: none}}
  // expected-remark @below {{symbolic: none}}
  // expected-remark @below {{sizes: [4]}}
  // expected-remark @below {{classify: add(%1[d0], %1[d0])}}
  %twice = arith.addf %made, %made {test.analyze} : tensor<4xf32>
  %rows = func.call @rows() : () -> tensor<1x2xi32>
  // expected-remark @below {{constant: none}}
  // expected-remark @below {{symbolic: none}}
  // expected-remark @below {{sizes: [1, 2, 3]}}
  // expected-remark @below {{classify: none}}
  %gathered = tosa.gather %values, %rows {test.analyze} : (tensor<1x4x3xf32>, tensor<1x2xi32>) -> tensor<1x2x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// SymbolicEvaluation (and the terms it reads)
//===----------------------------------------------------------------------===//

// A causal mask: 0 where the key j is at most the query i, -inf after.
func.func @causal_mask() -> tensor<3x3xf32> {
  %init = tensor.empty() : tensor<3x3xf32>
  // expected-remark @below {{symbolic: 2 pieces, values [0, -inf], at points [[0, -inf, -inf], [0, 0, -inf], [0, 0, 0]]}}
  %mask = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                          iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<3x3xf32>) attrs = {test.symbolic} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %visible = arith.cmpi sge, %i, %j : index
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %m = arith.select %visible, %zero, %ninf : f32
    linalg.yield %m : f32
  } -> tensor<3x3xf32>
  return %mask : tensor<3x3xf32>
}

// -----

// Index arithmetic is an affine function of the point: the distance i - j,
// asked of the generic and of the scalar in its body, which is read at the
// generic's loops.
func.func @distance() -> tensor<3x3xi64> {
  %init = tensor.empty() : tensor<3x3xi64>
  // expected-remark @below {{symbolic: 1 piece, values [d0 - d1], at points [[0, -1, -2], [1, 0, -1], [2, 1, 0]]}}
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<3x3xi64>) attrs = {test.symbolic} {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    // expected-remark @below {{symbolic: 1 piece, values [d0 - d1], at points [[0, -1, -2], [1, 0, -1], [2, 1, 0]]}}
    %diff = arith.subi %i, %j {test.symbolic} : index
    %cast = arith.index_cast %diff : index to i64
    linalg.yield %cast : i64
  } -> tensor<3x3xi64>
  return %d : tensor<3x3xi64>
}

// -----

// A sliding window: visible where 0 <= i - j < 2, a conjunction of two
// comparisons (four pieces, one of them true).
func.func @window() -> tensor<3x3xi1> {
  %init = tensor.empty() : tensor<3x3xi1>
  // expected-remark @below {{symbolic: 4 pieces, values [1, 0, 0, 0], at points [[1, 0, 0], [1, 1, 0], [0, 1, 1]]}}
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<3x3xi1>) attrs = {test.symbolic} {
  ^bb0(%out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %causal = arith.cmpi sge, %i, %j : index
    %two = arith.constant 2 : index
    %reach = arith.addi %j, %two : index
    %near = arith.cmpi slt, %i, %reach : index
    %visible = arith.andi %causal, %near : i1
    linalg.yield %visible : i1
  } -> tensor<3x3xi1>
  return %w : tensor<3x3xi1>
}

// -----

// A constant that steps evenly is an iota, a·k + b, as torch's tosa export
// spells `arange`; one that does not is only its elements.
func.func @progressions() {
  // expected-remark @below {{symbolic: 1 piece, values [d0 * 2 + 1], at points [1, 3, 5, 7]}}
  %odd = arith.constant {test.symbolic} dense<[1, 3, 5, 7]> : tensor<4xi64>
  // expected-remark @below {{symbolic: none}}
  %squares = arith.constant {test.symbolic} dense<[0, 1, 4, 9]> : tensor<4xi64>
  return
}

// -----

// A boolean computed from the program's inputs (a padding mask) becomes an
// opaque atom, reported with the read it stands for; a float input is no
// atom, so the element is not described at all.
func.func @opaque(%pad: tensor<3x3xi1>, %x: tensor<3x3xf32>) -> (tensor<3x3xi1>, tensor<3x3xf32>) {
  %init = tensor.empty() : tensor<3x3xi1>
  // expected-remark @below {{symbolic: 4 pieces, values [1, 0, 0, 0], opaque reads [%arg0[d0, d1]]}}
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%pad : tensor<3x3xi1>) outs(%init : tensor<3x3xi1>) attrs = {test.symbolic} {
  ^bb0(%p: i1, %out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %causal = arith.cmpi sge, %i, %j : index
    %both = arith.andi %causal, %p : i1
    linalg.yield %both : i1
  } -> tensor<3x3xi1>
  %one = arith.constant dense<1.0> : tensor<3x3xf32>
  // expected-remark @below {{symbolic: none}}
  %sum = arith.addf %x, %one {test.symbolic} : tensor<3x3xf32>
  return %m, %sum : tensor<3x3xi1>, tensor<3x3xf32>
}

// -----

// A product of two functions of the point is not affine.
func.func @not_affine() -> tensor<3x3xindex> {
  %init = tensor.empty() : tensor<3x3xindex>
  // expected-remark @below {{symbolic: none}}
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<3x3xindex>) attrs = {test.symbolic} {
  ^bb0(%out: index):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ij = arith.muli %i, %j : index
    linalg.yield %ij : index
  } -> tensor<3x3xindex>
  return %p : tensor<3x3xindex>
}

// -----

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

// One size spelled many ways prints one canonical form: dim 0 of the
// argument, through index/i64 casts, a select guarding against a negative
// size that cannot occur, an init, a destination; one more through an
// addition, an affine.apply and a concatenation of one more row.
func.func @sizes(%x: tensor<?x4xf32>, %new: tensor<1x4xf32>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{size: dim 0 of %arg0}}
  %n = tensor.dim {test.sizes} %x, %c0 : tensor<?x4xf32>
  %n64 = arith.index_cast %n : index to i64
  %zero = arith.constant 0 : i64
  %negative = arith.cmpi slt, %n64, %zero : i64
  %minus1 = arith.constant -1 : i64
  // expected-remark @below {{size: dim 0 of %arg0}}
  %guarded = arith.select %negative, %minus1, %n64 {test.sizes} : i64
  %back = arith.index_cast %guarded : i64 to index
  // expected-remark @below {{sizes: [dim 0 of %arg0, 4]}}
  %init = tensor.empty(%back) {test.sizes} : tensor<?x4xf32>
  // expected-remark @below {{sizes: [dim 0 of %arg0, 4]}}
  %neg = linalg.negf {test.sizes} ins(%x : tensor<?x4xf32>) outs(%init : tensor<?x4xf32>) -> tensor<?x4xf32>
  %one = arith.constant 1 : i64
  // expected-remark @below {{size: dim 0 of %arg0 + 1}}
  %plus = arith.addi %n64, %one {test.sizes} : i64
  // expected-remark @below {{size: dim 0 of %arg0 + 1}}
  %applied = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%n] {test.sizes}
  // expected-remark @below {{sizes: [dim 0 of %arg0 + 1, 4]}}
  %cache = tensor.concat dim(0) %x, %new {test.sizes} : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

// torch-mlir's clamps of a slice's start and end to the dim they index
// (`probs[..., :-1]` at a dynamic length n + 1): min(n + 1, 0) is 0 and
// max(n − 0, 0) is n, since a dim is never negative; so is a scalar that
// sizes a tensor.empty, reached as that tensor's dim. A select guarding
// n + 1 − 1 against a negative value takes its other side.
func.func @clamped_sizes(%x: tensor<?x4xf32>, %len: tensor<i64>) {
  %c0 = arith.constant 0 : index
  %c0_i64 = arith.constant 0 : i64
  %cm1 = arith.constant -1 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %end = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%n]
  %end64 = arith.index_cast %end : index to i64
  // expected-remark @below {{size: 0}}
  %start64 = arith.minsi %end64, %c0_i64 {test.sizes} : i64
  %start = arith.index_cast %start64 : i64 to index
  %last = arith.addi %end, %cm1 : index
  %negative = arith.cmpi slt, %last, %c0 : index
  // expected-remark @below {{size: dim 0 of %arg0}}
  %guarded = arith.select %negative, %cm1, %last {test.sizes} : index
  // expected-remark @below {{size: dim 0 of %arg0}}
  %stop = arith.minsi %guarded, %end {test.sizes} : index
  // expected-remark @below {{size: dim 0 of %arg0}}
  %length = arith.subi %stop, %start {test.sizes} : index
  // expected-remark @below {{size: dim 0 of %arg0}}
  %clamped = arith.maxsi %length, %c0 {test.sizes} : index
  %l64 = tensor.extract %len[] : tensor<i64>
  %l = arith.index_cast %l64 : i64 to index
  %init = tensor.empty(%l) : tensor<?x4xf32>
  %m = tensor.dim %init, %c0 : tensor<?x4xf32>
  %m1 = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%m]
  // expected-remark @below {{size: 0}}
  %min = arith.minsi %m1, %c0 {test.sizes} : index
  // A scalar not reached as a dim may be negative: its max with 0 is not
  // decided (the op is its own size).
  // expected-remark-re @below {{size: %{{[0-9]+}}{{$}}}}
  %max = arith.maxsi %l, %c0 {test.sizes} : index
  return
}

// -----

// Sizes not followed further: the product of two dynamic dims (a collapse),
// a product of sizes, a narrowing cast (257 as i8 is 1), a loop's induction
// variable plus one, an unranked tensor and a memref. A value not seen
// through is its own size, named as the printer names it (%0 is %twice,
// %1 is %narrow, %arg2 is %iv).
func.func @unknown_sizes(%y: tensor<?x?xf32>, %n: index) {
  // expected-remark @below {{sizes: [dim 0 of %collapsed]}}
  %flat = tensor.collapse_shape %y [[0, 1]] {test.sizes} : tensor<?x?xf32> into tensor<?xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %y, %c0 : tensor<?x?xf32>
  %c2 = arith.constant 2 : index
  // expected-remark @below {{size: %0}}
  %twice = arith.muli %d, %c2 {test.sizes} : index
  // expected-remark @below {{size: %1}}
  %narrow = arith.index_cast %d {test.sizes} : index to i8
  %c1 = arith.constant 1 : index
  scf.for %iv = %c0 to %n step %c1 {
    // expected-remark @below {{size: %arg2 + 1}}
    %next = arith.addi %iv, %c1 {test.sizes} : index
  }
  // expected-remark @below {{sizes: none}}
  %unranked = tensor.cast %y {test.sizes} : tensor<?x?xf32> to tensor<*xf32>
  // expected-remark @below {{sizes: none}}
  %buffer = memref.alloc(%n) {test.sizes} : memref<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// OpClassification (and the canonical form of terms)
//===----------------------------------------------------------------------===//

// Elementwise computations, with their operands as terms: a static unit dim
// is read at 0 whatever the spelling, which is also how tosa's implicit
// broadcast reads.
func.func @computations(%a: tensor<4x1xf32>, %b: tensor<4x1xf32>, %c: tensor<2x3xf32>, %d: tensor<1x3xf32>, %h: tensor<4xf16>, %i: tensor<4xi32>) {
  // expected-remark @below {{classify: mul(%arg0[d0, 0], %arg1[d0, 0])}}
  %mul = arith.mulf %a, %b {test.classify} : tensor<4x1xf32>
  // expected-remark @below {{classify: add(%arg2[d0, d1], %arg3[0, d1])}}
  %add = tosa.add %c, %d {test.classify} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  // expected-remark @below {{classify: float-cast(%arg4[d0])}}
  %ext = arith.extf %h {test.classify} : tensor<4xf16> to tensor<4xf32>
  // expected-remark @below {{classify: int-to-float(%arg5[d0])}}
  %float = arith.sitofp %i {test.classify} : tensor<4xi32> to tensor<4xf32>
  // expected-remark @below {{classify: cos(%arg4[d0])}}
  %cos = math.cos %h {test.classify} : tensor<4xf16>
  return
}

// -----

// Not elementwise computations this layer knows: a maximum, an integer
// product with a shift, a narrowing cast, a call.
func.func private @opaque_call() -> tensor<4xf32>

func.func @not_computations(%a: tensor<4xf32>, %i: tensor<4xi32>, %n: tensor<4xindex>) {
  // expected-remark @below {{classify: none}}
  %max = arith.maximumf %a, %a {test.classify} : tensor<4xf32>
  %shift = "tosa.const"() {values = dense<1> : tensor<1xi8>} : () -> tensor<1xi8>
  // expected-remark @below {{classify: none}}
  %shifted = tosa.mul %i, %i, %shift {test.classify} : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
  // expected-remark @below {{classify: none}}
  %narrow = arith.index_cast %n {test.classify} : tensor<4xindex> to tensor<4xi32>
  // expected-remark @below {{classify: none}}
  %called = func.call @opaque_call() {test.classify} : () -> tensor<4xf32>
  return
}

// -----

// Ops that only move elements: one step (`view of`) and every step (`reads`).
// A reshape that splits a dim and one that merges it back cancel, with the
// dims' ranges: (d0 * 4 + d1) floordiv 4 is d0 when d1 < 4.
func.func @views(%x: tensor<2x4xf32>, %y: tensor<3x2xf32>) {
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  // expected-remark @below {{classify: view of %collapsed[d0 * 4 + d1], reads %arg0[d0, d1]}}
  %back = tensor.expand_shape %flat [[0, 1]] output_shape [2, 4] {test.classify} : tensor<8xf32> into tensor<2x4xf32>
  // expected-remark @below {{classify: view of %arg1[d1, d0]}}
  %t = tosa.transpose %y {perms = array<i32: 1, 0>, test.classify} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %init = tensor.empty() : tensor<2x3xf32>
  // A linalg body that yields its input: into the body, then out of it
  // through the input's indexing map.
  // expected-remark @below {{classify: view of %in[d0, d1], reads %arg1[d1, d0]}}
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<3x2xf32>) outs(%init : tensor<2x3xf32>) attrs = {test.classify} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3xf32>
  return
}

// -----

// A matmul: no element of it is a view or an elementwise computation, but
// it accumulates products over its reduction loop (d2).
func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-remark @below {{classify: none, multiply-accumulate over loop 2}}
  %m = linalg.matmul {test.classify} ins(%a, %b : tensor<4x3xf32>, tensor<3x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %m : tensor<4x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Every analysis at once, and ops the pass does not understand
//===----------------------------------------------------------------------===//

func.func @everything(%m: memref<4xf32>, %v: f32) {
  // expected-remark @below {{constant: elements [0, 1, 2, 3]}}
  // expected-remark @below {{symbolic: 1 piece, values [d0], at points [0, 1, 2, 3]}}
  // expected-remark @below {{sizes: [4]}}
  // expected-remark @below {{classify: none}}
  %iota = arith.constant {test.analyze} dense<[0, 1, 2, 3]> : tensor<4xindex>
  %c0 = arith.constant 0 : index
  // expected-remark @below {{nothing to analyze: no results}}
  memref.store %v, %m[%c0] {test.analyze} : memref<4xf32>
  // expected-remark @below {{constant: none}}
  // expected-remark @below {{symbolic: none}}
  // expected-remark @below {{sizes: none}}
  // expected-remark @below {{classify: none}}
  %buffer = memref.alloc() {test.analyze} : memref<4xf32>
  %a = arith.constant 3 : i64
  // expected-remark @below {{result #0: constant: none}}
  // expected-remark @below {{result #0: symbolic: none}}
  // expected-remark @below {{result #0: size: %sum}}
  // expected-remark @below {{result #0: classify: none}}
  // expected-remark @below {{result #1: constant: none}}
  // expected-remark @below {{result #1: symbolic: none}}
  // expected-remark @below {{result #1: size: %overflow}}
  // expected-remark @below {{result #1: classify: none}}
  %sum, %overflow = arith.addui_extended %a, %a {test.analyze} : i64, i1
  return
}

// RUN: rope-opt %s --split-input-file --rope-approximate-math | FileCheck %s

// f32 exp becomes a polynomial (fused multiply-adds) in arith and math, with
// no call left to lower to libm; sin and cos stay as they are.
// CHECK-LABEL: func.func @sin_cos_exp
// CHECK:         math.sin
// CHECK:         math.cos
// CHECK-NOT:     math.exp
// CHECK:         math.fma {{.+}} : f32
// CHECK-NOT:     math.exp
// CHECK:         return
func.func @sin_cos_exp(%x: f32) -> (f32, f32, f32) {
  %s = math.sin %x : f32
  %c = math.cos %x : f32
  %e = math.exp %x : f32
  return %s, %c, %e : f32, f32, f32
}

// -----

// Vectors too (softmax after vectorisation).
// CHECK-LABEL: func.func @exp_vector
// CHECK-NOT:     math.exp
// CHECK:         math.fma {{.+}} : vector<8xf32>
func.func @exp_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %x : vector<8xf32>
  return %e : vector<8xf32>
}

// -----

// Other float types are left alone.
// CHECK-LABEL: func.func @exp_f64
// CHECK:         math.exp {{.+}} : f64
func.func @exp_f64(%x: f64) -> f64 {
  %e = math.exp %x : f64
  return %e : f64
}

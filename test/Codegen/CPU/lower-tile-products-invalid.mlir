// RUN: rope-opt %s --split-input-file --rope-lower-tile-products --verify-diagnostics -o /dev/null

// A mark on something that is not the packed form is an error, not a crash.
func.func @wrong_form(%a: memref<64x64xbf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{is marked rope.tile_product but is not its packed form on memrefs}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x64xbf16>) outs(%c : memref<64x64xf32>) attrs = {rope.tile_product = "amx"} {
  ^bb0(%x: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Two inputs, but not the packed ranks.
func.func @wrong_ranks(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{is marked rope.tile_product but is not its packed form on memrefs}}
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>) attrs = {rope.tile_product = "amx"} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// The mark names the engine; a mark without one (or with another) is an
// error.
func.func @no_engine(%a: memref<1x32x1x16x2xbf16>, %b: memref<1x1x16x32x2xbf16>, %c: memref<1x32x1x32xf32>) {
  // expected-error @+1 {{is marked rope.tile_product without a known engine ("amx" or "avx512bf16")}}
  linalg.generic {indexing_maps = [affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, kt, kp, k1)>,
                                   affine_map<(mt, nt, m, n, kt, kp, k1) -> (nt, kt, kp, n, k1)>,
                                   affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, nt, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<1x32x1x16x2xbf16>, memref<1x1x16x32x2xbf16>) outs(%c : memref<1x32x1x32xf32>)
      attrs = {rope.tile_product} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// The dot products multiply bf16 pairs only (no x86 instruction sums f16
// pairs into f32 lanes).
func.func @dot_products_of_f16(%a: memref<1x32x1x16x2xf16>, %b: memref<1x1x16x32x2xf16>, %c: memref<1x32x1x32xf32>) {
  // expected-error @+1 {{is marked rope.tile_product = "avx512bf16" but its inputs are not bf16}}
  linalg.generic {indexing_maps = [affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, kt, kp, k1)>,
                                   affine_map<(mt, nt, m, n, kt, kp, k1) -> (nt, kt, kp, n, k1)>,
                                   affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, nt, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<1x32x1x16x2xf16>, memref<1x1x16x32x2xf16>) outs(%c : memref<1x32x1x32xf32>)
      attrs = {rope.tile_product = "avx512bf16"} {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %0 = arith.extf %x : f16 to f32
    %1 = arith.extf %y : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

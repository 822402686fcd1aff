// An unknown feature name is an error that lists the known ones.
// RUN: not rope-opt %s --pass-pipeline='builtin.module(func.func(rope-pack-tile-products{cpu-features=host,amx-tiles}))' 2>&1 | FileCheck %s
// CHECK: error: rope-pack-tile-products: unknown CPU feature 'amx-tiles' (known: host, avx512f, avx512bf16, avx512fp16, amx-tile, amx-bf16, amx-fp16)
func.func @f() {
  return
}

// The tensor-core matmul compiled for Hopper and Ampere: mma.sync, ldmatrix
// (plain for A and a [N, K] B), cp.async, no local memory; ptxas: 32 KB of
// shared memory (two stages of two 64×64 bf16 tiles), no spills.
// REQUIRES: cuda-toolkit
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptx | FileCheck %s --check-prefix=PTX
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptxas | FileCheck %s --check-prefix=USAGE
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_80 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptxas | FileCheck %s --check-prefix=USAGE

// PTX-NOT: {{ld|st}}.local
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NOT: {{ld|st}}.local

// USAGE-NOT: {{[1-9][0-9]*}} bytes spill
// USAGE-DAG: 32768 bytes smem, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// USAGE-NOT: {{[1-9][0-9]*}} bytes spill

#proj = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
         affine_map<(m, n, k) -> (m, n)>]
func.func @projection(%x: tensor<4096x4096xbf16>, %w: tensor<1024x4096xbf16>) -> tensor<4096x1024xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4096x1024xbf16>
  %f = linalg.fill ins(%z : bf16) outs(%e : tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16>
  %r = linalg.matmul indexing_maps = #proj ins(%x, %w : tensor<4096x4096xbf16>, tensor<1024x4096xbf16>)
                     outs(%f : tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16>
  return %r : tensor<4096x1024xbf16>
}

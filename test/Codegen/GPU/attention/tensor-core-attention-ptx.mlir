// What the tensor-core attention compiles to, without a GPU: the PTX of
// rope.attention with a rotary spec, f16, causal, GQA 32/8, S = 4096,
// D = 128 holds mma.sync, ldmatrix (plain for Q and K, transposed for V) and
// cp.async, and nothing in local memory; ptxas assembles it for Ampere and
// Hopper within 255 registers and a stack frame under 100 bytes (the few
// loop-invariant values it spills: a warp's two row groups keep 192 f32
// accumulators live; FlashAttention-2's kernel keeps a 136-byte frame).
// REQUIRES: cuda-toolkit
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptx | FileCheck %s --check-prefix=PTX
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptxas | FileCheck %s --check-prefix=USAGE
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_80 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptxas | FileCheck %s --check-prefix=USAGE

// The attention kernel is the module with shared memory: its PTX, up to the
// next module's.
// PTX-LABEL: .shared .align
// PTX-NOT: ld.local
// PTX-NOT: st.local
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.wait_group
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly
// PTX-DAG: ex2.approx
// PTX-NOT: ld.local
// PTX-NOT: st.local
// PTX: gpu.binary

// The attention: its 64 KB of tiles are dynamic shared memory (over the 48
// KB a kernel may declare), a frame of at most two digits. The table and
// normalisation kernels: no spills.
// USAGE-NOT: {{[0-9][0-9][0-9]+}} bytes stack
// USAGE-DAG: 255 registers, 1 bytes smem, {{[0-9]+}} bytes spill stores, {{[0-9]+}} bytes spill loads, {{[0-9]?[0-9]}} bytes stack
// USAGE-DAG: 16 registers, 0 bytes smem, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// USAGE-NOT: {{[0-9][0-9][0-9]+}} bytes stack

func.func @attention(%q: tensor<1x32x4096x128xf16>, %k: tensor<1x8x4096x128xf16>,
                     %v: tensor<1x8x4096x128xf16>) -> tensor<1x32x4096x128xf16> {
  %r = rope.attention %q, %k, %v rotary(#rope.spec<base = 500000.0>) causal
      : tensor<1x32x4096x128xf16>, tensor<1x8x4096x128xf16>, tensor<1x8x4096x128xf16>
  return %r : tensor<1x32x4096x128xf16>
}

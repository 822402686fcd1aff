// The f32 configuration of the attention kernel, without a GPU: rope.attention
// with a rotary spec, f32, causal, GQA 32/8, S = 4096, D = 128 compiles to
// one kernel whose three 32 KiB tiles are dynamic shared memory (above the
// 48 KiB a kernel may declare statically), staged by cp.async and read as
// 16-byte (Q, K) and 8-byte (V) shared loads; products by FMA, P's rows by
// indexed shuffles, no mma.sync, nothing in local memory; ptxas assembles it
// for Ampere and Hopper within 255 registers and no spills.
// REQUIRES: cuda-toolkit
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptx | FileCheck %s --check-prefix=PTX
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptxas | FileCheck %s --check-prefix=USAGE
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_80 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptxas | FileCheck %s --check-prefix=USAGE

// The attention kernel is the module with the dynamic buffer: its PTX, up
// to the next module's.
// PTX-LABEL: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-NOT: ld.local
// PTX-NOT: st.local
// PTX-NOT: mma.sync
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.wait_group
// PTX-DAG: ld.shared.v4.b32
// PTX-DAG: ld.shared.v2.b32
// PTX-DAG: fma.rn.f32
// PTX-DAG: shfl.sync.idx.b32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-NOT: ld.local
// PTX-NOT: st.local
// PTX-NOT: mma.sync
// PTX: gpu.binary

// Every kernel: no spills, no stack, no static tiles.
// USAGE-NOT: {{[1-9][0-9]*}} bytes spill
// USAGE-NOT: {{[1-9][0-9][0-9][0-9][0-9]+}} bytes smem
// USAGE-DAG: {{(1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 1 bytes smem, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// USAGE-NOT: {{[1-9][0-9]*}} bytes spill

func.func @attention(%q: tensor<1x32x4096x128xf32>, %k: tensor<1x8x4096x128xf32>,
                     %v: tensor<1x8x4096x128xf32>) -> tensor<1x32x4096x128xf32> {
  %r = rope.attention %q, %k, %v rotary(#rope.spec<base = 500000.0>) causal
      : tensor<1x32x4096x128xf32>, tensor<1x8x4096x128xf32>, tensor<1x8x4096x128xf32>
  return %r : tensor<1x32x4096x128xf32>
}

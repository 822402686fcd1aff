// The SASS of the tensor-core attention for Hopper (ptxas, then nvdisasm):
// bf16 causal attention with D = 128 runs on HMMA.16816 with bf16 operands,
// its tiles come in by LDGSTS (cp.async, bypassing L1) and out of shared
// memory by LDSM (ldmatrix, .MT for V's transposed fragments), exp2 is
// MUFU.EX2. Local memory holds only the few loop-invariant values ptxas
// spills (its frame is bounded in tensor-core-attention-ptx.mlir): a handful
// of LDL per key tile against its 256 HMMA.
// REQUIRES: cuda-sass
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py sass | FileCheck %s

// Of all kernels of the function (the attention, its normalisation).
// CHECK-DAG: LDGSTS.E.BYPASS.128
// CHECK-DAG: LDSM.16.M88.4
// CHECK-DAG: LDSM.16.MT88.4
// CHECK-DAG: HMMA.16816.F32.BF16
// CHECK-DAG: MUFU.EX2
// CHECK-DAG: SHFL.BFLY
// CHECK-DAG: BAR.SYNC

func.func @attention(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x32x4096x128xbf16>,
                     %v: tensor<1x32x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %r = rope.attention %q, %k, %v causal
      : tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xbf16>
  return %r : tensor<1x32x4096x128xbf16>
}

// Bad --rope-lower-to-nvvm options are reported before any work, with the
// fix where there is one (an unknown chip would otherwise give PTX for the
// wrong GPU, and a PTX ISA too old for the chip aborted inside LLVM).

// RUN: not rope-opt %s --rope-lower-to-nvvm="chip=sm_999" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: --rope-lower-to-nvvm: unknown chip 'sm_999' (LLVM 22 knows sm_20 ... sm_121f, e.g. sm_80, sm_90)

// RUN: not rope-opt %s --rope-lower-to-nvvm="features=+ptx60" 2>&1 | FileCheck %s --check-prefix=OLDPTX
// OLDPTX: error: --rope-lower-to-nvvm: chip sm_90 needs PTX ISA 7.8 or newer: add features=+ptx78

// RUN: not rope-opt %s --rope-lower-to-nvvm="features=+ptx99" 2>&1 | FileCheck %s --check-prefix=FEATURE
// FEATURE: error: --rope-lower-to-nvvm: unsupported feature '+ptx99' (expected +ptxNN, PTX ISA 3.2 to 9.0)

// RUN: not rope-opt %s --rope-lower-to-nvvm="format=wat" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: --rope-lower-to-nvvm: unknown format 'wat' (fatbin, bin, isa or llvm)

// RUN: not rope-opt %s --rope-lower-to-nvvm="block-size=100" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: rope-parallel-loops-to-gpu: block-size must be a multiple of 32 in [32, 1024], got 100

// An older chip with a matching PTX ISA is fine.
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_75 features=+ptx63 format=isa" | FileCheck %s --check-prefix=OK
// OK: .target sm_75

func.func @rotate(%x: tensor<1x2x4x8xf32>, %p: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<1x2x4x8xf32>, tensor<4xi64>
  return %r : tensor<1x2x4x8xf32>
}

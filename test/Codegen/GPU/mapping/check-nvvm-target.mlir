// The target --rope-lower-to-nvvm compiles for is checked before any work.
// A good one leaves the IR as it is (the defaults, an older chip with a
// matching PTX ISA, the largest of several PTX features):
// RUN: rope-opt %s --rope-check-nvvm-target | FileCheck %s
// RUN: rope-opt %s --rope-check-nvvm-target="chip=sm_75 features=+ptx63 format=isa" | FileCheck %s
// RUN: rope-opt %s --rope-check-nvvm-target="chip=sm_90a features=+ptx60,+ptx80 format=bin" | FileCheck %s
// CHECK-LABEL: func.func @kernel_host
// CHECK-NEXT:    return

// A bad one is an error that says what to use instead:
// RUN: not rope-opt %s --rope-check-nvvm-target="chip=sm_999" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: --rope-lower-to-nvvm: unknown chip 'sm_999' (LLVM 22 knows sm_20 ... sm_121f, e.g. sm_80, sm_90)

// RUN: not rope-opt %s --rope-check-nvvm-target="chip=sm_90a features=+ptx78" 2>&1 | FileCheck %s --check-prefix=OLDPTX
// OLDPTX: error: --rope-lower-to-nvvm: chip sm_90a needs PTX ISA 8.0 or newer: add features=+ptx80

// RUN: not rope-opt %s --rope-check-nvvm-target="features=" 2>&1 | FileCheck %s --check-prefix=NOPTX
// NOPTX: error: --rope-lower-to-nvvm: chip sm_90 needs PTX ISA 7.8 or newer: add features=+ptx78

// RUN: not rope-opt %s --rope-check-nvvm-target="features=+ptx80,+fast" 2>&1 | FileCheck %s --check-prefix=FEATURE
// FEATURE: error: --rope-lower-to-nvvm: unsupported feature '+fast' (expected +ptxNN, PTX ISA 3.2 to 9.0)

// RUN: not rope-opt %s --rope-check-nvvm-target="features=+ptx91" 2>&1 | FileCheck %s --check-prefix=NEWPTX
// NEWPTX: error: --rope-lower-to-nvvm: unsupported feature '+ptx91' (expected +ptxNN, PTX ISA 3.2 to 9.0)

// RUN: not rope-opt %s --rope-check-nvvm-target="format=cubin" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: --rope-lower-to-nvvm: unknown format 'cubin' (fatbin, bin, isa or llvm)

func.func @kernel_host() {
  return
}

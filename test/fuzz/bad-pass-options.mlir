// Bad pass and pipeline options are rejected with a message, never a crash
// (docs/reliability.md): out-of-range values by the pass, malformed ones by
// the option parser.
// RUN: not rope-opt %s --rope-decompose-attention=query-tile=0 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not rope-opt %s --rope-lower-to-cpu=key-tile=-1 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not rope-opt %s --pass-pipeline="builtin.module(rope-lower-to-cpu{query-tile=-7})" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not rope-opt %s --rope-decompose-attention=query-tile=abc 2>&1 | FileCheck %s --check-prefix=INT
// RUN: not rope-opt %s --rope-lower-to-cpu=key-tile=99999999999999999999 2>&1 | FileCheck %s --check-prefix=INT
// RUN: not rope-opt %s --rope-lower-to-cpu=parallel=maybe 2>&1 | FileCheck %s --check-prefix=BOOL
// RUN: not rope-opt %s --rope-decompose-attention=bogus=1 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// RANGE: error: {{.*}}must be positive
// INT: value invalid for {{.*}} argument
// BOOL: invalid value for boolean argument
// UNKNOWN: no such option bogus

func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %r = rope.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
  return %r : tensor<1x1x4x8xf32>
}

// RUN: rope-opt %s --rope-skip-invisible-attention-tiles -split-input-file | FileCheck %s
// RUN: rope-opt %s --rope-skip-invisible-attention-tiles=unmask-visible-tiles=false -split-input-file | FileCheck %s --check-prefix=MASKED

// A causal, windowed key tile of a loop runs only when some key of the tile
// is visible from some query of the tile: its earliest key is not after its
// latest query, and its latest key is inside the window (4) of its earliest
// query. Otherwise the state passes through. The query tile's bounds do not
// change along the loop: they are computed before it. A tile that runs is
// versioned on whether every query sees every key (the latest key is not
// after the earliest query, the earliest key inside the window of the latest
// query): then a copy without causal and window runs.
// CHECK-LABEL: func.func @window_tile
// CHECK-SAME: %[[QP:[a-z0-9]+]]: tensor<8xi64>
// CHECK: %[[QLO:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: %[[QHI:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: scf.for {{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}})
// CHECK: %[[KPS:.+]] = tensor.extract_slice
// CHECK-NOT: ins(%[[QP]]
// CHECK: %[[KLO:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: %[[KHI:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: %[[CAUSAL:.+]] = arith.cmpi sle, %[[KLO]], %[[QHI]] : i64
// CHECK: %[[DIST:.+]] = arith.subi %[[QLO]], %[[KHI]] : i64
// CHECK: %[[INWIN:.+]] = arith.cmpi slt, %[[DIST]], %{{.+}} : i64
// CHECK: %[[VISIBLE:.+]] = arith.andi %[[CAUSAL]], %[[INWIN]] : i1
// CHECK: %[[R:.+]]:3 = scf.if %[[VISIBLE]]
// CHECK-NEXT: %[[ALLCAUSAL:.+]] = arith.cmpi sle, %[[KHI]], %[[QLO]] : i64
// CHECK-NEXT: %[[SPAN:.+]] = arith.subi %[[QHI]], %[[KLO]] : i64
// CHECK-NEXT: %[[W:.+]] = arith.constant 4 : i64
// CHECK-NEXT: %[[ALLWIN:.+]] = arith.cmpi slt, %[[SPAN]], %[[W]] : i64
// CHECK-NEXT: %[[EVERY:.+]] = arith.andi %[[ALLCAUSAL]], %[[ALLWIN]] : i1
// CHECK-NEXT: %[[V:.+]]:3 = scf.if %[[EVERY]]
// CHECK-NEXT: %[[U:.+]]:3 = rope.online_attention
// CHECK-NOT: causal
// CHECK-NOT: window
// CHECK-SAME: scale = 2.500000e-01 outs(%[[ACC]], %[[M]], %[[L]] :
// CHECK-NEXT: scf.yield %[[U]]#0, %[[U]]#1, %[[U]]#2
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[T:.+]]:3 = rope.online_attention {{.+}} causal window = 4 scale
// CHECK-NEXT: scf.yield %[[T]]#0, %[[T]]#1, %[[T]]#2
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[V]]#0, %[[V]]#1, %[[V]]#2
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[ACC]], %[[M]], %[[L]]
// CHECK: scf.yield %[[R]]#0, %[[R]]#1, %[[R]]#2

// Without unmask-visible-tiles, the guard alone.
// MASKED-LABEL: func.func @window_tile
// MASKED: scf.for {{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}})
// MASKED: %[[R:.+]]:3 = scf.if
// MASKED-NEXT: %[[T:.+]]:3 = rope.online_attention {{.+}} causal window = 4 scale
// MASKED-NEXT: scf.yield %[[T]]#0, %[[T]]#1, %[[T]]#2
// MASKED-NEXT: } else {
// MASKED-NEXT: scf.yield %[[ACC]], %[[M]], %[[L]]
// MASKED: scf.yield %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @window_tile(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x64x16xf32>, %v: tensor<1x1x64x16xf32>,
                       %qp: tensor<8xi64>, %kp: tensor<64xi64>,
                       %acc: tensor<1x1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>, %l: tensor<1x1x1x8xf32>)
    -> (tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %r:3 = scf.for %j = %c0 to %c64 step %c16 iter_args(%a = %acc, %mm = %m, %ll = %l)
      -> (tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) {
    %ks = tensor.extract_slice %k[0, 0, %j, 0] [1, 1, 16, 16] [1, 1, 1, 1] : tensor<1x1x64x16xf32> to tensor<1x1x16x16xf32>
    %vs = tensor.extract_slice %v[0, 0, %j, 0] [1, 1, 16, 16] [1, 1, 1, 1] : tensor<1x1x64x16xf32> to tensor<1x1x16x16xf32>
    %kps = tensor.extract_slice %kp[%j] [16] [1] : tensor<64xi64> to tensor<16xi64>
    %t:3 = rope.online_attention %q, %ks, %vs positions(%qp, %kps : tensor<8xi64>, tensor<16xi64>) causal window = 4 scale = 0.25
        outs(%a, %mm, %ll : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
        : tensor<1x1x1x8x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
        -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
    scf.yield %t#0, %t#1, %t#2 : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
}

// -----

// Nothing to guard: a non-causal tile, and a causal op that is not a key
// tile of a loop.
// CHECK-LABEL: func.func @nothing_to_guard
// CHECK-NOT: scf.if
// MASKED-LABEL: func.func @nothing_to_guard
// MASKED-NOT: scf.if
func.func @nothing_to_guard(%q: tensor<1x1x1x8x16xf32>, %k: tensor<1x1x16x16xf32>, %v: tensor<1x1x16x16xf32>,
                            %qp: tensor<8xi64>, %kp: tensor<16xi64>,
                            %acc: tensor<1x1x1x8x16xf32>, %m: tensor<1x1x1x8xf32>, %l: tensor<1x1x1x8xf32>)
    -> (tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) {
  %t:3 = rope.online_attention %q, %k, %v positions(%qp, %kp : tensor<8xi64>, tensor<16xi64>) causal scale = 0.25
      outs(%acc, %m, %l : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>)
      : tensor<1x1x1x8x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
      -> tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
  return %t#0, %t#1, %t#2 : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>
}

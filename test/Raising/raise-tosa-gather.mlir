// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s

// How torch-mlir's tosa export spells GPT-J's interleaved rotation
// (`rotate_every_two`, the sin/cos cache gathered by position):
// `x[..., ::2]` and `x[..., 1::2]` are tosa.gather of the heads flattened
// to [B·S·H, D, 1] at constant even and odd indices tiled over the rows,
// `stack((-x2, x1), -1).flatten(-2)` a concat and reshapes that split the
// flattened rows again, `repeat_interleave(2)` of the tables a reshape +
// tosa.tile, and the cache [L, W] is gathered flattened ([1, L·W, 1]) at
// the linear index `reduce_sum(concat(0, p, column) · [L·W, W, 1])`.

// Tables computed from the positions, partners by constant gathers.
// CHECK-LABEL: func.func @gathered_pairs
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x12x4x8xf32>, %[[P:[^:]+]]: tensor<1x12xi64>)
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %{{.+}} rotary(#rope.spec<layout = interleaved>) seq_dim = 1 : tensor<1x12x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @gathered_pairs(%x: tensor<1x12x4x8xf32>, %pos: tensor<1x12xi64>) -> tensor<1x12x4x8xf32> {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %even = "tosa.const"() {values = dense<[[0, 2, 4, 6]]> : tensor<1x4xi32>} : () -> tensor<1x4xi32>
  %odd = "tosa.const"() {values = dense<[[1, 3, 5, 7]]> : tensor<1x4xi32>} : () -> tensor<1x4xi32>
  %m48 = tosa.const_shape {values = dense<[48, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s4881 = tosa.const_shape {values = dense<[48, 8, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s5 = tosa.const_shape {values = dense<[1, 12, 4, 4, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 12, 4, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %flat = tosa.reshape %x, %s4881 : (tensor<1x12x4x8xf32>, !tosa.shape<3>) -> tensor<48x8x1xf32>
  %ie = tosa.tile %even, %m48 : (tensor<1x4xi32>, !tosa.shape<2>) -> tensor<48x4xi32>
  %io = tosa.tile %odd, %m48 : (tensor<1x4xi32>, !tosa.shape<2>) -> tensor<48x4xi32>
  %xe = tosa.gather %flat, %ie : (tensor<48x8x1xf32>, tensor<48x4xi32>) -> tensor<48x4x1xf32>
  %xo = tosa.gather %flat, %io : (tensor<48x8x1xf32>, tensor<48x4xi32>) -> tensor<48x4x1xf32>
  %xo4 = tosa.reshape %xo, %s5 : (tensor<48x4x1xf32>, !tosa.shape<5>) -> tensor<1x12x4x4x1xf32>
  %no = tosa.negate %xo4, %zp, %zp : (tensor<1x12x4x4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x12x4x4x1xf32>
  %xe4 = tosa.reshape %xe, %s5 : (tensor<48x4x1xf32>, !tosa.shape<5>) -> tensor<1x12x4x4x1xf32>
  %st = tosa.concat %no, %xe4 {axis = 4 : i32} : (tensor<1x12x4x4x1xf32>, tensor<1x12x4x4x1xf32>) -> tensor<1x12x4x4x2xf32>
  %rot = tosa.reshape %st, %s4 : (tensor<1x12x4x4x2xf32>, !tosa.shape<4>) -> tensor<1x12x4x8xf32>
  %inv = "tosa.const"() {values = dense<[[[1.000000000e+00, 1.000000047e-01, 9.999999776e-03, 1.000000047e-03]]]> : tensor<1x1x4xf32>} : () -> tensor<1x1x4xf32>
  %s3 = tosa.const_shape {values = dense<[1, 12, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %pf = tosa.cast %pos : (tensor<1x12xi64>) -> tensor<1x12xf32>
  %p3 = tosa.reshape %pf, %s3 : (tensor<1x12xf32>, !tosa.shape<3>) -> tensor<1x12x1xf32>
  %ang = tosa.mul %p3, %inv, %shift : (tensor<1x12x1xf32>, tensor<1x1x4xf32>, tensor<1xi8>) -> tensor<1x12x4xf32>
  %c = tosa.cos %ang : (tensor<1x12x4xf32>) -> tensor<1x12x4xf32>
  %s = tosa.sin %ang : (tensor<1x12x4xf32>) -> tensor<1x12x4xf32>
  %t5 = tosa.const_shape {values = dense<[1, 12, 1, 4, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %rep = tosa.const_shape {values = dense<[1, 1, 1, 1, 2]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t4 = tosa.const_shape {values = dense<[1, 12, 1, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %cos5 = tosa.reshape %c, %t5 : (tensor<1x12x4xf32>, !tosa.shape<5>) -> tensor<1x12x1x4x1xf32>
  %cos2 = tosa.tile %cos5, %rep : (tensor<1x12x1x4x1xf32>, !tosa.shape<5>) -> tensor<1x12x1x4x2xf32>
  %cos4 = tosa.reshape %cos2, %t4 : (tensor<1x12x1x4x2xf32>, !tosa.shape<4>) -> tensor<1x12x1x8xf32>
  %sin5 = tosa.reshape %s, %t5 : (tensor<1x12x4xf32>, !tosa.shape<5>) -> tensor<1x12x1x4x1xf32>
  %sin2 = tosa.tile %sin5, %rep : (tensor<1x12x1x4x1xf32>, !tosa.shape<5>) -> tensor<1x12x1x4x2xf32>
  %sin4 = tosa.reshape %sin2, %t4 : (tensor<1x12x1x4x2xf32>, !tosa.shape<4>) -> tensor<1x12x1x8xf32>
  %a = tosa.mul %x, %cos4, %shift : (tensor<1x12x4x8xf32>, tensor<1x12x1x8xf32>, tensor<1xi8>) -> tensor<1x12x4x8xf32>
  %b = tosa.mul %rot, %sin4, %shift : (tensor<1x12x4x8xf32>, tensor<1x12x1x8xf32>, tensor<1xi8>) -> tensor<1x12x4x8xf32>
  %r = tosa.add %a, %b : (tensor<1x12x4x8xf32>, tensor<1x12x4x8xf32>) -> tensor<1x12x4x8xf32>
  return %r : tensor<1x12x4x8xf32>
}

// -----

// The tables gathered from a constant cache [16, 8] (sin in columns 0-3,
// cos in 4-7, frequencies 10000^(-2i/8)) flattened to [1, 128, 1]: the
// spec is recovered from the cache as from a 2-D one.
// CHECK-LABEL: func.func @flattened_cache
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x12x4x8xf32>, %[[P:[^:]+]]: tensor<1x12xi64>)
// CHECK: %[[R:.+]] = rope.rotate %[[X]], %{{.+}} rotary(#rope.spec<layout = interleaved>) seq_dim = 1 : tensor<1x12x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @flattened_cache(%x: tensor<1x12x4x8xf32>, %pos: tensor<1x12xi64>) -> tensor<1x12x4x8xf32> {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %even = "tosa.const"() {values = dense<[[0, 2, 4, 6]]> : tensor<1x4xi32>} : () -> tensor<1x4xi32>
  %odd = "tosa.const"() {values = dense<[[1, 3, 5, 7]]> : tensor<1x4xi32>} : () -> tensor<1x4xi32>
  %m48 = tosa.const_shape {values = dense<[48, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s4881 = tosa.const_shape {values = dense<[48, 8, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s5 = tosa.const_shape {values = dense<[1, 12, 4, 4, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 12, 4, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %flat = tosa.reshape %x, %s4881 : (tensor<1x12x4x8xf32>, !tosa.shape<3>) -> tensor<48x8x1xf32>
  %ie = tosa.tile %even, %m48 : (tensor<1x4xi32>, !tosa.shape<2>) -> tensor<48x4xi32>
  %io = tosa.tile %odd, %m48 : (tensor<1x4xi32>, !tosa.shape<2>) -> tensor<48x4xi32>
  %xe = tosa.gather %flat, %ie : (tensor<48x8x1xf32>, tensor<48x4xi32>) -> tensor<48x4x1xf32>
  %xo = tosa.gather %flat, %io : (tensor<48x8x1xf32>, tensor<48x4xi32>) -> tensor<48x4x1xf32>
  %xo4 = tosa.reshape %xo, %s5 : (tensor<48x4x1xf32>, !tosa.shape<5>) -> tensor<1x12x4x4x1xf32>
  %no = tosa.negate %xo4, %zp, %zp : (tensor<1x12x4x4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x12x4x4x1xf32>
  %xe4 = tosa.reshape %xe, %s5 : (tensor<48x4x1xf32>, !tosa.shape<5>) -> tensor<1x12x4x4x1xf32>
  %st = tosa.concat %no, %xe4 {axis = 4 : i32} : (tensor<1x12x4x4x1xf32>, tensor<1x12x4x4x1xf32>) -> tensor<1x12x4x4x2xf32>
  %rot = tosa.reshape %st, %s4 : (tensor<1x12x4x4x2xf32>, !tosa.shape<4>) -> tensor<1x12x4x8xf32>
  %cache = "tosa.const"() {values = dense<[[[0.000000000e+00], [0.000000000e+00], [0.000000000e+00], [0.000000000e+00], [1.000000000e+00], [1.000000000e+00], [1.000000000e+00], [1.000000000e+00], [8.414709568e-01], [9.983341396e-02], [9.999833070e-03], [9.999998147e-04], [5.403022766e-01], [9.950041771e-01], [9.999499917e-01], [9.999995232e-01], [9.092974067e-01], [1.986693293e-01], [1.999866590e-02], [1.999998698e-03], [-4.161468446e-01], [9.800665975e-01], [9.998000264e-01], [9.999979734e-01], [1.411200017e-01], [2.955202162e-01], [2.999550104e-02], [2.999995602e-03], [-9.899924994e-01], [9.553365111e-01], [9.995500445e-01], [9.999955297e-01], [-7.568024993e-01], [3.894183338e-01], [3.998933360e-02], [3.999989480e-03], [-6.536436081e-01], [9.210609794e-01], [9.992001057e-01], [9.999920130e-01], [-9.589242935e-01], [4.794255495e-01], [4.997916892e-02], [4.999979399e-03], [2.836622000e-01], [8.775825500e-01], [9.987502694e-01], [9.999874830e-01], [-2.794154882e-01], [5.646424890e-01], [5.996400490e-02], [5.999964196e-03], [9.601702690e-01], [8.253356218e-01], [9.982005358e-01], [9.999819994e-01], [6.569865942e-01], [6.442176700e-01], [6.994284689e-02], [6.999942940e-03], [7.539022565e-01], [7.648422122e-01], [9.975510240e-01], [9.999755025e-01], [9.893582463e-01], [7.173560858e-01], [7.991469651e-02], [7.999914698e-03], [-1.455000341e-01], [6.967067122e-01], [9.968017340e-01], [9.999679923e-01], [4.121184945e-01], [7.833269238e-01], [8.987855166e-02], [8.999878541e-03], [-9.111302495e-01], [6.216099858e-01], [9.959527254e-01], [9.999595284e-01], [-5.440211296e-01], [8.414709568e-01], [9.983341396e-02], [9.999833070e-03], [-8.390715122e-01], [5.403022766e-01], [9.950041771e-01], [9.999499917e-01], [-9.999902248e-01], [8.912073374e-01], [1.097782999e-01], [1.099977829e-02], [4.425697960e-03], [4.535961151e-01], [9.939560890e-01], [9.999395013e-01], [-5.365729332e-01], [9.320390821e-01], [1.197122037e-01], [1.199971233e-02], [8.438539505e-01], [3.623577654e-01], [9.928086400e-01], [9.999279976e-01], [4.201670289e-01], [9.635581970e-01], [1.296341419e-01], [1.299963426e-02], [9.074468017e-01], [2.674988210e-01], [9.915618896e-01], [9.999154806e-01], [9.906073809e-01], [9.854497313e-01], [1.395431161e-01], [1.399954222e-02], [1.367372125e-01], [1.699671447e-01], [9.902160168e-01], [9.999020100e-01], [6.502878666e-01], [9.974949956e-01], [1.494381279e-01], [1.499943715e-02], [-7.596879005e-01], [7.073719800e-02], [9.887710810e-01], [9.998875260e-01]]]> : tensor<1x128x1xf32>} : () -> tensor<1x128x1xf32>
  %zero = "tosa.const"() {values = dense<0> : tensor<1x12x8x1xi32>} : () -> tensor<1x12x8x1xi32>
  %column = "tosa.const"() {values = dense<[[[[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]], [[0], [1], [2], [3], [4], [5], [6], [7]]]]> : tensor<1x12x8x1xi32>} : () -> tensor<1x12x8x1xi32>
  %strides = "tosa.const"() {values = dense<[[128, 8, 1]]> : tensor<1x3xi32>} : () -> tensor<1x3xi32>
  %s3 = tosa.const_shape {values = dense<[1, 12, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %m3 = tosa.const_shape {values = dense<[1, 1, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s41 = tosa.const_shape {values = dense<[1, 12, 8, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s963 = tosa.const_shape {values = dense<[96, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s196 = tosa.const_shape {values = dense<[1, 96]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s1128 = tosa.const_shape {values = dense<[1, 12, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %st0 = tosa.const_shape {values = dense<[0, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %st4 = tosa.const_shape {values = dense<[0, 0, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %half = tosa.const_shape {values = dense<[1, 12, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %p3 = tosa.reshape %pos, %s3 : (tensor<1x12xi64>, !tosa.shape<3>) -> tensor<1x12x1xi64>
  %pt = tosa.tile %p3, %m3 : (tensor<1x12x1xi64>, !tosa.shape<3>) -> tensor<1x12x8xi64>
  %p32 = tosa.cast %pt : (tensor<1x12x8xi64>) -> tensor<1x12x8xi32>
  %p4 = tosa.reshape %p32, %s41 : (tensor<1x12x8xi32>, !tosa.shape<4>) -> tensor<1x12x8x1xi32>
  %idx = tosa.concat %zero, %p4, %column {axis = 3 : i32} : (tensor<1x12x8x1xi32>, tensor<1x12x8x1xi32>, tensor<1x12x8x1xi32>) -> tensor<1x12x8x3xi32>
  %idx2 = tosa.reshape %idx, %s963 : (tensor<1x12x8x3xi32>, !tosa.shape<2>) -> tensor<96x3xi32>
  %scaled = tosa.mul %idx2, %strides, %shift : (tensor<96x3xi32>, tensor<1x3xi32>, tensor<1xi8>) -> tensor<96x3xi32>
  %lin = tosa.reduce_sum %scaled {axis = 1 : i32} : (tensor<96x3xi32>) -> tensor<96x1xi32>
  %lin2 = tosa.reshape %lin, %s196 : (tensor<96x1xi32>, !tosa.shape<2>) -> tensor<1x96xi32>
  %rows = tosa.gather %cache, %lin2 : (tensor<1x128x1xf32>, tensor<1x96xi32>) -> tensor<1x96x1xf32>
  %sincos = tosa.reshape %rows, %s1128 : (tensor<1x96x1xf32>, !tosa.shape<3>) -> tensor<1x12x8xf32>
  %s = tosa.slice %sincos, %st0, %half : (tensor<1x12x8xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x12x4xf32>
  %c = tosa.slice %sincos, %st4, %half : (tensor<1x12x8xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x12x4xf32>
  %t5 = tosa.const_shape {values = dense<[1, 12, 1, 4, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %rep = tosa.const_shape {values = dense<[1, 1, 1, 1, 2]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t4 = tosa.const_shape {values = dense<[1, 12, 1, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %cos5 = tosa.reshape %c, %t5 : (tensor<1x12x4xf32>, !tosa.shape<5>) -> tensor<1x12x1x4x1xf32>
  %cos2 = tosa.tile %cos5, %rep : (tensor<1x12x1x4x1xf32>, !tosa.shape<5>) -> tensor<1x12x1x4x2xf32>
  %cos4 = tosa.reshape %cos2, %t4 : (tensor<1x12x1x4x2xf32>, !tosa.shape<4>) -> tensor<1x12x1x8xf32>
  %sin5 = tosa.reshape %s, %t5 : (tensor<1x12x4xf32>, !tosa.shape<5>) -> tensor<1x12x1x4x1xf32>
  %sin2 = tosa.tile %sin5, %rep : (tensor<1x12x1x4x1xf32>, !tosa.shape<5>) -> tensor<1x12x1x4x2xf32>
  %sin4 = tosa.reshape %sin2, %t4 : (tensor<1x12x1x4x2xf32>, !tosa.shape<4>) -> tensor<1x12x1x8xf32>
  %a = tosa.mul %x, %cos4, %shift : (tensor<1x12x4x8xf32>, tensor<1x12x1x8xf32>, tensor<1xi8>) -> tensor<1x12x4x8xf32>
  %b = tosa.mul %rot, %sin4, %shift : (tensor<1x12x4x8xf32>, tensor<1x12x1x8xf32>, tensor<1xi8>) -> tensor<1x12x4x8xf32>
  %r = tosa.add %a, %b : (tensor<1x12x4x8xf32>, tensor<1x12x4x8xf32>) -> tensor<1x12x4x8xf32>
  return %r : tensor<1x12x4x8xf32>
}

// The block is given (the default, 0, sizes it for the host CPU, which this
// test must not depend on); the default run only has to produce blocks.
// The reduction loops are checked one K step per iteration (reduction-unroll=1);
// the UNROLL run checks the unrolled form.
// RUN: rope-opt %s --split-input-file --rope-vectorize-contractions="register-rows=4 register-columns=16 reduction-unroll=1" | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-vectorize-contractions | FileCheck %s --check-prefix=HOST
// RUN: rope-opt %s --split-input-file --rope-vectorize-contractions="register-rows=4 register-columns=16 reduction-unroll=4" | FileCheck %s --check-prefix=UNROLL
// RUN: not rope-opt %s --split-input-file --rope-vectorize-contractions="register-columns=12" 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: not rope-opt %s --split-input-file --rope-vectorize-contractions="reduction-unroll=0" 2>&1 | FileCheck %s --check-prefix=UNROLL-OPTION

// OPTIONS: register-rows must be positive and register-columns a positive multiple of 8 (or 0: sized for the host CPU), got 0 and 12
// UNROLL-OPTION: reduction-unroll must be at least 1, got 0
// HOST-LABEL: func.func @matmul
// HOST-NOT:     linalg.matmul
// HOST:         vector.fma

// A matmul: loops over blocks of 4 rows and 16 columns, a reduction loop
// carrying the 4x16 accumulator as a vector (registers), one FMA per row and
// K step; nothing left of the linalg op.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT:     linalg.matmul
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %c4
// CHECK:           %[[ACC:.+]] = vector.transfer_read {{.+}} : tensor<{{.+}}>, vector<4x16xf32>
// CHECK:           scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %c1 iter_args({{.*}}%[[R:.+]] = %[[ACC]]) -> ({{.*}}vector<4x16xf32>)
// CHECK:             vector.transfer_read %{{.+}} : tensor<{{.+}}>, vector<4x1xf32>
// CHECK:             vector.transfer_read %{{.+}} : tensor<{{.+}}>, vector<1x16xf32>
// CHECK-COUNT-4:     vector.fma {{.+}} : vector<16xf32>
// CHECK:           vector.transfer_write {{.+}} : vector<4x16xf32>, tensor<{{.+}}>
// Unrolled by 4: the 8 K steps are two iterations of 4 steps, 4 FMAs each
// (one per row), the accumulator still carried as one vector.
// UNROLL-LABEL: func.func @matmul
// UNROLL:         scf.for %{{.+}} = %{{.+}} to %c8 step %c4 iter_args({{.+}}) -> ({{.*}}vector<4x16xf32>)
// UNROLL-COUNT-16:  vector.fma {{.+}} : vector<16xf32>
// UNROLL-NOT:       vector.fma
// UNROLL:           scf.yield
func.func @matmul(%a: tensor<32x8xf32>, %b: tensor<8x16xf32>,
                  %c: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<32x8xf32>, tensor<8x16xf32>)
                     outs(%c : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %r : tensor<32x16xf32>
}

// -----

// Q·Kᵀ as attention writes it (K is [keys, head dim]): K is packed once into
// Kᵀ so that a K step reads 16 contiguous keys. The pack moves 16 × 16
// blocks, each read as 16 rows of K, transposed in registers (the 64
// shuffles of vector.transpose's 16 × 16 lowering) and written as 16 rows
// of Kᵀ, instead of gathering one key per lane.
// CHECK-LABEL: func.func @scores
// CHECK:         %[[KT:.+]] = scf.for {{.+}} to %c128 step %c16 {{.+}} -> (tensor<128x64xf32>)
// CHECK:           scf.for {{.+}} to %c64 step %c16
// CHECK:             vector.transfer_read {{.+}} : tensor<{{.+}}>, vector<16x16xf32>
// CHECK-COUNT-64:    vector.shuffle
// CHECK:             vector.transfer_write {{.+}} : vector<16x16xf32>, tensor<{{.+}}>
// CHECK-NOT:     vector.gather
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for {{.+}} -> ({{.*}}vector<4x16xf32>)
// CHECK:               vector.transfer_read %[[KT]]
// CHECK-COUNT-4:       vector.fma
func.func @scores(%q: tensor<64x128xf32>, %k: tensor<64x128xf32>,
                  %s: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j, d) -> (i, d)>,
                       affine_map<(i, j, d) -> (j, d)>,
                       affine_map<(i, j, d) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<64x128xf32>, tensor<64x128xf32>) outs(%s : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// f16 storage: B is converted to f32 once, as it is packed, not at every FMA.
// CHECK-LABEL: func.func @values_f16
// CHECK:         linalg.generic {{.+}} ins(%{{.+}} : tensor<16x32xf16>) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK:           arith.extf
// CHECK:         vector.fma {{.+}} : vector<16xf32>
func.func @values_f16(%p: tensor<8x16xf32>, %v: tensor<16x32xf16>,
                      %acc: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, e, j) -> (i, j)>,
                       affine_map<(i, e, j) -> (j, e)>,
                       affine_map<(i, e, j) -> (i, e)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<8x16xf32>, tensor<16x32xf16>) outs(%acc : tensor<8x32xf32>) {
  ^bb0(%x: f32, %y: f16, %o: f32):
    %w = arith.extf %y : f16 to f32
    %m = arith.mulf %x, %w : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// Rows only known at run time (a frontend's sequence length): a loop over
// full blocks of 4 rows, whose tiles are cast to static shapes (peeling
// proves them full), then the rows left, one at a time.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK:         %[[FULL:.+]] = scf.for {{.+}} step %c4
// CHECK:           tensor.cast %{{.+}} : tensor<?x8xf32> to tensor<4x8xf32>
// CHECK:           scf.for {{.+}} -> (tensor<4x16xf32>, vector<4x16xf32>)
// CHECK-COUNT-4:     vector.fma {{.+}} : vector<16xf32>
// CHECK:         scf.for {{.+}} iter_args(%{{.+}} = %[[FULL]])
// CHECK:           scf.for {{.+}} step %c1
// CHECK:             scf.for {{.+}} -> (tensor<1x16xf32>, tensor<16xf32>, vector<16xf32>)
// CHECK:               vector.fma {{.+}} : vector<16xf32>
func.func @dynamic_rows(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>,
                        %c: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>)
                     outs(%c : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// Left alone: other dynamic extents, and a column extent that is not a
// multiple of 8 (no whole vector of columns).
// CHECK-LABEL: func.func @dynamic_columns
// CHECK:         linalg.matmul
// CHECK-NOT:     vector.
func.func @dynamic_columns(%a: tensor<4x8xf32>, %b: tensor<8x?xf32>,
                           %c: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x?xf32>)
                     outs(%c : tensor<4x?xf32>) -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// CHECK-LABEL: func.func @narrow
// CHECK:         linalg.matmul
// CHECK-NOT:     vector.
func.func @narrow(%a: tensor<4x8xf32>, %b: tensor<8x12xf32>,
                  %c: tensor<4x12xf32>) -> tensor<4x12xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x12xf32>)
                     outs(%c : tensor<4x12xf32>) -> tensor<4x12xf32>
  return %r : tensor<4x12xf32>
}

// -----

// A large matmul outside any loop: B packed once into column panels
// ([n / 16][k][16]) and the output viewed as [m][n / 16][16]; rows across
// cores (an scf.forall of 8 chunks), 512-step reduction panels, panels of 16
// column blocks; each block of rows goes through the panel's column blocks
// (its slice of A stays in L1 while the micro-panels of B stream by).
// CHECK-LABEL: func.func @large_matmul
// CHECK-SAME:    %[[A:[^:]+]]: tensor<512x1024xf32>, %[[B:[^:]+]]: tensor<1024x512xf32>, %[[C:[^:]+]]: tensor<512x512xf32>
// CHECK:         %[[BSPLIT:.+]] = tensor.expand_shape %[[B]] {{\[\[}}0], [1, 2]] output_shape [1024, 32, 16]
// CHECK:         %[[PANELS:.+]] = linalg.transpose ins(%[[BSPLIT]] : tensor<1024x32x16xf32>) outs(%{{.+}} : tensor<32x1024x16xf32>) permutation = [1, 0, 2]
// CHECK:         %[[CSPLIT:.+]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1, 2]] output_shape [512, 32, 16]
// CHECK:         %[[R:.+]] = scf.forall (%{{.+}}) = (0) to (512) step (64) shared_outs(%{{.+}} = %[[CSPLIT]])
// CHECK:           scf.for {{.+}} to %c1024 step %c512
// CHECK:             scf.for {{.+}} to %c32 step %c16
// CHECK:               scf.for {{.+}} to %c64 step %c4
// CHECK:                 scf.for {{.+}} to %c16 step %c1
// CHECK:                   scf.for {{.+}} -> ({{.*}}vector<4x16xf32>)
// CHECK:                     vector.transfer_read %[[PANELS]]
// CHECK-COUNT-4:             vector.fma
// CHECK:         tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2]] : tensor<512x32x16xf32> into tensor<512x512xf32>
func.func @large_matmul(%a: tensor<512x1024xf32>, %b: tensor<1024x512xf32>,
                        %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<512x1024xf32>, tensor<1024x512xf32>)
                     outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// -----

// A fresh zeroed output (a fill of tensor.empty) is built in the panel shape
// itself, not as an expand_shape of the empty tensor: empty-tensor
// elimination then finds the empty tensor and gives the product the caller's
// buffer (test/Pipelines: no copy of the result).
// CHECK-LABEL: func.func @large_matmul_fresh_output
// CHECK-NOT:     tensor.expand_shape %{{.+}} : tensor<512x512xf32>
// CHECK:         %[[EMPTY:.+]] = tensor.empty() : tensor<512x32x16xf32>
// CHECK:         %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[EMPTY]] : tensor<512x32x16xf32>)
// CHECK:         scf.forall (%{{.+}}) = (0) to (512) step (64) shared_outs(%{{.+}} = %[[ZERO]])
func.func @large_matmul_fresh_output(%a: tensor<512x1024xf32>,
                                     %b: tensor<1024x512xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x1024xf32>, tensor<1024x512xf32>)
                     outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// -----

// A projection as frontends write it (weight [out, in], rows = the dynamic
// sequence length): the weight copied once, straight from [out, in], into
// column panels [out / 16][in][16]; the columns split across cores (the rows
// may be few); full row blocks, then the rows left.
// CHECK-LABEL: func.func @projection
// CHECK-SAME:    %[[X:[^:]+]]: tensor<?x4096xf32>, %[[W:[^:]+]]: tensor<1024x4096xf32>
// CHECK:         %[[WSPLIT:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2]] output_shape [64, 16, 4096]
// CHECK:         %[[PANELS:.+]] = linalg.transpose ins(%[[WSPLIT]] : tensor<64x16x4096xf32>) outs(%{{.+}} : tensor<64x4096x16xf32>) permutation = [0, 2, 1]
// CHECK:         scf.forall (%{{.+}}) = (0) to (64) step (8)
// CHECK:           scf.for {{.+}} to %c4096 step %c512
// CHECK:             scf.for {{.+}} step %c4
// CHECK:               scf.for {{.+}} -> ({{.*}}vector<4x16xf32>)
// CHECK:                 vector.transfer_read %[[PANELS]]
// CHECK:             scf.for {{.+}} step %c4
// CHECK:               scf.for {{.+}} step %c1
func.func @projection(%x: tensor<?x4096xf32>, %w: tensor<1024x4096xf32>,
                      %c: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(s, o, i) -> (s, i)>,
                                      affine_map<(s, o, i) -> (o, i)>,
                                      affine_map<(s, o, i) -> (s, o)>]
       ins(%x, %w : tensor<?x4096xf32>, tensor<1024x4096xf32>)
       outs(%c : tensor<?x1024xf32>) -> tensor<?x1024xf32>
  return %r : tensor<?x1024xf32>
}

// -----

// Decode's scores: one query row per head of a GQA group ([group, 1, keys]).
// Its 4 rows fit one register block, which would transpose K for rows that
// use each key once: lane sums instead, over K's rows as stored. The
// block's rows are the group's heads, not the unit query dim, so the four
// heads share every load of K; its 4 × 4 outputs' lanes add up by a
// butterfly of shuffles and adds (15 adds, then the output's own).
// CHECK-LABEL: func.func @decode_scores
// CHECK-NOT:     linalg.transpose
// CHECK:         tensor.expand_shape {{.+}} : tensor<64x128xf32> into tensor<64x8x16xf32>
// CHECK:         scf.for {{.+}} step %c4
// CHECK:           scf.for {{.+}} -> ({{.*}}vector<4x4x16xf32>)
// CHECK:             vector.transfer_read {{.+}} : tensor<64x8x16xf32>, vector<4x4x16xf32>
// CHECK:             arith.mulf {{.+}} : vector<4x4x16xf32>
// CHECK:           vector.shuffle
// CHECK-COUNT-16:  arith.addf {{.+}} : vector<16xf32>
func.func @decode_scores(%q: tensor<4x1x128xf32>, %k: tensor<64x128xf32>,
                         %s: tensor<4x1x64xf32>) -> tensor<4x1x64xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(g, i, j, d) -> (g, i, d)>,
                       affine_map<(g, i, j, d) -> (j, d)>,
                       affine_map<(g, i, j, d) -> (g, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x1x128xf32>, tensor<64x128xf32>) outs(%s : tensor<4x1x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<4x1x64xf32>
  return %r : tensor<4x1x64xf32>
}

// -----

// A frontend's linear layer, x · Wᵀ with W stored [out, in]: torch-mlir
// writes a transpose of the whole weight and a matmul. Packing B copies it
// anyway, so it reads W through the transpose, in its stored layout: one
// copy of the weight (the pack), the transpose left dead and gone.
// CHECK-LABEL: func.func @linear_layer
// CHECK-SAME:    (%{{.+}}: tensor<32x64xf32>, %[[W:.+]]: tensor<48x64xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[PACKED:.+]] = scf.for {{.+}} -> (tensor<64x48xf32>)
// CHECK:           vector.transfer_read %{{.+}} : tensor<{{.+}}>, vector<16x16xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         vector.transfer_read %[[PACKED]]
// CHECK-COUNT-4: vector.fma {{.+}} : vector<16xf32>
func.func @linear_layer(%x: tensor<32x64xf32>, %w: tensor<48x64xf32>) -> tensor<32x48xf32> {
  %e = tensor.empty() : tensor<64x48xf32>
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%e : tensor<64x48xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<32x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<32x48xf32>) -> tensor<32x48xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<32x64xf32>, tensor<64x48xf32>) outs(%f : tensor<32x48xf32>) -> tensor<32x48xf32>
  return %r : tensor<32x48xf32>
}

// -----

// A decode step's linear layer: one row times Wᵀ, W stored [out, in]. Each
// element of W is used once, so W is read as stored, by dot products along
// its rows (no pack, no transpose): a lane sum whose columns are W's rows.
// The rows go over the cores in chunks of 64; in a chunk, blocks of 16 rows
// of W, the reduction in steps of 16 lanes, each row's lanes in a register
// of its own ([16, 16] accumulators across the K sweep), then the block's
// lanes added up by a butterfly (30 shuffles) into its 16 outputs, in the
// chunk (no serial pass over all of them after the parallel loop).
// CHECK-LABEL: func.func @decode_linear
// CHECK-SAME:    (%[[X:.+]]: tensor<1x256xf32>, %[[W:.+]]: tensor<512x256xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         scf.forall (%[[C:.+]]) = (0) to (512) step (64) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<1x512xf32>)
// CHECK:           %[[ROWS:.+]] = tensor.extract_slice %[[W]][%[[C]], 0] [64, 256] [1, 1]
// CHECK-DAG:       tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [1, 16, 16] : tensor<1x256xf32> into tensor<1x16x16xf32>
// CHECK-DAG:       tensor.expand_shape %[[ROWS]] {{\[}}[0], [1, 2]] output_shape [64, 16, 16] : tensor<64x256xf32> into tensor<64x16x16xf32>
// CHECK:           scf.for {{.+}} step %c16
// CHECK:             scf.for {{.+}} -> ({{.*}}vector<16x16xf32>)
// CHECK:               vector.transfer_read {{.+}} : tensor<64x16x16xf32>, vector<16x16xf32>
// CHECK:               vector.fma {{.+}} : vector<16x16xf32>
// CHECK-COUNT-30:    vector.shuffle
// CHECK:             vector.transfer_write {{.+}} : vector<1x16xf32>, tensor<1x64xf32>
// CHECK:           scf.forall.in_parallel
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @decode_linear(%x: tensor<1x256xf32>, %w: tensor<512x256xf32>) -> tensor<1x512xf32> {
  %e = tensor.empty() : tensor<256x512xf32>
  %wt = linalg.transpose ins(%w : tensor<512x256xf32>) outs(%e : tensor<256x512xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x512xf32>) -> tensor<1x512xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x256xf32>, tensor<256x512xf32>) outs(%f : tensor<1x512xf32>) -> tensor<1x512xf32>
  return %r : tensor<1x512xf32>
}

// -----

// Rows that 8 chunks of whole 16-row blocks do not divide (576 = 8 × 72)
// still go over the cores: chunks of 72 rows (whole blocks of the host's
// rows), each in lane-sum blocks of 8 rows of W.
// CHECK-LABEL: func.func @decode_linear_uneven_chunks
// CHECK:         scf.forall (%{{.+}}) = (0) to (576) step (72)
// CHECK:           scf.for {{.+}} step %c8
// CHECK:             scf.for {{.+}} -> ({{.*}}vector<8x16xf32>)
// CHECK:               vector.fma {{.+}} : vector<8x16xf32>
// CHECK:           scf.forall.in_parallel
func.func @decode_linear_uneven_chunks(%x: tensor<1x256xf32>, %w: tensor<576x256xf32>) -> tensor<1x576xf32> {
  %e = tensor.empty() : tensor<256x576xf32>
  %wt = linalg.transpose ins(%w : tensor<576x256xf32>) outs(%e : tensor<256x576xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x576xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x576xf32>) -> tensor<1x576xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x256xf32>, tensor<256x576xf32>) outs(%f : tensor<1x576xf32>) -> tensor<1x576xf32>
  return %r : tensor<1x576xf32>
}

// -----

// The same decode linear layer on a bf16 model: the weight is read as stored,
// 16 bf16 lanes at a time, widened exactly in registers (arith.extf), and
// accumulated in f32; no pack converts the whole weight on every call.
// CHECK-LABEL: func.func @decode_linear_bf16
// CHECK-SAME:    (%[[X:.+]]: tensor<1x256xbf16>, %[[W:.+]]: tensor<512x256xbf16>)
// CHECK-NOT:     linalg.transpose
// CHECK:         scf.forall
// CHECK:           tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [64, 16, 16] : tensor<64x256xbf16> into tensor<64x16x16xbf16>
// CHECK:           scf.for {{.+}} -> ({{.*}}vector<16x16xf32>)
// CHECK:             vector.transfer_read {{.+}} : tensor<64x16x16xbf16>, vector<16x16xbf16>
// CHECK:             arith.extf {{.+}} : vector<16x16xbf16> to vector<16x16xf32>
// CHECK:             vector.fma {{.+}} : vector<16x16xf32>
// CHECK-NOT:     linalg.generic {{.+}} ins(%{{.+}} : tensor<512x256xbf16>)
func.func @decode_linear_bf16(%x: tensor<1x256xbf16>, %w: tensor<512x256xbf16>) -> tensor<1x512xf32> {
  %e = tensor.empty() : tensor<256x512xbf16>
  %wt = linalg.transpose ins(%w : tensor<512x256xbf16>) outs(%e : tensor<256x512xbf16>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x512xf32>) -> tensor<1x512xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x256xbf16>, tensor<256x512xbf16>) outs(%f : tensor<1x512xf32>) -> tensor<1x512xf32>
  return %r : tensor<1x512xf32>
}

// -----

// The scores' elementwise consumer (the logits: scale, causal rule on the
// positions) is computed per register block, on the accumulator as it
// leaves the reduction loop, into its own result; the zero fill of the
// accumulator becomes the loop's initial vector. No pass over the scores
// tile is left, and the K pack stays outside the blocks (done once).
// CHECK-LABEL: func.func @score_epilogue
// CHECK:         %[[KT:.+]] = scf.for {{.+}} -> (tensor<128x64xf32>)
// CHECK:         scf.for %{{.+}} = %c0 to %c64 step %c4 {{.+}} -> (tensor<64x64xf32>)
// CHECK:           scf.for %{{.+}} = %c0 to %c64 step %c16 {{.+}} -> (tensor<64x64xf32>)
// CHECK:             %[[S:.+]]:2 = scf.for %{{.+}} = %c0 to %c128 step %c1 iter_args({{.*}}%{{.+}} = %cst{{.*}}) -> ({{.*}}vector<4x16xf32>)
// CHECK-COUNT-4:       vector.fma
// CHECK:             %[[SCALED:.+]] = arith.mulf %[[S]]#1, %{{.+}} : vector<4x16xf32>
// CHECK:             %[[VISIBLE:.+]] = arith.cmpi sle, %{{.+}}, %{{.+}} : vector<4x16xi64>
// CHECK:             %[[L:.+]] = arith.select %[[VISIBLE]], %[[SCALED]], %{{.+}} : vector<4x16xi1>, vector<4x16xf32>
// CHECK:             vector.transfer_write %[[L]], %{{.+}} : vector<4x16xf32>, tensor<64x64xf32>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     linalg.fill
func.func @score_epilogue(%q: tensor<64x128xf32>, %k: tensor<64x128xf32>,
                          %qp: tensor<64xi64>, %kp: tensor<64xi64>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.0883883461 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = linalg.generic {
      indexing_maps = [affine_map<(i, j, d) -> (i, d)>,
                       affine_map<(i, j, d) -> (j, d)>,
                       affine_map<(i, j, d) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<64x128xf32>, tensor<64x128xf32>) outs(%init : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x64xf32>
  %l = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                       affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%s, %qp, %kp : tensor<64x64xf32>, tensor<64xi64>, tensor<64xi64>)
      outs(%e2 : tensor<64x64xf32>) {
  ^bb0(%x: f32, %i: i64, %j: i64, %out: f32):
    %scaled = arith.mulf %x, %scale : f32
    %visible = arith.cmpi sle, %j, %i : i64
    %r = arith.select %visible, %scaled, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  return %l : tensor<64x64xf32>
}

// -----

// The online softmax's rescaling of the output tile (acc · c per row), the
// elementwise producer of P·V's accumulator, happens per register block as
// the block's accumulator is loaded: no separate pass over the tile.
// CHECK-LABEL: func.func @accumulator_prologue
// CHECK:         scf.for %{{.+}} = %c0 to %c8 step %c4 {{.+}} -> (tensor<8x32xf32>)
// CHECK:           scf.for %{{.+}} = %c0 to %c32 step %c16 {{.+}} -> (tensor<8x32xf32>)
// CHECK:             %[[OLD:.+]] = vector.transfer_read %{{.+}} : tensor<8x32xf32>, vector<4x16xf32>
// CHECK:             %[[SCALED:.+]] = arith.mulf %[[OLD]], %{{.+}} : vector<4x16xf32>
// CHECK:             %[[ACC:.+]]:2 = scf.for %{{.+}} = %c0 to %c16 step %c1 iter_args({{.*}}%{{.+}} = %[[SCALED]]) -> ({{.*}}vector<4x16xf32>)
// CHECK-COUNT-4:       vector.fma
// CHECK:             vector.transfer_write %[[ACC]]#1, %{{.+}} : vector<4x16xf32>, tensor<{{.+}}>
// CHECK-NOT:     linalg.generic
func.func @accumulator_prologue(%p: tensor<8x16xf32>, %v: tensor<16x32xf32>,
                                %c: tensor<8xf32>, %acc: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %scaled = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<8xf32>) outs(%acc : tensor<8x32xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = arith.mulf %out, %x : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                       affine_map<(i, j, k) -> (k, j)>,
                       affine_map<(i, j, k) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<8x16xf32>, tensor<16x32xf32>) outs(%scaled : tensor<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// ALiBi's |i − j| in the fused logits is math on a block's rows, one row at
// a time (a 1-D vector each: LLVM's lowering of math.absi takes no other).
// An i1 mask would be read as a vector of bits, where memory holds a byte
// per element: such a consumer stays a generic of its own.
// CHECK-LABEL: func.func @alibi_epilogue
// CHECK-COUNT-4: math.absi %{{.+}} : vector<16xi64>
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @bool_mask_not_fused
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<8x32xf32>, tensor<8x32xi1>)
func.func @alibi_epilogue(%q: tensor<8x16xf32>, %k: tensor<32x16xf32>,
                          %qp: tensor<8xi64>, %kp: tensor<32xi64>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %slope = arith.constant -0.5 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %s = linalg.generic {
      indexing_maps = [affine_map<(i, j, d) -> (i, d)>,
                       affine_map<(i, j, d) -> (j, d)>,
                       affine_map<(i, j, d) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<8x16xf32>, tensor<32x16xf32>) outs(%init : tensor<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %l = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                       affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%s, %qp, %kp : tensor<8x32xf32>, tensor<8xi64>, tensor<32xi64>)
      outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%x: f32, %i: i64, %j: i64, %out: f32):
    %d = arith.subi %i, %j : i64
    %ad = math.absi %d : i64
    %df = arith.sitofp %ad : i64 to f32
    %b = arith.mulf %df, %slope : f32
    %r = arith.addf %x, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  return %l : tensor<8x32xf32>
}

func.func @bool_mask_not_fused(%q: tensor<8x16xf32>, %k: tensor<32x16xf32>,
                               %mask: tensor<8x32xi1>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %s = linalg.generic {
      indexing_maps = [affine_map<(i, j, d) -> (i, d)>,
                       affine_map<(i, j, d) -> (j, d)>,
                       affine_map<(i, j, d) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<8x16xf32>, tensor<32x16xf32>) outs(%init : tensor<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %l = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<8x32xf32>, tensor<8x32xi1>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%x: f32, %keep: i1, %out: f32):
    %r = arith.select %keep, %x, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  return %l : tensor<8x32xf32>
}

// -----

// Lane sums: a decode tile's scores with K's pairs rotated inside the
// reduction (not a plain contraction). Every input is read along its
// innermost dim (pair members sliced off their pair views), split into
// steps of 16 lanes; blocks of 4 query rows (which K does not read) × 4
// keys, 16 accumulators carried in registers through the steps, the
// rotation computed on K's vectors and the two products fused into FMAs;
// then each block's lanes added up by a butterfly of shuffles and
// whole-vector adds, not one reduction per output.
// CHECK-LABEL: func.func @rotating_scores
// CHECK-DAG:     tensor.expand_shape {{.+}} : tensor<1x2x64x32xf16> into tensor<1x2x64x2x16xf16>
// CHECK-DAG:     tensor.expand_shape {{.+}} : tensor<64x32xf32> into tensor<64x2x16xf32>
// CHECK:         scf.for {{.+}} step %c1
// CHECK:           scf.for {{.+}} step %c4
// CHECK:             scf.for {{.+}} -> ({{.*}}vector<4x4x16xf32>)
// CHECK:               arith.extf {{.+}} : vector<4x4x16xf16> to vector<4x4x16xf32>
// CHECK:               arith.subf {{.+}} : vector<4x4x16xf32>
// CHECK:               vector.fma {{.+}} : vector<4x4x16xf32>
// CHECK-NEXT:          vector.fma {{.+}} : vector<4x4x16xf32>
// CHECK:             vector.shuffle
// CHECK:             arith.addf {{.+}} : vector<16xf32>
// CHECK-NOT:     vector.multi_reduction
// CHECK:         return
#q0 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, 0, d5)>
#q1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, 1, d5)>
#k0 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, 0, d5)>
#k1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, 1, d5)>
#table = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#scores = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
func.func @rotating_scores(%q: tensor<1x2x4x1x2x32xf32>, %k: tensor<1x2x64x2x32xf16>, %cos: tensor<64x32xf32>, %sin: tensor<64x32xf32>, %init: tensor<1x2x4x1x64xf32>) -> tensor<1x2x4x1x64xf32> {
  %s = linalg.generic {indexing_maps = [#q0, #q1, #k0, #k1, #table, #table, #scores], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %q, %k, %k, %cos, %sin : tensor<1x2x4x1x2x32xf32>, tensor<1x2x4x1x2x32xf32>, tensor<1x2x64x2x32xf16>, tensor<1x2x64x2x32xf16>, tensor<64x32xf32>, tensor<64x32xf32>) outs(%init : tensor<1x2x4x1x64xf32>) {
  ^bb0(%qa: f32, %qb: f32, %ka: f16, %kb: f16, %c: f32, %sn: f32, %acc: f32):
    %a = arith.extf %ka : f16 to f32
    %b = arith.extf %kb : f16 to f32
    %ac = arith.mulf %a, %c : f32
    %bs = arith.mulf %b, %sn : f32
    %r0 = arith.subf %ac, %bs : f32
    %bc = arith.mulf %b, %c : f32
    %as = arith.mulf %a, %sn : f32
    %r1 = arith.addf %bc, %as : f32
    %p0 = arith.mulf %qa, %r0 fastmath<reassoc,contract> : f32
    %p1 = arith.mulf %qb, %r1 fastmath<reassoc,contract> : f32
    %p = arith.addf %p0, %p1 fastmath<reassoc,contract> : f32
    %sum = arith.addf %acc, %p fastmath<reassoc,contract> : f32
    linalg.yield %sum : f32
  } -> tensor<1x2x4x1x64xf32>
  return %s : tensor<1x2x4x1x64xf32>
}

// -----

// A decode tile's P·V over an f16 cache: its rows (4 query heads of a kv
// head) fit one register block, so each element of V is loaded once and V
// already has the columns innermost: it is read as stored and widened in
// registers, with no f32 copy of the tile.
// CHECK-LABEL: func.func @decode_probs_times_values
// CHECK-NOT:     tensor.empty() : tensor<1x2x64x32xf32>
// CHECK:         scf.for
// CHECK:           vector.transfer_read %{{.+}} : tensor<1x2x64x32xf16>, vector<1x16xf16>
// CHECK-NEXT:      arith.extf {{.+}} : vector<1x16xf16> to vector<1x16xf32>
// CHECK:           vector.fma
#p = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
#v = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
func.func @decode_probs_times_values(%p: tensor<1x2x4x1x64xf32>, %v: tensor<1x2x64x32xf16>, %acc: tensor<1x2x4x1x32xf32>) -> tensor<1x2x4x1x32xf32> {
  %r = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x1x64xf32>, tensor<1x2x64x32xf16>) outs(%acc : tensor<1x2x4x1x32xf32>) {
  ^bb0(%a: f32, %b: f16, %c: f32):
    %w = arith.extf %b : f16 to f32
    %m = arith.mulf %a, %w fastmath<reassoc,contract> : f32
    %s = arith.addf %c, %m fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x1x32xf32>
  return %r : tensor<1x2x4x1x32xf32>
}

// -----

// An empty reduction (attention with D = 0 gives one): nothing to block,
// left to the plain loop lowering instead of crashing in upstream tiling.
// CHECK-LABEL: func.func @empty_reduction_left_alone
// CHECK-NOT: vector.contract
// CHECK: linalg.matmul
func.func @empty_reduction_left_alone(%a: tensor<16x0xf32>, %b: tensor<0x32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<16x0xf32>, tensor<0x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// The module `python3 -m rope_mlir.hf` generates for each bundled config
// parses and verifies in rope-opt. It also prints and parses again: the
// second rope-opt reads the first one's output. The printed spec keeps every
// value: rope-opt prints %e with 6 digits when that round-trips (0.707 ->
// 7.070000e-01), else 17 significant digits (3.049999999999997 ->
// 3.0499999999999972). hf_roundtrip_exact.py compares every number exactly.

// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/llama31_8b.json | rope-opt | rope-opt | FileCheck %s --check-prefix=LLAMA31
// LLAMA31-LABEL: func.func @attention_layer(
// LLAMA31-SAME: tensor<1x32x?x128xf32>, %{{.*}}: tensor<1x8x?x128xf32>, %{{.*}}: tensor<1x8x?x128xf32>, %{{.*}}: tensor<?xi64>) -> tensor<1x32x?x128xf32>
// LLAMA31: rope.attention %{{.*}} positions(%[[P:.*]], %[[P]] : tensor<?xi64>, tensor<?xi64>)
// LLAMA31-SAME: rotary(#rope.spec<base = 5.000000e+05, scaling = #rope.llama3<factor = 8.000000e+00, original_max_position_embeddings = 8192>>) causal :

// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/qwen25_7b_instruct_yarn.json | rope-opt | rope-opt | FileCheck %s --check-prefix=QWEN
// QWEN-LABEL: func.func @attention_layer(
// QWEN-SAME: tensor<1x28x?x128xf32>, %{{.*}}: tensor<1x4x?x128xf32>
// QWEN: rotary(#rope.spec<base = 1.000000e+06, scaling = #rope.yarn<factor = 4.000000e+00, original_max_position_embeddings = 32768>>) causal :

// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/phi3_mini_128k_instruct.json | rope-opt | rope-opt | FileCheck %s --check-prefix=PHI3
// PHI3-LABEL: func.func @attention_layer(
// PHI3-SAME: tensor<1x32x?x96xf32>, %{{.*}}: tensor<1x32x?x96xf32>
// PHI3: rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.100000e+00, 1.100000e+00, 1.100000e+00, 1.3000000000000003, {{.*}}, 2.0000000000000009, {{.*}}, 2.8999999999999977, 3.0499999999999972],
// PHI3-SAME: long_factor = [1.0700000524520874, 1.1200000047683716, {{.*}}, 64.69000244140625, 64.760002136230469], factor = 3.200000e+01, original_max_position_embeddings = 4096>>) causal :

// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/gpt_neox_20b.json | rope-opt | rope-opt | FileCheck %s --check-prefix=NEOX
// NEOX-LABEL: func.func @attention_layer(
// NEOX-SAME: tensor<1x64x?x96xf32>
// NEOX: rotary(#rope.spec<dims = 24>) causal :

// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/gptj_6b.json | rope-opt | rope-opt | FileCheck %s --check-prefix=GPTJ
// GPTJ-LABEL: func.func @attention_layer(
// GPTJ-SAME: tensor<1x16x?x256xf32>
// GPTJ: rotary(#rope.spec<dims = 64, layout = interleaved>) causal :

// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/deepseek_v2_lite.json | rope-opt | rope-opt | FileCheck %s --check-prefix=DSV2
// DSV2-LABEL: func.func @attention_layer(
// DSV2-SAME: tensor<1x16x?x192xf32>, %{{.*}}: tensor<1x16x?x192xf32>, %{{.*}}: tensor<1x16x?x128xf32>, %{{.*}}: tensor<?xi64>) -> tensor<1x16x?x128xf32>
// DSV2: rotary(#rope.spec<dims = 64, offset = 128, layout = interleaved, scaling = #rope.yarn<factor = 4.000000e+01, original_max_position_embeddings = 4096, mscale = 7.070000e-01, mscale_all_dim = 7.070000e-01>>) causal scale = 0.1147213867929

// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/codellama_7b.json | rope-opt | rope-opt | FileCheck %s --check-prefix=CODELLAMA
// CODELLAMA-LABEL: func.func @attention_layer(
// CODELLAMA-SAME: tensor<1x32x?x128xf32>, %{{.*}}: tensor<1x32x?x128xf32>
// CODELLAMA: rotary(#rope.spec<base = 1.000000e+06>) causal :

// A static sequence length, and --spec alone (what the CLI prints, before rope-opt:
// the dialect's own printing, through the C API).
// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/gptj_6b.json --seq-len 8 | rope-opt | FileCheck %s --check-prefix=STATIC
// STATIC: func.func @attention_layer(%{{.*}}: tensor<1x16x8x256xf32>, %{{.*}}: tensor<1x16x8x256xf32>, %{{.*}}: tensor<1x16x8x256xf32>, %{{.*}}: tensor<8xi64>) -> tensor<1x16x8x256xf32>
// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/deepseek_v2_lite.json --spec | FileCheck %s --check-prefix=SPEC
// SPEC: {{^}}#rope.spec<dims = 64, offset = 128, layout = interleaved, scaling = #rope.yarn<factor = 4.000000e+01, original_max_position_embeddings = 4096, mscale = 7.070000e-01, mscale_all_dim = 7.070000e-01>>{{$}}

// Legacy yarn (transformers 4.50-4.55) turns the Qwen2.5 model-card snippet into factor 1.
// RUN: %python -m rope_mlir.hf %rope_src_root/examples/configs/qwen25_7b_instruct_yarn.json --spec --legacy-yarn-factor | FileCheck %s --check-prefix=LEGACY
// LEGACY: #rope.yarn<factor = 1.000000e+00, original_max_position_embeddings = 32768>

// Unsupported configs fail with a message and exit status 1.
// RUN: echo '{"model_type": "qwen2_vl", "hidden_size": 64, "num_attention_heads": 2, "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}}' > %t.json
// RUN: %python -m rope_mlir.hf %t.json > %t.out 2>&1 || echo "exit status $?" >> %t.out
// RUN: FileCheck %s --check-prefix=ERR < %t.out
// ERR: error: {{.*}}.json: multimodal RoPE (mrope_section, e.g. Qwen2-VL) is not supported
// ERR-NEXT: exit status 1

// The bounded libFuzzer run of `make check-sanitize` (docs/reliability.md;
// rope-fuzz is built in the sanitizer tree only). rope-fuzz parses each
// input, verifies it, checks that it round-trips (custom and generic form)
// and runs every rope pass and pipeline on it, on mutations of a seed
// corpus: a fixed sample of 40 of the .mlir chunks of test/ and examples/
// (split at `// -----`), every input in test/fuzz/inputs/, and 5 functions
// of the random differential test. The run lasts %fuzz_seconds seconds in all
// (ROPE_FUZZ_SECONDS, default 60) from a fixed seed, but libFuzzer first runs
// every seed through every pipeline whatever the limit: the sample keeps that
// first pass to about half of it (about 0.6 s of CPU a seed in this build),
// so the rest is fuzzing (`make fuzz` takes the whole corpus).
// Any crash, sanitizer report, assertion in our code or round-trip mismatch
// fails it, shows the report and leaves the input in %t/ (crash-*; reproduce
// with `rope-fuzz FILE` or `rope-opt`). `lit -a` shows the figures (runs,
// coverage, corpus size) of a passing run.
//
// REQUIRES: fuzzer
// RUN: rm -rf %t && mkdir -p %t/corpus
// RUN: %python %rope_src_root/tools/rope-fuzz/make-corpus.py --max-seeds 40 %t/seeds %rope_src_root/test %rope_src_root/examples
// RUN: %python %rope_src_root/test/Integration/CPU/differential_random.py --emit-seeds %t/seeds --cases 5
// RUN: %rope_fuzz %t/corpus %t/seeds -dict=%rope_src_root/tools/rope-fuzz/rope.dict \
// RUN:   -seed=1 -max_total_time=%fuzz_seconds -max_len=4096 -timeout=30 -rss_limit_mb=4096 \
// RUN:   -print_final_stats=1 -artifact_prefix=%t/ 2>&1 | tee %t/fuzz.log | tail -n 80
// RUN: FileCheck %s < %t/fuzz.log

// CHECK: INITED cov:
// CHECK: Done {{[0-9]+}} runs in {{[0-9]+}} second(s)
// CHECK: stat::number_of_executed_units:

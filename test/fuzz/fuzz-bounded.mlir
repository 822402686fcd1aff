// The bounded libFuzzer run of `make check` (docs/reliability.md). rope-fuzz
// parses each input, verifies it, checks that it round-trips (custom and
// generic form) and runs every rope pass and pipeline on it, on mutations of
// a seed corpus: every .mlir file of test/ and examples/ split at `// -----`,
// the inputs in test/fuzz/inputs/, and 30 functions of the random
// differential test. It runs for %fuzz_seconds seconds (ROPE_FUZZ_SECONDS,
// default 60) from a fixed seed; any crash, sanitizer report, assertion in
// our code or round-trip mismatch fails it, shows the report and leaves the
// input in %t/ (crash-*; reproduce with `rope-fuzz FILE` or `rope-opt`).
// `lit -a` shows the figures (runs, coverage, corpus size) of a passing run.
//
// REQUIRES: fuzzer
// RUN: rm -rf %t && mkdir -p %t/corpus
// RUN: %python %rope_src_root/tools/rope-fuzz/make-corpus.py %t/seeds %rope_src_root/test %rope_src_root/examples
// RUN: %python %rope_src_root/test/Integration/CPU/differential_random.py --emit-seeds %t/seeds --cases 30
// RUN: %rope_fuzz %t/corpus %t/seeds -dict=%rope_src_root/tools/rope-fuzz/rope.dict \
// RUN:   -seed=1 -max_total_time=%fuzz_seconds -max_len=4096 -timeout=30 -rss_limit_mb=4096 \
// RUN:   -print_final_stats=1 -artifact_prefix=%t/ 2>&1 | tee %t/fuzz.log | tail -n 80
// RUN: FileCheck %s < %t/fuzz.log

// CHECK: INITED cov:
// CHECK: Done {{[0-9]+}} runs in {{[0-9]+}} second(s)
// CHECK: stat::number_of_executed_units:

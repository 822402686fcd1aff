// Inputs that once made rope-fuzz fail (docs/reliability.md lists each with
// its cause and fix) stay in test/fuzz/inputs/; rope-fuzz runs each once and
// must survive all of them, each within two minutes (a hang fails here, not
// at the suite's limit). They are fuzzing seeds as well.
//
// REQUIRES: fuzzer
// RUN: %rope_fuzz -runs=0 -timeout=120 %S/inputs 2>&1 | FileCheck %s

// CHECK: INITED
// CHECK: DONE

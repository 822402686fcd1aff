// The committed reference pages in docs/ match what ODS generates now
// (refresh with `cmake --build build --target rope-docs`).
// RUN: diff -u %rope_src_root/docs/Dialects/RopeDialect.md %rope_obj_root/docs/Dialects/RopeDialect.md
// RUN: diff -u %rope_src_root/docs/Passes/RopeCodegenCPU.md %rope_obj_root/docs/Passes/RopeCodegenCPU.md
// RUN: diff -u %rope_src_root/docs/Passes/RopeCodegenCommon.md %rope_obj_root/docs/Passes/RopeCodegenCommon.md
// RUN: diff -u %rope_src_root/docs/Passes/RopeCodegenGPU.md %rope_obj_root/docs/Passes/RopeCodegenGPU.md
// RUN: diff -u %rope_src_root/docs/Passes/RopeConversion.md %rope_obj_root/docs/Passes/RopeConversion.md
// RUN: diff -u %rope_src_root/docs/Passes/RopeTransforms.md %rope_obj_root/docs/Passes/RopeTransforms.md

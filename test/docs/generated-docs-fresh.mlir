// The committed reference pages in docs/ are exactly what ODS generates now:
// the same pages (none missing, none left over) with the same text (refresh
// with `cmake --build build --target rope-docs`).
// RUN: diff -ru %rope_src_root/docs/Dialects %rope_obj_root/docs/Dialects
// RUN: diff -ru %rope_src_root/docs/Passes %rope_obj_root/docs/Passes

# The layers of rope-mlir and which layers each may build on. One table, read
# by CMake (rope_add_library rejects a dependency the table does not allow, at
# configure time) and by utils/check_layering.py (the same rule for #include
# lines, and no cycle; test/Layering). A layer may always use itself.
#
#   rope_layer(<layer> [USES <layer>...])     lowest layers first
#
# The folders of each layer: include/rope/<layer> and lib/<layer> (Dialect:
# the dialect's IR and its own transforms; CAPI also include/rope-c),
# test/lib is Test, tools/ is Tools.
rope_layer(Dialect)
rope_layer(Analysis)
rope_layer(Raising USES Dialect Analysis)
rope_layer(Fusion USES Dialect Analysis)
rope_layer(Conversion USES Dialect)
rope_layer(Codegen USES Dialect)
rope_layer(Pipelines USES Dialect Fusion Conversion Codegen)
rope_layer(Registration USES Dialect Analysis Raising Fusion Conversion Codegen Pipelines)
rope_layer(CAPI USES Dialect Registration)
rope_layer(Plugin USES Registration)
rope_layer(Runtime)
rope_layer(Test USES Dialect Analysis Raising Fusion Conversion Codegen Pipelines Registration CAPI)
rope_layer(Tools USES Dialect Registration Test)

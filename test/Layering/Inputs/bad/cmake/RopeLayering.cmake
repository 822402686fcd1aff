# A small layer table for the negative test of utils/check_layering.py.
rope_layer(Dialect)
rope_layer(Analysis)
rope_layer(Raising USES Dialect Analysis Codegen)

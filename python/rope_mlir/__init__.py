"""rope-mlir Python package: tooling and the float64 numpy reference for rotary position embeddings."""

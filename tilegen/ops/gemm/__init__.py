"""The gemm op (op.yaml declares it)."""

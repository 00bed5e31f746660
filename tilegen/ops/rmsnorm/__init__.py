"""The rmsnorm op (op.yaml declares it)."""

"""The linear op (op.yaml declares it)."""

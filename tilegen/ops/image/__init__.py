"""The image op (op.yaml declares it)."""

"""The attention op (op.yaml declares it)."""

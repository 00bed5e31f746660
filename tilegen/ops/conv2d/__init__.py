"""The conv2d op (op.yaml declares it)."""

"""The paged_attention op (op.yaml declares it)."""

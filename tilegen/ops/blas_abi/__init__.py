"""The BLAS/CBLAS ABI op: C only (see op.yaml)."""

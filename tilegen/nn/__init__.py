"""Neural-network ops on tilegen's kernels: 2-D convolution (conv.py)."""

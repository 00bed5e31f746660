"""GEMM: tilegen.matmul and numpy.matmul side by side over the `tilegen bench` case list
(float32 small whole calls and squares with out=, skinny M/N/K=16, GEMV x@A and A@x, float64).

    pytest benchmarks/ --benchmark-only [--benchmark-columns=min,median,ops] [--bench-threads 2]
"""


def test_gemm(bench_call, case, lib):
    bench_call(case, lib)

"""The BLAS update y <- a x + y of contiguous vectors (?axpy).

i runs along the SIMD lanes, NR values (NR/lanes vectors) per step; the tile is 1xNR. The
remainder takes masked loads and stores where the ISA has masks, else a scalar loop. The shape
rules, plan, dispatch rows and tester coverage are blasdot's.
"""
from __future__ import annotations

from tilegen.dsl.family import RegisterBudget
from tilegen.dsl.isa import DTYPES, get_isa

from tilegen.ops.blas_abi.blasdot import Blasdot


class Blasaxpy(Blasdot):
    name = "blasaxpy"
    template = "blasaxpy/ukernel.c.j2"
    types_template = "blasaxpy/types.h.j2"
    c_select = None  # blas_dispatch.c selects it with the blasdot kernels
    what = "update one vector"

    def python_call(self, spec, kernel):
        """y <- a * x + y in place, one kernel call."""
        import ctypes

        from tilegen.dsl import jit

        t = spec.dtype
        ct = jit.CTYPES[t]
        fn = kernel.function(None, ctypes.c_int64, ct, ctypes.c_void_p, ctypes.c_void_p)

        def call(a, x, y):
            x = jit.check_array("x", x, t, 1)
            y = jit.check_array("y", y, t, 1, shape=x.shape, writable=True)
            fn(x.shape[0], a, x.ctypes.data, y.ctypes.data)
            return y

        call.__doc__ = (f"{spec.name}: BLAS axpy, y <- a * x + y for a scalar a and x, y (n,) "
                        f"(contiguous); y is updated in place and returned")
        return call

    def python_example(self, spec, dims, rng):
        import numpy as np

        from tilegen.dsl import jit

        (n,) = dims
        nt = jit.NP_DTYPES[spec.dtype]
        x, y = (rng.standard_normal(n).astype(nt) for _ in range(2))
        eps = float(np.finfo(nt).eps)
        # Each run updates y again: the check is of one call on a fresh y (the bench copies it).
        return jit.Example(args=(1.5, x, y), kwargs={}, expected=(1.5 * x.astype(np.float64) + y)
                           .astype(nt), work=3.0 * x.nbytes, unit="byte", shape=f"{n}",
                           rtol=4 * eps, atol=4 * eps)

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        nv = spec.nr // isa.lanes(spec.dtype)
        # The y vectors of one step, their x vectors, and the broadcast a.
        return RegisterBudget(nv, nv, 1, isa.num_vregs, input_name="x", broadcast_name="a")

    def budget_rule(self, spec) -> str:
        return "2 * NR/lanes + 1"

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        return f"void {spec.name}(int64_t, {t}, const {t}*, {t}*);"


FAMILY = Blasaxpy()

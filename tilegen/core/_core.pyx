# cython: language_level=3
"""Bindings to libtilegen's core: initialisation, what the dispatcher detected and chose, the
thread pool, the FMA probe and the test hooks. Each op binds its own functions (tilegen/ops/<op>/).
"""
cimport numpy as cnp
from libc.stdint cimport int64_t, uint32_t, uint64_t, intptr_t

import numpy as np

cnp.import_array()

cdef extern from "tilegen.h" nogil:
    int tilegen_init()
    const char* tilegen_init_error()
    void tilegen_set_num_threads(int n)
    int tilegen_get_num_threads()
    const char* tilegen_isa_name()

cdef extern from "dispatch.h" nogil:
    uint32_t tilegen_x_features_reported()
    uint32_t tilegen_x_features_usable()
    int tilegen_x_feature_count()
    const char* tilegen_x_feature_name(int bit)
    int tilegen_x_isa_count()
    const char* tilegen_x_isa_name_of(int isa)
    int tilegen_x_isa_usable(int isa)
    const char* tilegen_x_isa_cap()
    int tilegen_x_reinit(int fake, uint32_t usable)
    const char* tilegen_x_caches(int64_t* l1d, int64_t* l2, int64_t* l3)
    const char* tilegen_x_env_warnings(int on_stderr)
    int tilegen_x_fma_probe(int isa, int dtype, int64_t iters, double* flops)
    const char* tilegen_x_probe_dtype(int i)
    int tilegen_x_choice_count()
    int tilegen_x_choice(int i, const char** op, const char** part, const char** dtype,
                         const char** isa, const char** kernel)

cdef extern from "tg_threads.h" nogil:
    uint64_t tilegen_x_worker_tasks()

cdef extern from "tg_workspace.h" nogil:
    void tilegen_x_workspace_fail(int on)

tilegen_x_env_warnings(0)  # malformed TILEGEN_* values: Python warnings (env_warnings), not stderr
if tilegen_init() != 0:
    raise ImportError("tilegen: " + tilegen_init_error().decode())

# Activation codes of tilegen.h (tilegen_activation).
ACTIVATIONS = {None: 0, "relu": 1, "relu6": 2, "gelu": 3, "silu": 4}

cdef int NPY_F32 = cnp.NPY_FLOAT32
cdef int NPY_F64 = cnp.NPY_FLOAT64


# ---------------------------------------------------------------- introspection / control

cdef object _s(const char* p):
    return None if p == NULL else p.decode()


def features():
    """(reported, usable): CPU feature names the CPU advertises / that the OS also enables."""
    cdef uint32_t rep = tilegen_x_features_reported(), use = tilegen_x_features_usable()
    names = [_s(tilegen_x_feature_name(i)) for i in range(tilegen_x_feature_count())]
    return ([n for i, n in enumerate(names) if rep >> i & 1],
            [n for i, n in enumerate(names) if use >> i & 1])


def caches():
    """This core's cache sizes in bytes (l3 0 when unknown) and where they were read."""
    cdef int64_t l1d = 0, l2 = 0, l3 = 0
    source = _s(tilegen_x_caches(&l1d, &l2, &l3))
    return {"l1d": l1d, "l2": l2, "l3": l3, "source": source}


def env_warnings():
    """The TILEGEN_*_SIZE values the core ignored or clamped at init, one message each."""
    return [line for line in _s(tilegen_x_env_warnings(-1)).splitlines() if line]


def isas():
    """Every ISA of the table with whether it is usable here (built, CPU and OS support it)."""
    return {_s(tilegen_x_isa_name_of(i)): bool(tilegen_x_isa_usable(i))
            for i in range(tilegen_x_isa_count())}


def isa_cap():
    return _s(tilegen_x_isa_cap())


def isa_in_use():
    """The best ISA in force (usable here, within the cap): where every op starts its choice."""
    return _s(tilegen_isa_name())


def choices():
    """What every op's dispatch chose: {op: {dtype: {"isa": ..., "kernel": ...}}}, with a
    kernel an op uses besides its main one under its part's name ({"depthwise": {...}})."""
    cdef const char* op = NULL
    cdef const char* part = NULL
    cdef const char* dt = NULL
    cdef const char* isa = NULL
    cdef const char* kernel = NULL
    out = {}
    for i in range(tilegen_x_choice_count()):
        if tilegen_x_choice(i, &op, &part, &dt, &isa, &kernel) == 0:
            row = out.setdefault(_s(op), {}).setdefault(_s(dt), {})
            if _s(part):
                row[_s(part)] = {"isa": _s(isa), "kernel": _s(kernel)}
            else:
                row.update(isa=_s(isa), kernel=_s(kernel))
    return out


def probe_dtypes():
    """The dtypes the throughput probe measures: float FMAs, then pair ("bf16") and four-way
    ("s8") dot products."""
    out, i = [], 0
    while tilegen_x_probe_dtype(i) != NULL:
        out.append(_s(tilegen_x_probe_dtype(i)))
        i += 1
    return tuple(out)


cdef int _dtype_index(dtype) except -1:
    """The probe's index of `dtype`: a name of probe_dtypes() or a NumPy dtype."""
    names = probe_dtypes()
    if isinstance(dtype, str) and dtype in names:
        return names.index(dtype)
    d = np.dtype(dtype)
    short = {"float32": "f32", "float64": "f64", "bfloat16": "bf16", "int8": "s8"}.get(d.name)
    if short not in names:
        raise TypeError(f"dtype: {d} has no probe; allowed: {', '.join(names)}")
    return names.index(short)


def fma_probe(str isa, dtype, int64_t iters):
    """Runs `isa`'s FMA-throughput probe (independent FMA chains in registers; for bfloat16,
    pair dot products) for `iters` iterations with the GIL released; returns the flops
    executed. Time it from the caller. ValueError when the ISA has no probe for the dtype."""
    cdef int d = _dtype_index(dtype), i, rc
    cdef double flops = 0
    names = [_s(tilegen_x_isa_name_of(j)) for j in range(tilegen_x_isa_count())]
    if isa not in names:
        raise ValueError(f"isa: {isa!r} is unknown; allowed: {', '.join(names)}")
    i = names.index(isa)
    with nogil:
        rc = tilegen_x_fma_probe(i, d, iters, &flops)
    if rc != 0:
        if isas()[isa]:
            raise ValueError(f"isa: {isa} has no {dtype} probe (no one-instruction dot product)")
        raise ValueError(f"isa: {isa} is not usable on this CPU")
    return flops


def _reinit(fake_features=None):
    """Test hook: re-run kernel selection as if the CPU had exactly `fake_features` (names)."""
    cdef uint32_t mask = 0
    names = [_s(tilegen_x_feature_name(i)) for i in range(tilegen_x_feature_count())]
    if fake_features is not None:
        for f in fake_features:
            if f not in names:
                raise ValueError(f"fake_features: unknown feature {f!r}; allowed: {names}")
            mask |= 1u << names.index(f)
    return tilegen_x_reinit(0 if fake_features is None else 1, mask)


def _worker_tasks():
    """Test hook: tasks worker threads (not callers) have run since load (proof of threading)."""
    return tilegen_x_worker_tasks()


def _workspace_fail(bint on):
    """Test hook: while on, the C core cannot get workspace memory (its fallbacks run)."""
    tilegen_x_workspace_fail(1 if on else 0)


MAX_THREADS = 256  # the pool's limit (core/threads.c TG_MAX_THREADS)


def set_num_threads(n):
    """Use n threads (1 <= n <= 256) from now on; None restores the default (TILEGEN_NUM_THREADS,
    else OMP_NUM_THREADS, else the CPUs this process may run on)."""
    if n is None:
        tilegen_set_num_threads(0)
        return
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"set_num_threads: n must be an int or None, got {type(n).__name__}")
    if not 1 <= n <= MAX_THREADS:
        raise ValueError(f"set_num_threads: n={n} is out of range; allowed: 1 to {MAX_THREADS}, "
                         "or None for the default")
    tilegen_set_num_threads(int(n))


def get_num_threads():
    return tilegen_get_num_threads()

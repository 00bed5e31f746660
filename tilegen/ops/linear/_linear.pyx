# cython: language_level=3, wraparound=True, boundscheck=True
"""The linear op's binding: a packed layer (tilegen_linear_*) and the kernel names in use.
api.py holds the checks and the NumPy-facing API."""
cimport numpy as cnp
from libc.stdint cimport int64_t

import numpy as np

cnp.import_array()

cdef extern from "tilegen.h" nogil:
    ctypedef struct tilegen_linear:
        pass
    int tilegen_linear_create(int quant, int64_t out_features, int64_t in_features,
                              const void* weight, const float* bias, int act,
                              tilegen_linear** out)
    int tilegen_linear_run(const tilegen_linear* layer, int64_t m, const float* x, int64_t ldx,
                           float* y, int64_t ldy)
    int64_t tilegen_linear_weight_bytes(const tilegen_linear* layer)
    void tilegen_linear_destroy(tilegen_linear* layer)

cdef extern from "tg_qgemv.h" nogil:
    const char* tilegen_x_qgemv_kernel(int format, int i)

from .formats import FORMATS


def kernels(fmt):
    """The qgemv kernels a stored format (formats.py) runs on, by rising MR."""
    cdef int index = FORMATS[fmt].kernel_format.index
    out = []
    cdef const char* p = tilegen_x_qgemv_kernel(index, 0)
    while p != NULL:
        out.append(p.decode())
        p = tilegen_x_qgemv_kernel(index, len(out))
    return out


cdef class PackedLayer:
    """A tilegen_linear: weights packed once (api.Linear checks the arguments)."""
    cdef tilegen_linear* layer
    cdef readonly int64_t out_features, in_features

    def __cinit__(self, int quant, int64_t out_features, int64_t in_features,
                  cnp.ndarray weight, bias, int act):
        cdef const float* pb = NULL
        cdef cnp.ndarray b
        if bias is not None:
            b = bias
            pb = <const float*> cnp.PyArray_DATA(b)
        cdef int rc = tilegen_linear_create(quant, out_features, in_features,
                                            cnp.PyArray_DATA(weight), pb, act, &self.layer)
        if rc == -100:
            raise MemoryError("tilegen_linear_create: out of memory")
        if rc != 0:  # api.Linear's checks make this unreachable
            raise ValueError(f"tilegen_linear_create: invalid argument {-rc}")
        self.out_features = out_features
        self.in_features = in_features

    def __dealloc__(self):
        tilegen_linear_destroy(self.layer)

    @property
    def weight_bytes(self):
        return tilegen_linear_weight_bytes(self.layer)

    def run(self, cnp.ndarray x, cnp.ndarray y):
        """y = the layer on x: C-contiguous float32 (m, in_features) and (m, out_features)."""
        cdef int64_t m = x.shape[0]
        cdef int rc
        cdef const float* px = <const float*> cnp.PyArray_DATA(x)
        cdef float* py = <float*> cnp.PyArray_DATA(y)
        with nogil:
            rc = tilegen_linear_run(self.layer, m, px, self.in_features, py, self.out_features)
        if rc == -100:
            raise MemoryError("tilegen_linear_run: out of memory")
        if rc != 0:
            raise ValueError(f"tilegen_linear_run: invalid argument {-rc}")
        return y

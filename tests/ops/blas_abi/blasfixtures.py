"""Fixtures of the BLAS ABI suites (imported by the test modules that use them)."""
import os
from pathlib import Path

import pytest

import cprog


@pytest.fixture(scope="module")
def tilegen_as_blas(tmp_path_factory) -> Path:
    """A folder where libblas.so.3 and libcblas.so.3 are symlinks to libtilegen: with it first
    in LD_LIBRARY_PATH, a program linked against the system BLAS runs on tilegen (the way
    Debian's alternatives install a BLAS)."""
    d = tmp_path_factory.mktemp("tilegen_blas")
    for name in ("libblas.so.3", "libcblas.so.3"):
        os.symlink(cprog.library(), d / name)
    return d

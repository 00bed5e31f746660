"""Where the installed package keeps what C users build against (no compiled code needed)."""
from __future__ import annotations

import os

_PKG = os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """The folder holding tilegen.h (and tilegen_cblas.h)."""
    return os.path.join(_PKG, "include")


def get_cmake_dir() -> str:
    """The folder of tilegenConfig.cmake: CMAKE_PREFIX_PATH or tilegen_DIR for
    find_package(tilegen), which gives the imported target tilegen::tilegen."""
    return os.path.join(_PKG, "lib", "cmake", "tilegen")


def get_pkgconfig_dir() -> str:
    """The folder of tilegen.pc, for PKG_CONFIG_PATH (`pkg-config --cflags --libs tilegen`)."""
    return os.path.join(_PKG, "lib", "pkgconfig")


def get_library() -> str:
    """The path of libtilegen.so.<major>, the shared library (BLAS/CBLAS ABI + tilegen_* API;
    no libpython): what LD_PRELOAD or dlopen take. Its folder also holds libtilegen.so, for
    linking with -ltilegen."""
    lib = os.path.join(_PKG, "lib")
    found = sorted(f for f in os.listdir(lib) if f.startswith("libtilegen.so.")) \
        if os.path.isdir(lib) else []
    return os.path.join(lib, found[0] if found else "libtilegen.so")

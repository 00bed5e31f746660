"""Builds libtilegen (the C core, no Python in it) and the Cython bindings that call it.

Each ISA's generated kernels are compiled with that ISA's flags only (the lists and flags come
from tilegen/generated/build_manifest.json, rendered from the registry and the ISA tables); the
baseline code (dispatch, drivers, threads, ABIs) gets no ISA flag, so the library loads on any
CPU of the architecture and only runs what the dispatcher has checked.
"""
import importlib.util
import json
import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join("tilegen", "generated", "build_manifest.json")
BASELINE_SOURCES = [
    "tilegen/dispatch/cpu_features.c",
    "tilegen/dispatch/dispatch.c",
    "tilegen/blas/gemm.c",
    "tilegen/blas/threads.c",
    "tilegen/blas/workspace.c",
    "tilegen/blas/blas_abi.c",
]
INCLUDE_DIRS = ["tilegen/include", "tilegen/generated", "tilegen/dispatch", "tilegen/blas"]
C_FLAGS = ["-std=gnu11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter"]
LIB_NAME = "tilegen"


def _isa_tables():
    """tilegen/dsl/isa.py on its own: importing the package would need the core being built."""
    spec = importlib.util.spec_from_file_location(
        "_tilegen_isa", os.path.join(ROOT, "tilegen", "dsl", "isa.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


class BuildExt(build_ext):
    """Links lib/libtilegen.so next to the package, then the extension against it."""

    def build_extensions(self):
        ext_dir = os.path.dirname(self.get_ext_fullpath("tilegen.blas._core"))
        lib_dir = os.path.join(os.path.dirname(ext_dir), "lib")
        os.makedirs(lib_dir, exist_ok=True)
        self._build_libtilegen(lib_dir)
        for ext in self.extensions:
            ext.library_dirs.append(lib_dir)
            ext.libraries.append(LIB_NAME)
            ext.extra_link_args.append("-Wl,-rpath,$ORIGIN/../lib")
        super().build_extensions()

    def copy_extensions_to_source(self):
        """--inplace: the library goes next to the package in the source tree too."""
        super().copy_extensions_to_source()
        built = os.path.join(self.build_lib, "tilegen", "lib", f"lib{LIB_NAME}.so")
        dest = os.path.join(ROOT, "tilegen", "lib")
        os.makedirs(dest, exist_ok=True)
        self.copy_file(built, os.path.join(dest, f"lib{LIB_NAME}.so"))

    def _build_libtilegen(self, lib_dir):
        with open(os.path.join(ROOT, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
        arch = _isa_tables().host_arch()
        groups = [("baseline", [], BASELINE_SOURCES)]
        for name, isa in sorted(manifest["isas"].items()):
            if isa["arch"] in (arch, "any") and isa["sources"]:
                groups.append((name, isa["cflags"], isa["sources"]))
        objects = []
        for name, cflags, sources in groups:
            objects += self.compiler.compile(
                sources,
                output_dir=os.path.join(self.build_temp, "libtilegen", name),
                include_dirs=INCLUDE_DIRS,
                extra_postargs=C_FLAGS + list(cflags),
                depends=[MANIFEST],
            )
        self.compiler.link_shared_object(
            objects,
            os.path.join(lib_dir, f"lib{LIB_NAME}.so"),
            libraries=["m", "pthread"],
            extra_postargs=[f"-Wl,-soname,lib{LIB_NAME}.so", "-Wl,--no-undefined", "-Wl,-z,now"],
        )


extensions = [
    Extension(
        "tilegen.blas._core",
        ["tilegen/blas/_core.pyx"],
        include_dirs=INCLUDE_DIRS + [numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O2"],
    )
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                             "cdivision": True, "embedsignature": True},
    ),
    cmdclass={"build_ext": BuildExt},
)

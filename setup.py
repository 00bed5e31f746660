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
# The C core built for the platform baseline: the op-agnostic dispatcher and runtime, then each
# op family's driver folder (blas/ for GEMM, nn/, image/...). Every .c file there is compiled,
# except what Cython generates from a .pyx beside it; adding a family needs no edit here.
CORE_DIRS = ["tilegen/dispatch", "tilegen/runtime"]
DRIVER_DIRS = ["tilegen/blas", "tilegen/nn", "tilegen/image"]


def _c_sources(folder):
    if not os.path.isdir(os.path.join(ROOT, folder)):
        return []
    names = sorted(os.listdir(os.path.join(ROOT, folder)))
    generated = {n[:-4] + ".c" for n in names if n.endswith(".pyx")}
    return [f"{folder}/{n}" for n in names if n.endswith(".c") and n not in generated]


def _pyx_modules():
    """Every Cython module of the package: tilegen/<folder>/<name>.pyx -> tilegen.<folder>.<name>."""
    found = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "tilegen")):
        for f in sorted(files):
            if f.endswith(".pyx"):
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT).replace(os.sep, "/")
                found.append((rel[:-4].replace("/", "."), rel))
    return sorted(found)


BASELINE_SOURCES = [src for d in CORE_DIRS + DRIVER_DIRS for src in _c_sources(d)]
INCLUDE_DIRS = ["tilegen/include", "tilegen/generated"] + CORE_DIRS + [
    d for d in DRIVER_DIRS if os.path.isdir(os.path.join(ROOT, d))]
C_FLAGS = ["-std=gnu11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter"]
LIB_NAME = "tilegen"


def _isa_tables():
    """tilegen/dsl/isa/base.py on its own: importing the package would need the core built."""
    spec = importlib.util.spec_from_file_location(
        "_tilegen_isa", os.path.join(ROOT, "tilegen", "dsl", "isa", "base.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


class BuildExt(build_ext):
    """Links lib/libtilegen.so next to the package, then the extension against it."""

    def build_extensions(self):
        lib_dir = os.path.join(self.build_lib, "tilegen", "lib")
        os.makedirs(lib_dir, exist_ok=True)
        self._build_libtilegen(lib_dir)
        for ext in self.extensions:
            # $ORIGIN is the extension's folder: reach tilegen/lib from wherever it sits.
            depth = ext.name.count(".") - 1
            ext.library_dirs.append(lib_dir)
            ext.libraries.append(LIB_NAME)
            ext.extra_link_args.append("-Wl,-rpath,$ORIGIN/" + "../" * depth + "lib")
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


def extensions():
    return [
        Extension(
            name,
            [source],
            include_dirs=INCLUDE_DIRS + [numpy.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            extra_compile_args=["-O2"],
        )
        for name, source in _pyx_modules()
    ]


# Run by pip / `python -m build` (setuptools executes this file as __main__); importing it
# (.ci/mutation_gate.py builds scratch copies of libtilegen from these lists) builds nothing.
if __name__ == "__main__":
    setup(
        ext_modules=cythonize(
            extensions(),
            compiler_directives={"language_level": "3", "boundscheck": False,
                                 "wraparound": False, "cdivision": True, "embedsignature": True},
        ),
        cmdclass={"build_ext": BuildExt},
    )

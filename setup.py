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
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join("tilegen", "generated", "build_manifest.json")
# The C core built for the platform baseline: the op-agnostic dispatcher and runtime, then every
# op's folder (tilegen/ops/<op>/, found by its op.yaml). Every .c file there is compiled, except
# what Cython generates from a .pyx beside it; adding an op needs no edit here.
CORE_DIRS = ["tilegen/core"]


def _load_by_path(name, *parts):
    """A module of the package on its own (importing the package would need the core built)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, *parts))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


OPS = _load_by_path("_tilegen_ops", "tilegen", "ops", "__init__.py").load_ops(ROOT)
DRIVER_DIRS = [os.path.relpath(op.folder, ROOT).replace(os.sep, "/") for op in OPS.values()]


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
LIB_NAME = "tilegen"


def _isa_tables():
    return _load_by_path("_tilegen_isa", "tilegen", "dsl", "isa", "base.py")


# Every translation unit's flags (an ISA's add to them): the ISA tables' base, which
# tilegen.dsl.compile uses too.
C_FLAGS = list(_isa_tables().BASE_CFLAGS)


def _version():
    about = {}
    with open(os.path.join(ROOT, "tilegen", "_version.py"), encoding="utf-8") as f:
        exec(f.read(), about)
    return about["__version__"]


SONAME = f"lib{LIB_NAME}.so.{_version().split('.')[0]}"
# Package configs for C users (template in tilegen/distconfig/, folder under tilegen/lib/).
PACKAGE_CONFIGS = [("tilegen.pc.in", "pkgconfig"), ("tilegenConfig.cmake.in", "cmake/tilegen"),
                   ("tilegenConfigVersion.cmake.in", "cmake/tilegen")]


class BuildExt(build_ext):
    """Builds lib/libtilegen.so.<major> next to the package (plus lib/libtilegen.so, a linker
    script naming it, for -ltilegen), then the extensions against it. Sources compile in
    parallel, and an object newer than its source, every header and the build settings is
    reused, so a second `pip install` of the same tree takes seconds."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

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
        dest = os.path.join(ROOT, "tilegen", "lib")
        os.makedirs(dest, exist_ok=True)
        for name in (SONAME, f"lib{LIB_NAME}.so"):
            self.copy_file(os.path.join(self.build_lib, "tilegen", "lib", name),
                           os.path.join(dest, name))
        self._write_package_configs(dest)

    def _compile_all(self, groups):
        """Objects of every (name, cflags, sources) group, compiled in parallel; up-to-date
        objects (see the class docstring) are reused."""
        from concurrent.futures import ThreadPoolExecutor
        import hashlib

        headers = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ROOT, "tilegen"))
                   for f in fs if f.endswith(".h")] + [os.path.join(ROOT, MANIFEST), __file__]
        newest_dep = max(os.path.getmtime(h) for h in headers)
        jobs = []
        for name, cflags, sources in groups:
            out_dir = os.path.join(self.build_temp, "libtilegen", name)
            settings = repr((self.compiler.compiler_so, INCLUDE_DIRS, C_FLAGS, list(cflags)))
            stamp = os.path.join(out_dir, "settings.sha1")
            digest = hashlib.sha1(settings.encode()).hexdigest()
            fresh_settings = os.path.isfile(stamp) and open(stamp).read() == digest
            os.makedirs(out_dir, exist_ok=True)
            for src in sources:
                obj = self.compiler.object_filenames([src], output_dir=out_dir)[0]
                os.makedirs(os.path.dirname(obj), exist_ok=True)
                stale = not (fresh_settings and os.path.isfile(obj) and os.path.getmtime(obj) >
                             max(newest_dep, os.path.getmtime(os.path.join(ROOT, src))))
                jobs.append((src, obj, out_dir, cflags, stale))
            with open(stamp, "w") as f:
                f.write(digest)

        def compile_one(job):
            src, obj, out_dir, cflags, stale = job
            if stale:
                self.compiler.compile([src], output_dir=out_dir, include_dirs=INCLUDE_DIRS,
                                      extra_postargs=C_FLAGS + list(cflags))
            return obj

        with ThreadPoolExecutor(max_workers=self.parallel or 1) as pool:
            return list(pool.map(compile_one, jobs))

    def _compiler_takes(self, cflags):
        """Whether the compiler builds a C file with these ISA flags (a newer ISA's may be
        unknown to it)."""
        from setuptools.errors import CompileError

        probe = os.path.join(self.build_temp, "isa_probe.c")
        os.makedirs(self.build_temp, exist_ok=True)
        with open(probe, "w") as f:
            f.write("int tg_isa_probe(void) { return 0; }\n")
        try:
            self.compiler.compile([probe], output_dir=self.build_temp,
                                  extra_postargs=C_FLAGS + list(cflags))
        except CompileError:
            return False
        return True

    def _build_libtilegen(self, lib_dir):
        with open(os.path.join(ROOT, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
        arch = _isa_tables().host_arch()
        groups, skipped = [], []
        for name, isa in sorted(manifest["isas"].items()):
            if isa["arch"] in (arch, "any") and isa["sources"]:
                if self._compiler_takes(isa["cflags"]):
                    groups.append((name, isa["cflags"], isa["sources"]))
                else:  # an older compiler (GCC 11: no -mavx512fp16): the build leaves it out
                    skipped.append(name)
                    print(f"tilegen: the compiler does not take {' '.join(isa['cflags'])}: "
                          f"the {name} kernels are left out of this build", file=sys.stderr)
        baseline = [f"-DTG_SKIP_ISA_{name.upper()}" for name in skipped]
        objects = self._compile_all([("baseline", baseline, BASELINE_SOURCES)] + groups)
        # The link flags Python was configured with carry its own -L and -rpath (a Python
        # install's lib folder): libtilegen needs neither.
        linker = list(self.compiler.linker_so)
        self.compiler.linker_so = [a for a in linker if not a.startswith(("-L", "-Wl,-rpath"))]
        try:
            self.compiler.link_shared_object(
                objects,
                os.path.join(lib_dir, SONAME),
                libraries=["m", "pthread"],
                extra_postargs=[f"-Wl,-soname,{SONAME}", "-Wl,--no-undefined", "-Wl,-z,now",
                                f"-Wl,--version-script,{self._version_script()}"],
            )
        finally:
            self.compiler.linker_so = linker
        # -ltilegen finds this (GNU ld and lld read linker scripts), and records the SONAME.
        with open(os.path.join(lib_dir, f"lib{LIB_NAME}.so"), "w") as f:
            f.write(f"/* GNU ld script: -l{LIB_NAME} links {SONAME} */\nINPUT({SONAME})\n")
        self._write_package_configs(lib_dir)

    def _version_script(self):
        """Exports: the public API (tilegen_*, and the ABIs ops declare in op.yaml's c_exports;
        everything else is built hidden) under one version node; nothing else, not even the
        linker's own symbols."""
        path = os.path.join(self.build_temp, "libtilegen.map")
        os.makedirs(self.build_temp, exist_ok=True)
        node = "TILEGEN_" + _version().split(".")[0]
        names = ["tilegen_*"] + [s for op in OPS.values() for s in op.c_exports]
        with open(path, "w") as f:
            f.write(f"{node} {{\n  global: {'; '.join(names)};\n  local: *;\n}};\n")
        return path

    @staticmethod
    def _write_package_configs(lib_dir):
        """lib/pkgconfig/tilegen.pc and lib/cmake/tilegen/ from tilegen/distconfig/*.in."""
        values = {"@VERSION@": _version(), "@MAJOR@": _version().split(".")[0],
                  "@SONAME@": SONAME}
        for template, folder in PACKAGE_CONFIGS:
            with open(os.path.join(ROOT, "tilegen", "distconfig", template), encoding="utf-8") as f:
                text = f.read()
            for key, value in values.items():
                text = text.replace(key, value)
            os.makedirs(os.path.join(lib_dir, folder), exist_ok=True)
            with open(os.path.join(lib_dir, folder, template[:-3]), "w", encoding="utf-8") as f:
                f.write(text)


CYTHON_DIRECTIVES = {"language_level": "3", "boundscheck": False, "wraparound": False,
                     "cdivision": True, "embedsignature": True}


def _cythonized(pyx):
    """The C file Cython generates from `pyx`, regenerated only when the .pyx/.pxd sources, the
    Cython version or the directives changed (a stamp of their hash sits beside it): pip builds
    in a fresh environment each time, whose Cython files look new and would force it."""
    import hashlib

    import Cython
    from Cython.Build import cythonize
    folder = os.path.dirname(os.path.join(ROOT, pyx))
    h = hashlib.sha1(f"{Cython.__version__} {sorted(CYTHON_DIRECTIVES.items())}".encode())
    for f in sorted(os.listdir(folder)):
        if f.endswith((".pyx", ".pxd", ".pxi")):
            with open(os.path.join(folder, f), "rb") as fh:
                h.update(f.encode() + fh.read())
    c_file, stamp = pyx[:-4] + ".c", os.path.join(ROOT, pyx[:-4] + ".c.sha1")
    if not (os.path.isfile(c_file) and os.path.isfile(stamp) and open(stamp).read() == h.hexdigest()):
        cythonize([pyx], compiler_directives=CYTHON_DIRECTIVES, force=True)
        with open(stamp, "w") as f:
            f.write(h.hexdigest())
    return c_file


def extensions():
    return [
        Extension(
            name,
            [_cythonized(source)],
            include_dirs=INCLUDE_DIRS + [numpy.get_include()],
            # TG_XAPI_CLIENT: the library's private hooks are reached through
            # tilegen_private_symbol.
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"),
                           ("TG_XAPI_CLIENT", "1")],
            extra_compile_args=["-O2"],
        )
        for name, source in _pyx_modules()
    ]


# Run by pip / `python -m build` (setuptools executes this file as __main__); importing it
# (.ci/mutation_gate.py builds scratch copies of libtilegen from these lists) builds nothing.
if __name__ == "__main__":
    setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})

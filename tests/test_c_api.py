"""What a C user meets: the shared library's name, exports and version, the headers beside a
system <cblas.h>, and building the README's example with pkg-config and with CMake."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import cprog
from conftest import REPO_ROOT

import tilegen as tg

HEADERS = ("tilegen.h", "tilegen_cblas.h")
EXAMPLE = REPO_ROOT / "examples" / "c_api"
SYSTEM_CBLAS = [Path(p) for p in ("/usr/include/cblas.h", "/usr/include/x86_64-linux-gnu/cblas.h",
                                  "/usr/include/aarch64-linux-gnu/cblas.h") if Path(p).exists()]


def readelf(*args) -> str:
    if not shutil.which("readelf"):
        pytest.skip("readelf is not available (install binutils)")
    return subprocess.run(["readelf", "-W", *args, str(cprog.library())], capture_output=True,
                          text=True, check=True).stdout


def declared_api() -> set:
    names = set()
    for h in HEADERS:
        text = (Path(tg.get_include()) / h).read_text()
        names |= set(re.findall(r"^TILEGEN_API\s+[^;(]*?\b(\w+)\s*\(", text, re.M))
        names |= set(re.findall(r"^TILEGEN_API\s+extern\s+[^;(]*?\b(\w+)\s*;", text, re.M))
    return names


def test_exports_are_exactly_the_declared_api():
    exported = set(re.findall(r"\s(?:FUNC|OBJECT|NOTYPE)\s+(?:GLOBAL|WEAK)\s+DEFAULT\s+\d+\s+"
                              r"([A-Za-z_]\w*)@", readelf("--dyn-syms")))
    api = declared_api()
    assert {"tilegen_sgemm_ex", "cblas_sgemm", "sgemm_", "tilegen_version"} <= api
    assert exported == api, (f"exported but not declared: {sorted(exported - api)}; "
                             f"declared but not exported: {sorted(api - exported)}")


def test_soname_is_versioned_and_there_is_no_runpath():
    dynamic = readelf("-d")
    major = tg.__version__.split(".")[0]
    assert re.search(rf"\(SONAME\)\s+Library soname: \[libtilegen\.so\.{major}\]", dynamic), dynamic
    assert "RUNPATH" not in dynamic and "(RPATH)" not in dynamic, dynamic
    assert cprog.library().name == f"libtilegen.so.{major}"
    # -ltilegen finds the linker script beside it, which names the real file.
    script = (cprog.library().parent / "libtilegen.so").read_text()
    assert f"INPUT(libtilegen.so.{major})" in script


def test_version_macros_and_function_match_the_package(tmp_path):
    header = (Path(tg.get_include()) / "tilegen.h").read_text()
    macros = dict(re.findall(r"#define TILEGEN_VERSION_(MAJOR|MINOR|PATCH) (\d+)", header))
    assert ".".join(macros[k] for k in ("MAJOR", "MINOR", "PATCH")) == tg.__version__
    assert f'#define TILEGEN_VERSION "{tg.__version__}"' in header
    src = tmp_path / "v.c"
    src.write_text('#include <stdio.h>\n#include <string.h>\n#include "tilegen.h"\n'
                   'int main(void) { puts(tilegen_version());\n'
                   '  return strcmp(tilegen_version(), TILEGEN_VERSION) != 0; }\n')
    exe = tmp_path / "v"
    subprocess.run([cprog.cc(), f"-I{tg.get_include()}", str(src), "-o", str(exe),
                    *cprog.tilegen_link_args()], check=True)
    assert cprog.run([exe]).stdout.strip() == tg.__version__


@pytest.mark.parametrize("order", [("<cblas.h>", "tilegen.h"), ("tilegen.h", "<cblas.h>"),
                                   ("<cblas.h>", "tilegen_cblas.h"), ("tilegen_cblas.h",)])
def test_headers_sit_beside_a_system_cblas_h(tmp_path, order):
    """Existing BLAS code includes its <cblas.h> and tilegen's headers together and calls
    cblas_sgemm through libtilegen."""
    if "<cblas.h>" in order and not SYSTEM_CBLAS:
        if os.environ.get("CI"):
            pytest.fail("no system cblas.h: .ci/run installs libblas-dev")
        pytest.skip("no system cblas.h (Debian: libblas-dev)")
    includes = "".join(f"#include {h if h.startswith('<') else chr(34) + h + chr(34)}\n"
                       for h in order)
    src = tmp_path / "both.c"
    src.write_text(includes + (
        "#include <stdio.h>\n"
        "int main(void) {\n"
        "  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {0};\n"
        "  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b, 2,\n"
        "              0.0f, c, 2);\n"
        "  printf(\"%g %g %g %g\\n\", c[0], c[1], c[2], c[3]);\n"
        "  return 0;\n}\n"))
    exe = tmp_path / "both"
    cmd = [cprog.cc(), "-std=c11", "-Wall", "-Werror", f"-I{tg.get_include()}", str(src), "-o",
           str(exe), *cprog.tilegen_link_args()]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert cprog.run([exe]).stdout.split() == ["19", "22", "43", "50"]


def run_example(exe: Path) -> None:
    r = cprog.run([exe])
    assert r.returncode == 0 and re.match(rf"tilegen {re.escape(tg.__version__)} on \w+: rc 0, "
                                          r"max error 0\b", r.stdout), r.stdout + r.stderr


def test_readme_example_builds_with_pkg_config(tmp_path):
    if not shutil.which("pkg-config"):
        pytest.skip("pkg-config is not installed (Debian: pkg-config)")
    env = dict(os.environ, PKG_CONFIG_PATH=tg.get_pkgconfig_dir())
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "tilegen"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    version = subprocess.run(["pkg-config", "--modversion", "tilegen"], env=env,
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == tg.__version__
    exe = tmp_path / "demo"
    subprocess.run([cprog.cc(), str(EXAMPLE / "sgemm_demo.c"), "-o", str(exe), *flags, "-lm"],
                   check=True)
    run_example(exe)


def test_readme_example_builds_with_cmake(tmp_path):
    if not shutil.which("cmake"):
        pytest.skip("cmake is not installed")
    cli = cprog.run([*cprog.tilegen_command(), "--cmake-dir"]).stdout.strip()
    assert cli == tg.get_cmake_dir() and Path(cli, "tilegenConfig.cmake").is_file()
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", str(EXAMPLE), "-B", str(build), f"-DCMAKE_PREFIX_PATH={cli}",
                 "-DCMAKE_BUILD_TYPE=Release"], ["cmake", "--build", str(build)]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    run_example(build / "sgemm_demo")

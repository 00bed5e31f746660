"""The AMX tiers' drivers on a CPU without AMX: libtilegen built in a scratch copy with the AMX
kernels compiled against the software model of the tile instructions (tests/c/amx_model.h,
force-included, no -mamx-* flags), loaded through LD_LIBRARY_PATH; the dispatcher is then told
(the _reinit test hook) that the CPU has this machine's features plus AMX, so the bfloat16 and
int8 GEMM drivers select the amxbf16 / amxint8 kernels, and the given GEMM tests run through
them (packing of A in tile groups, KC blocking, threads, streaming of few rows).

Usage (from the repository root, with tilegen and its test extra installed):
    python .ci/amx_model.py [pytest selection...]
Default selection: tests/ops/gemm/test_bf16.py tests/ops/gemm/test_s8.py. The model is slow
(scalar C per tile product): expect minutes.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from scratch_build import ScratchLibrary, load_setup, scratch_copy

# The pytest plug-in: before any test, the CPU's usable features plus AMX; every test then checks
# that the AMX kernels are the ones selected (a run that silently fell back proves nothing).
PLUGIN = '''
import pytest
from tilegen.core import _core

AMX = ["amx_tile", "amx_bf16", "amx_int8"]


def pytest_configure(config):
    _, usable = _core.features()
    assert _core._reinit(sorted(set(usable) | set(AMX))) == 0


@pytest.fixture(autouse=True)
def _amx_selected():
    import tilegen as tg
    kernels = tg.runtime_info()["kernels"]["gemm"]
    assert kernels["bf16"]["isa"] == "amxbf16" and kernels["s8"]["isa"] == "amxint8", kernels
    yield
'''


def main() -> int:
    selection = sys.argv[1:] or ["tests/ops/gemm/test_bf16.py", "tests/ops/gemm/test_s8.py"]
    setup = load_setup()
    with tempfile.TemporaryDirectory(prefix="tilegen-amx-model-") as tmp:
        scratch = scratch_copy(Path(tmp))
        model = scratch / "tests" / "c" / "amx_model.h"
        path = scratch / setup.MANIFEST
        manifest = json.loads(path.read_text())
        tiers = [n for n, isa in manifest["isas"].items()
                 if any(f.startswith("-mamx") for f in isa["cflags"])]
        if not tiers:
            print("amx model: no AMX tier in the build manifest")
            return 2
        for name in tiers:
            isa = manifest["isas"][name]
            isa["cflags"] = [f for f in isa["cflags"] if not f.startswith("-mamx")] + [
                "-include", str(model)]
        path.write_text(json.dumps(manifest))
        lib = ScratchLibrary(scratch, setup)
        lib.build()
        env = lib.env()
        if not lib.loaded_by_python(env):
            print("amx model: the scratch libtilegen is not the one tilegen loads")
            return 2
        (scratch / "tests" / "amx_model_plugin.py").write_text(PLUGIN)
        env["PYTHONPATH"] = str(scratch / "tests")
        args = [str(scratch / a) if a.startswith("tests/") else a for a in selection]
        # From a folder outside the source tree: the installed tilegen is the one imported.
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
                            "--rootdir", str(scratch), "-p", "amx_model_plugin", *args],
                           cwd=scratch / "tests", env=env)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())

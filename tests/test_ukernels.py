"""Every registry kernel, built from the committed generated C, through its family's C tester
(tests/c/<op>_ukernel_tester.c, registered in FAMILIES).

x86 kernels and the scalar fallback run natively on an x86-64 host; NEON kernels (and the scalar
fallback once more) are cross-built with aarch64-linux-gnu-gcc -static and run under qemu-aarch64.
On an aarch64 host NEON runs natively. A kernel whose ISA this CPU lacks is skipped (tester exit 77).
All testers are compiled and run in parallel once per session; each test then reads its result.
"""
import os
import re
import shutil
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest
from conftest import REPO_ROOT
from cprog import SANITIZE, SANITIZE_FLAGS

import tilegen as tg
from tilegen.dsl import DTYPES, ISAS, KernelSpec, load_registry, registry_path
from tilegen.dsl.isa import get_isa, host_arch
from tilegen.dsl.ops.attention import exp_name, exp_path, work_floats
from tilegen.dsl.ops.attndecode import decode_work_floats
from tilegen.dsl.ops.dwconv import FAMILY as DWCONV
from tilegen.dsl.ops.gemm import epilogue_flags, pack_path, packa_name, packb_name, packr_name
from tilegen.dsl.render import GENERATED_RELPATH, kernel_path

ENTRIES = load_registry(registry_path(str(REPO_ROOT)))
SKIP_EXIT = 77
HOST_ARCH = host_arch()
HOST_ISAS = tg.blas._core.isas()  # the library's own CPU detection: which ISAs run natively


@dataclass(frozen=True)
class Target:
    """How to build and run a tester: natively, or cross-built and emulated."""

    mode: str                       # shown in test ids and in the summary
    cc: Tuple[str, ...] = ()
    runner: Tuple[str, ...] = ()
    packages: str = ""              # Debian packages that provide cc and runner
    reason: str = ""                # why this target can never run here

    def unavailable(self) -> Optional[str]:
        if self.reason:
            return self.reason
        for tool in (*self.cc[:1], *self.runner[:1]):
            if not shutil.which(tool):
                return f"{tool} not found; install {self.packages}"
        return None


NATIVE = Target("native", ("gcc",), packages="gcc")
# Emulated architectures: a static cross build run under qemu-user.
CROSS = {
    "aarch64": Target("under qemu-aarch64", ("aarch64-linux-gnu-gcc", "-static"), ("qemu-aarch64",),
                      packages="gcc-aarch64-linux-gnu and qemu-user"),
}


# Kernels with an inline-assembly k loop also carry the intrinsics loop that other compilers
# build; TG_NO_ASM selects it, so both loops are tested.
NATIVE_NO_ASM = Target("native intrinsics loop", ("gcc", "-DTG_NO_ASM"), packages="gcc")


def targets(spec: KernelSpec) -> List[Target]:
    isa_arch = ISAS[spec.isa].arch
    out = [NATIVE] if isa_arch in (HOST_ARCH, "any") else []
    if out and spec.kloop == "asm":
        # Sanitizers instrument C, not inline assembly: the sanitizer job (SANITIZE_FLAGS)
        # builds only the intrinsics loop of such kernels; guard pages cover the asm loop.
        out = [NATIVE_NO_ASM] if SANITIZE_FLAGS else [NATIVE, NATIVE_NO_ASM]
    out += [t for arch, t in CROSS.items() if arch != HOST_ARCH and isa_arch in (arch, "any")]
    return out or [Target("not runnable", reason=f"{isa_arch} code cannot run on this {HOST_ARCH} host")]


def gemm_defines(s: KernelSpec) -> Dict[str, object]:
    return {
        "TG_PACKA": packa_name(s.dtype, s.isa, s.mr), "TG_PACKR": packr_name(s.dtype, s.isa),
        "TG_PACKB": packb_name(s.dtype, s.isa, s.nr), "TG_MR": s.mr, "TG_NR": s.nr,
        "TG_UNROLL": s.unroll, "TG_EPI": f"({epilogue_flags(s)})",
        "TG_ROWS": int(s.a_layout == "rows"),
    }


def gemv_defines(s: KernelSpec) -> Dict[str, object]:
    return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_KR": s.kr}


def filter_defines(s: KernelSpec) -> Dict[str, object]:
    return {"TG_KIND": f"TG_FILTER_KIND_{s.kind.upper()}", "TG_MR": s.mr, "TG_NR": s.nr}


# The attention exp's error bound in ULPs (templates/attention/exp.j2): 1 with fused
# multiply-adds, 1.5 on the scalar fallback, whose multiply-adds round twice.
ATTENTION_EXP_ULP = {"scalar": 1.5}


def attention_defines(s: KernelSpec) -> Dict[str, object]:
    lanes = ISAS[s.isa].lanes(s.dtype)
    cw = s.pv_vecs * lanes
    return {"TG_EXP": exp_name(s.dtype, s.isa), "TG_MR": s.mr, "TG_NR": s.nr, "TG_KB": s.kb,
            "TG_CW": cw, "TG_WORK": work_floats(s.mr, s.kb, cw),
            "TG_EXP_ULP": ATTENTION_EXP_ULP.get(s.isa, 1.0)}


def attndecode_defines(s: KernelSpec) -> Dict[str, object]:
    lanes = ISAS[s.isa].lanes(s.dtype)
    cw = s.pv_vecs * lanes
    fixed, per_slice = decode_work_floats(s)
    return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_CW": cw, "TG_LANES": lanes, "TG_PF": s.prefetch,
            "TG_WORK": fixed, "TG_SLICE_WORK": per_slice}


def conv_defines(s: KernelSpec) -> Dict[str, object]:
    return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_KH": s.kh, "TG_KW": s.kw, "TG_S": s.stride,
            "TG_FIXED_C": s.kr if s.kr > 1 else 0, "TG_UNROLL": s.unroll,
            "TG_NCHW": int(s.layout == "nchw")}


def dwconv_defines(s: KernelSpec) -> Dict[str, object]:
    return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_KH": s.kh, "TG_KW": s.kw, "TG_S": s.stride,
            "TG_NCHW": int(s.layout == "nchw"), "TG_D1": int(s.dilation == "1"),
            "TG_STEP": DWCONV.pixel_step(s), "TG_ROWS": s.out_rows,
            "TG_ROW_TILES": int(s.tiling == "rows"),
            "TG_REACH": DWCONV.reach_vectors(s) * get_isa(s.isa).lanes(s.dtype)}


@dataclass(frozen=True)
class Family:
    """A kernel family's tester: its C file, its own -D flags and the generated sources it links
    besides the kernel (see each tester's header comment)."""

    tester: str
    defines: Callable[[KernelSpec], Dict[str, object]]
    sources: Callable[[KernelSpec], List[str]] = lambda s: []


FAMILIES = {
    "gemm": Family("gemm_ukernel_tester.c", gemm_defines, lambda s: [pack_path(s.dtype, s.isa)]),
    "gemv": Family("gemv_ukernel_tester.c", gemv_defines),
    "filter": Family("filter_ukernel_tester.c", filter_defines),


    "attention": Family("attention_ukernel_tester.c", attention_defines,
                        lambda s: [exp_path(s.dtype, s.isa)]),
    "attndecode": Family("attndecode_ukernel_tester.c", attndecode_defines),
    "conv": Family("conv_ukernel_tester.c", conv_defines),
    "dwconv": Family("dwconv_ukernel_tester.c", dwconv_defines),
}

CASES = [(e, t) for e in ENTRIES if e.spec.op in FAMILIES for t in targets(e.spec)]


def compile_commands(spec: KernelSpec, target: Target, out: Path) -> List[List[str]]:
    """The kernel's translation units with its ISA's flags, each to an object; then the tester
    and the library's CPU detector at the baseline (no ISA flag: the tester must reach its
    feature check on any CPU), linked with them."""
    family = FAMILIES[spec.op]
    isa = ISAS[spec.isa]
    defines = {
        "TG_T": DTYPES[spec.dtype], "TG_DT": spec.dtype, "TG_UKERNEL": spec.name,
        # Every tester skips itself (exit 77) unless the CPU has all of this ISA's features.
        "TG_ISA_ID": f"TG_ISA_{spec.isa.upper()}",
        **family.defines(spec),
    }
    # The sanitizer job's flags (cprog.SANITIZE_FLAGS) for native builds; emulated ones are static.
    sanitize = [] if target.runner else SANITIZE_FLAGS
    base = [*target.cc, "-std=c99", "-O2", "-Wall", "-Werror", *sanitize,
            "-I", str(REPO_ROOT / GENERATED_RELPATH), "-I", str(REPO_ROOT / "tilegen" / "dispatch")]
    commands, objects = [], []
    for i, src in enumerate([kernel_path(spec), *family.sources(spec)]):
        obj = out.with_name(f"{out.name}.{i}.o")
        commands.append([*base, *isa.cflags, "-c", str(REPO_ROOT / src), "-o", str(obj)])
        objects.append(str(obj))
    commands.append([
        *base, *(f"-D{k}={v}" for k, v in defines.items()),
        str(REPO_ROOT / "tests" / "c" / family.tester),
        str(REPO_ROOT / "tilegen" / "dispatch" / "cpu_features.c"), *objects,
        "-o", str(out), "-lm",
    ])
    return commands


@dataclass
class Outcome:
    skip: Optional[str] = None
    build: Optional[subprocess.CompletedProcess] = None
    run: Optional[subprocess.CompletedProcess] = None


def case_id(case) -> str:
    entry, target = case
    return f"{entry.name}-{target.mode.replace('under ', '').replace(' ', '-')}"


# Per family, ISA and native target, the first case: built and run even where the CPU lacks
# the ISA, so its tester's own feature check is what skips it.
SELF_SKIP_PROBES = set({(e.spec.op, e.spec.isa, t.mode): case_id((e, t))
                        for e, t in reversed(CASES)}.values())


def build_and_run(case, workdir: Path) -> Outcome:
    entry, target = case
    unavailable = target.unavailable()
    if unavailable:
        return Outcome(skip=unavailable)
    if not target.runner and not HOST_ISAS.get(entry.spec.isa) and (
            SANITIZE or case_id(case) not in SELF_SKIP_PROBES):
        # A kernel this CPU cannot run: building it would only cost time, once the family's
        # tester has shown that it skips itself on such a CPU (the plain run builds one per
        # family, ISA and target).
        return Outcome(skip=f"this CPU lacks {entry.spec.isa} (tester not built)")
    exe = workdir / case_id(case)
    for command in compile_commands(entry.spec, target, exe):
        build = subprocess.run(command, capture_output=True, text=True)
        if build.returncode != 0:
            return Outcome(build=build)
    cmd = [*target.runner, str(exe)]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:  # subprocess.run has killed it
        run = subprocess.CompletedProcess(cmd, -signal.SIGKILL, "", "timed out after 600 s")
    return Outcome(build=build, run=run)


@pytest.fixture(scope="session")
def outcomes(request, tmp_path_factory):
    """Build and run the testers of the selected cases, in parallel, once per session."""
    wanted = {item.callspec.id for item in request.session.items
              if item.originalname == "test_ukernel"}
    selected = [c for c in CASES if case_id(c) in wanted]
    workdir = tmp_path_factory.mktemp("ukernels")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {case_id(c): pool.submit(build_and_run, c, workdir) for c in selected}
    return {k: f.result() for k, f in futures.items()}


def test_every_kernel_family_has_a_tester():
    untested = sorted({e.spec.op for e in ENTRIES} - set(FAMILIES))
    assert not untested, (
        f"registry kernels of {untested} have no C tester: add tests/c/<op>_ukernel_tester.c "
        "and its entry in FAMILIES")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_ukernel(case, outcomes, ukernel_runs):
    entry, target = case
    out = outcomes[case_id(case)]
    tally = ukernel_runs.setdefault((entry.spec.isa, target.mode),
                                    {"cases": 0, "kernels": 0, "skipped": 0})
    tally["kernels"] += 1
    if out.run is not None and out.run.returncode == SKIP_EXIT:
        out.skip = out.run.stdout.strip() or "this CPU lacks the ISA"
    if out.skip:
        tally["skipped"] += 1
        pytest.skip(out.skip)
    if out.run is None:
        pytest.fail(f"build failed:\n$ {' '.join(out.build.args)}\n{out.build.stderr}", pytrace=False)

    m = re.search(r"KERNEL (\S+) CASES (\d+) FAILED (\d+)", out.run.stdout)
    rc = out.run.returncode
    # SIGSEGV: an access outside the buffers, which end at guard pages.
    status = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}"
    detail = f"{status}\nstdout:\n{out.run.stdout}\nstderr:\n{out.run.stderr}"
    if not m or m.group(1) != entry.name:
        pytest.fail(f"no result line for {entry.name} from the tester ({detail})", pytrace=False)
    cases, failed = int(m.group(2)), int(m.group(3))
    tally["cases"] += cases
    if failed or rc != 0 or cases == 0:
        pytest.fail(detail, pytrace=False)

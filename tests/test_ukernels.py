"""Every registry kernel, built from the committed generated C, through its family's C tester
(tilegen/ops/<op>/testers/<family>_ukernel_tester.c, with the -D flags and extra sources its
family plug-in names: OpFamily.tester_defines / tester_sources).

x86 kernels and the scalar fallback run natively on an x86-64 host; NEON kernels (and the scalar
fallback once more) are cross-built with aarch64-linux-gnu-gcc -static and run under qemu-aarch64.
On an aarch64 host NEON runs natively. A kernel whose ISA this CPU lacks is skipped (tester exit 77).
All testers are compiled and run in parallel once per session; each test then reads its result.

Each tester also reports what it covered (tests/c/ukernel_tester.h): a `COVER <dim> STEP <step>
ALONE <list> AFTER <list>` line per dimension the kernel tiles (the remainders run with values up
to the step, and past it) and a `CLAMP <act> <point> POSITIONS <p> BELOW <b> ABOVE <a>` line per
clamp point of its activations; test_tester_coverage holds them to the family's tester_coverage
and tester_clamps: every remainder 0..step-1 of every dimension run alone and, where the tester
runs values past the step (a loop rather than a tile's edge), after full steps too; every
position of the tile seen on both sides of every clamp.
"""
import os
import re
import shutil
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set, Tuple

import pytest
from conftest import REPO_ROOT
from cprog import SANITIZE, SANITIZE_FLAGS

import tilegen as tg
from tilegen.dsl import DTYPES, ISAS, KernelSpec, load_registry, registry_path
from tilegen.dsl.isa import host_arch
from tilegen.dsl.render import GENERATED_RELPATH, kernel_path

ENTRIES = load_registry(registry_path(str(REPO_ROOT)))
SKIP_EXIT = 77
HOST_ARCH = host_arch()
HOST_ISAS = tg.core._core.isas()  # the library's own CPU detection: which ISAs run natively


@dataclass(frozen=True)
class Target:
    """How to build and run a tester: natively, or cross-built and emulated."""

    mode: str                       # shown in test ids and in the summary
    cc: Tuple[str, ...] = ()
    runner: Tuple[str, ...] = ()
    packages: str = ""              # Debian packages that provide cc and runner
    reason: str = ""                # why this target can never run here
    # A stand-in (STAND_INS): the kernel built with these flags instead of its ISA's, its tester
    # checking the features of ISA `isa` instead.
    isa: str = ""
    cflags: Tuple[str, ...] = ()

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


# Stand-ins for x86 tiers that few CPUs (and no emulator here) have: the same generated C built
# with other flags, its tester checking the features of the ISA those flags need (Target.isa);
# the kernel's code then runs, against the tester's reference, on more CPUs than its tier's.
#  - avxvnni: the EVEX encoding of the same 256-bit VPDPBUSD (AVX512-VNNI + VL), which the
#    kernel's spelling macros (dsl/isa/x86.py) choose from these flags; its asm and its
#    intrinsics spelling (TG_NO_ASM) both.
#  - avx512fp16: GCC's AVX512-FP16 headers skipped (their include guards defined) for a software
#    model of the intrinsics (tests/c/tg_avx512fp16_model.h, each lane a half FMA rounded once);
#    the tester's bit-exact check of its k-order model then tests the kernel's structure, its
#    edges and its accumulation order, not the instructions.
_EVEX_TWIN = ISAS["avx2"].cflags + ("-mavx512vnni", "-mavx512vl")
_FP16_MODEL = ISAS["avx512"].cflags + (
    "-D__AVX512FP16INTRIN_H_INCLUDED", "-D__AVX512FP16VLINTRIN_H_INCLUDED",
    "-include", "tg_avx512fp16_model.h")
STAND_INS: Dict[str, List[Target]] = {
    "avxvnni": [
        Target("evex twin", ("gcc",), packages="gcc", isa="avx512vnni", cflags=_EVEX_TWIN),
        Target("evex twin intrinsics", ("gcc", "-DTG_NO_ASM"), packages="gcc", isa="avx512vnni",
               cflags=_EVEX_TWIN)],
    "avx512fp16": [
        Target("software model", ("gcc",), packages="gcc", isa="avx512", cflags=_FP16_MODEL)],
}
# AMX tiers: the tile intrinsics replaced by a software model of the instructions after the
# Intel SDM (tests/c/amx_model.h, force-included; no -mamx-* flags), the rest of the kernel
# built for the tier's AVX-512 base, whose features the tester checks. Its shape and fault
# checks also catch a kernel that would fault on real AMX.
for _tier, _base in (("amxbf16", "avx512bf16"), ("amxint8", "avx512vnni")):
    STAND_INS[_tier] = [Target(
        "amx model", ("gcc",), packages="gcc", isa=_base,
        cflags=tuple(f for f in ISAS[_tier].cflags if not f.startswith("-mamx")) + (
            "-include", "amx_model.h"))]


def targets(spec: KernelSpec) -> List[Target]:
    isa_arch = ISAS[spec.isa].arch
    out = [NATIVE] if isa_arch in (HOST_ARCH, "any") else []
    if out and spec.kloop == "asm":
        # Sanitizers instrument C, not inline assembly: the sanitizer job (SANITIZE_FLAGS)
        # builds only the intrinsics loop of such kernels; guard pages cover the asm loop.
        out = [NATIVE_NO_ASM] if SANITIZE_FLAGS else [NATIVE, NATIVE_NO_ASM]
    if out:
        out += STAND_INS.get(spec.isa, [])
    out += [t for arch, t in CROSS.items() if arch != HOST_ARCH and isa_arch in (arch, "any")]
    return out or [Target("not runnable", reason=f"{isa_arch} code cannot run on this {HOST_ARCH} host")]


CASES = [(e, t) for e in ENTRIES for t in targets(e.spec)]


def compile_commands(spec: KernelSpec, target: Target, out: Path) -> List[List[str]]:
    """The kernel's translation units with its ISA's flags, each to an object; then the tester
    and the library's CPU detector at the baseline (no ISA flag: the tester must reach its
    feature check on any CPU), linked with them."""
    family = spec.family
    isa = ISAS[spec.isa]
    defines = {
        "TG_T": DTYPES[spec.dtype], "TG_DT": spec.dtype, "TG_UKERNEL": spec.name,
        # Every tester skips itself (exit 77) unless the CPU has all of this ISA's features.
        "TG_ISA_ID": f"TG_ISA_{(target.isa or spec.isa).upper()}",
        **family.tester_defines(spec),
    }
    # The sanitizer job's flags (cprog.SANITIZE_FLAGS) for native builds; emulated ones are static.
    sanitize = [] if target.runner else SANITIZE_FLAGS
    base = [*target.cc, "-std=c99", "-O2", "-Wall", "-Werror", *sanitize,
            "-I", str(REPO_ROOT / GENERATED_RELPATH), "-I", str(REPO_ROOT / "tilegen" / "core"),
            "-I", str(REPO_ROOT / "tests" / "c")]
    commands, objects = [], []
    for i, src in enumerate([kernel_path(spec), *family.tester_sources(spec)]):
        obj = out.with_name(f"{out.name}.{i}.o")
        commands.append([*base, *(target.cflags or isa.cflags), "-c", str(REPO_ROOT / src),
                         "-o", str(obj)])
        objects.append(str(obj))
    commands.append([
        *base, *(f"-D{k}={v}" for k, v in defines.items()),
        str(REPO_ROOT / family.tester),
        str(REPO_ROOT / "tilegen" / "core" / "cpu_features.c"), *objects,
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
    if not target.runner and not HOST_ISAS.get(target.isa or entry.spec.isa) and (
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
              if item.originalname in ("test_ukernel", "test_tester_coverage")}
    selected = [c for c in CASES if case_id(c) in wanted]
    workdir = tmp_path_factory.mktemp("ukernels")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {case_id(c): pool.submit(build_and_run, c, workdir) for c in selected}
    return {k: f.result() for k, f in futures.items()}


def test_every_kernel_family_has_a_tester():
    untested = sorted({e.spec.family.tester for e in ENTRIES
                       if not (REPO_ROOT / e.spec.family.tester).is_file()})
    assert not untested, f"kernel families without their C tester: {untested}"


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


COVER_LINE = re.compile(r"^COVER (\S+) STEP (\d+) ALONE (\S+) AFTER (\S+)$", re.M)
CLAMP_LINE = re.compile(r"^CLAMP (\S+) (\S+) POSITIONS (\d+) BELOW (\d+) ABOVE (\d+)$", re.M)


def remainders(listed: str) -> Set[int]:
    """"0-5,7" -> {0, 1, 2, 3, 4, 5, 7} ("none": the empty set)."""
    out: Set[int] = set()
    for part in listed.split(","):
        if part == "none":
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def coverage_gaps(spec: KernelSpec, stdout: str) -> List[str]:
    """What a tester's report misses of the rule its family states: every remainder of every
    tiled dimension (tester_coverage) run alone, and after full steps wherever the tester runs
    past the step; both sides of every clamp point at every position of the tile
    (tester_clamps); and nothing reported that the family does not state."""
    family = spec.family
    want_dims = family.tester_coverage(spec)
    got_dims = {m.group(1): (int(m.group(2)), remainders(m.group(3)), remainders(m.group(4)))
                for m in COVER_LINE.finditer(stdout)}
    gaps = []
    for dim, step in want_dims.items():
        if dim not in got_dims:
            gaps.append(f"{dim}: no COVER line (step {step})")
            continue
        got_step, alone, after = got_dims[dim]
        if got_step != step:
            gaps.append(f"{dim}: the tester steps by {got_step}, the kernel by {step}")
            continue
        missing = sorted(set(range(step)) - alone)
        if missing:
            gaps.append(f"{dim} (step {step}): remainders {missing} never run alone "
                        f"(values up to {step})")
        missing = sorted(set(range(step)) - after)
        if after and missing:
            gaps.append(f"{dim} (step {step}): remainders {missing} never run after a full "
                        f"step (values past {step})")
    gaps += [f"{dim}: reported by the tester, not in {family.name}.tester_coverage"
             for dim in sorted(set(got_dims) - set(want_dims))]
    want_clamps = {(act, float(point)) for act, points in family.tester_clamps(spec).items()
                   for point in points}
    got_clamps = {(m.group(1), float(m.group(2))): tuple(int(m.group(g)) for g in (3, 4, 5))
                  for m in CLAMP_LINE.finditer(stdout)}
    for act, point in sorted(want_clamps):
        if (act, point) not in got_clamps:
            gaps.append(f"{act} at {point:g}: no CLAMP line")
            continue
        positions, below, above = got_clamps[act, point]
        if positions == 0 or below != positions or above != positions:
            gaps.append(f"{act} at {point:g}: of {positions} tile positions, {below} seen below "
                        f"and {above} above")
    gaps += [f"{act} at {point:g}: reported by the tester, not in "
             f"{family.name}.tester_clamps" for act, point in sorted(set(got_clamps) - want_clamps)]
    return gaps


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tester_coverage(case, outcomes):
    """The tester ran every remainder of every dimension the kernel tiles, and fed every
    position of the tile both sides of each clamp (its COVER and CLAMP lines)."""
    entry, target = case
    out = outcomes[case_id(case)]
    if out.skip or (out.run is not None and out.run.returncode == SKIP_EXIT):
        pytest.skip(out.skip or "this CPU lacks the ISA")
    if out.run is None or out.run.returncode != 0:
        pytest.skip("the tester failed (test_ukernel reports it)")
    gaps = coverage_gaps(entry.spec, out.run.stdout)
    assert not gaps, f"{entry.name}'s tester misses:\n  " + "\n  ".join(gaps)


def test_coverage_check_catches_a_missing_remainder():
    """The check above, on reports made up for one kernel of every family: a complete one
    passes (with or without values past the step); one remainder fewer alone or after a full
    step, a step that differs, a missing line, a dimension or clamp the family does not name,
    or a clamp seen on one side only fails."""
    for family in sorted({e.spec.family.name for e in ENTRIES}):
        specs = [e.spec for e in ENTRIES if e.spec.family.name == family]
        spec = next((s for s in specs if s.family.tester_clamps(s)), specs[0])
        dims = spec.family.tester_coverage(spec)
        clamps = spec.family.tester_clamps(spec)
        assert dims, f"{family}: tester_coverage names no dimension"

        def report(drop_alone=None, drop_after=None, step_off=None, one_side=None,
                   after=True, extra=""):
            lines = []
            for dim, step in dims.items():
                alone = ",".join(str(r) for r in range(step) if (dim, r) != drop_alone)
                past = ",".join(str(r) for r in range(step) if (dim, r) != drop_after)
                lines.append(f"COVER {dim} STEP {step + (dim == step_off)} ALONE {alone or 'none'}"
                             f" AFTER {(past or 'none') if after else 'none'}")
            for act, points in clamps.items():
                for point in points:
                    above = 5 if (act, point) == one_side else 6
                    lines.append(f"CLAMP {act} {point:g} POSITIONS 6 BELOW 6 ABOVE {above}")
            return "\n".join(lines) + "\n" + extra

        assert coverage_gaps(spec, report()) == [], family
        assert coverage_gaps(spec, report(after=False)) == [], family
        assert coverage_gaps(spec, report(extra="COVER bogus STEP 2 ALONE 0-1 AFTER none\n"))
        assert coverage_gaps(spec, report(extra="CLAMP relu 7 POSITIONS 6 BELOW 6 ABOVE 6\n"))
        for dim, step in dims.items():
            assert coverage_gaps(spec, report(drop_alone=(dim, step - 1))), (family, dim)
            assert coverage_gaps(spec, report(drop_alone=(dim, 0))), (family, dim)
            if step > 1:  # a step of 1 has no remainder past the full steps to miss
                assert coverage_gaps(spec, report(drop_after=(dim, step - 1))), (family, dim)
            assert coverage_gaps(spec, report(step_off=dim)), (family, dim)
            short = "\n".join(l for l in report().splitlines() if not l.startswith(f"COVER {dim} "))
            assert coverage_gaps(spec, short), (family, dim)
        for act, points in clamps.items():
            for point in points:
                assert coverage_gaps(spec, report(one_side=(act, point))), (family, act)


# qemu-aarch64's Neoverse N1 has asimd, fp16 and dotprod but no bf16 (its default "max" has it).
NO_BF16_CPU = "neoverse-n1"


def test_neonbf16_tester_skips_on_a_cpu_without_bf16(tmp_path):
    """A neonbf16 kernel's tester, run as an AArch64 CPU without FEAT_BF16, reports the missing
    feature and exits 77 before it calls the kernel (BFDOT would raise SIGILL): the feature
    check, not luck, keeps the tier off such CPUs."""
    target = CROSS["aarch64"]
    unavailable = target.unavailable()
    if unavailable:
        pytest.skip(unavailable)
    entry = next(e for e in ENTRIES if e.spec.isa == "neonbf16" and e.production)
    exe = tmp_path / "tester"
    for command in compile_commands(entry.spec, target, exe):
        build = subprocess.run(command, capture_output=True, text=True)
        assert build.returncode == 0, build.stderr
    run = subprocess.run([*target.runner, "-cpu", NO_BF16_CPU, str(exe)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == SKIP_EXIT, (run.returncode, run.stdout, run.stderr)
    assert re.search(r"^SKIP: .*\bbf16\b", run.stdout, re.M), run.stdout
    assert "KERNEL" not in run.stdout, run.stdout


# An AArch64 CPU with none of the optional features (asimdhp, asimddp, i8mm, bf16) that the
# tiers above plain neon require: qemu's model of it.
BARE_AARCH64_CPU = "cortex-a72"
FEATURE_TIERS = sorted({e.spec.isa for e in ENTRIES if ISAS[e.spec.isa].arch == "aarch64"
                        and set(ISAS[e.spec.isa].requires) - set(ISAS["neon"].requires)})


def test_some_aarch64_tier_needs_a_feature():
    """The test below has something to run: the dot-product tiers have kernels."""
    assert {"neondot", "neoni8mm"} <= set(FEATURE_TIERS)


# Each (tier, family) pair of those tiers: every family's tester has its own feature check.
FEATURE_TIER_FAMILIES = sorted({(e.spec.isa, e.spec.op) for e in ENTRIES
                                if e.spec.isa in FEATURE_TIERS})


@pytest.mark.parametrize("isa, family", FEATURE_TIER_FAMILIES)
def test_feature_tier_skips_itself_without_its_feature(isa, family, tmp_path):
    """One tester of each family on each AArch64 tier that needs more than ASIMD, cross-built
    and run under qemu-aarch64 as a Cortex-A72 (which has none of those features): the tester's
    own feature check must exit 77 before the kernel runs (an instruction the CPU lacks would
    be SIGILL)."""
    target = CROSS["aarch64"]
    missing = target.unavailable()
    if missing:
        pytest.skip(missing)
    entry = next(e for e in ENTRIES if e.spec.isa == isa and e.spec.op == family)
    exe = tmp_path / entry.name
    for command in compile_commands(entry.spec, target, exe):
        build = subprocess.run(command, capture_output=True, text=True)
        assert build.returncode == 0, f"$ {' '.join(command)}\n{build.stderr}"
    run = subprocess.run([*target.runner, "-cpu", BARE_AARCH64_CPU, str(exe)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == SKIP_EXIT, (run.returncode, run.stdout, run.stderr)
    lacks = set(ISAS[isa].requires) - set(ISAS["neon"].requires)
    assert run.stdout.startswith("SKIP:") and all(f in run.stdout for f in lacks), run.stdout


def test_neonfp16_tester_skips_without_fp16_arithmetic(tmp_path):
    """A neonfp16 kernel is never run where the CPU lacks half arithmetic: under qemu-aarch64
    -cpu cortex-a72 (ARMv8.0: no asimdhp) its tester checks the features first and exits 77,
    naming asimdhp, before any FMLA .8h; under the default CPU ("max") it runs."""
    entry = next(e for e in ENTRIES if e.spec.isa == "neonfp16" and e.spec.op == "gemmf16")
    target = CROSS["aarch64"] if HOST_ARCH != "aarch64" else NATIVE
    if HOST_ARCH == "aarch64" or not target.runner:
        pytest.skip("needs qemu-aarch64's -cpu to pick a CPU without FP16 (an x86-64 host)")
    unavailable = target.unavailable()
    if unavailable:
        pytest.skip(unavailable)
    exe = tmp_path / "tester"
    for command in compile_commands(entry.spec, target, exe):
        build = subprocess.run(command, capture_output=True, text=True)
        assert build.returncode == 0, build.stderr
    old = subprocess.run(["qemu-aarch64", "-cpu", "cortex-a72", str(exe)], capture_output=True,
                         text=True, timeout=600)
    assert old.returncode == SKIP_EXIT and "asimdhp" in old.stdout, (old.returncode, old.stdout)
    assert "KERNEL" not in old.stdout
    new = subprocess.run(["qemu-aarch64", str(exe)], capture_output=True, text=True, timeout=600)
    assert new.returncode == 0 and f"KERNEL {entry.name} CASES" in new.stdout, new.stderr


# What the real builds of the stand-in tiers encode (their tests above run other builds of the
# same C): per ISA, a pattern every kernel's code must hold and, per line, what none may.
ENCODINGS = {
    # VEX vpdpbusd on ymm; no EVEX (first opcode byte 0x62 in 64-bit code), zmm, or ymm16-31.
    "avxvnni": (re.compile(r"\{vex\} vpdpbusd %ymm"),
                re.compile(r"^\s*[0-9a-f]+:\s+62 |zmm|[xy]mm(1[6-9]|2[0-9]|3[01])\b")),
    "avx512fp16": (re.compile(r"vfmadd231ph %zmm\d+,%zmm\d+,%zmm\d+"), None),
}
ENCODED = [e for e in ENTRIES if e.spec.isa in ENCODINGS]


@pytest.mark.skipif(HOST_ARCH != "x86_64", reason="x86-64 builds")
@pytest.mark.parametrize("entry", ENCODED, ids=lambda e: e.name)
def test_stand_in_tiers_real_build_encoding(entry, tmp_path):
    """The kernels of a tier tested through a stand-in build (STAND_INS), built with the tier's
    own flags, hold its instructions in the encoding its CPUs run (objdump -d)."""
    if not shutil.which("objdump"):
        pytest.skip("objdump not found; install binutils")
    obj = tmp_path / "k.o"
    r = subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Werror",
                        "-I", str(REPO_ROOT / GENERATED_RELPATH),
                        "-I", str(REPO_ROOT / "tilegen" / "core"), *ISAS[entry.spec.isa].cflags,
                        "-c", str(REPO_ROOT / kernel_path(entry.spec)), "-o", str(obj)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    dis = subprocess.run(["objdump", "-d", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    need, never = ENCODINGS[entry.spec.isa]
    assert need.search(dis), f"no {need.pattern!r} in {entry.name}"
    bad = [line for line in dis.splitlines() if never and never.search(line)]
    assert not bad, "\n".join(bad[:10])

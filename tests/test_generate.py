"""The `tilegen` command: generate/--check on a copy of the source tree, list, emit, bad input."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

import tilegen
from tilegen.tools.cli import main
from tilegen.dsl import parse_name, spec_from_name
from tilegen.dsl.registry import REGISTRY_RELPATH
from tilegen.dsl.render import GENERATED_RELPATH, INCLUDE_RELPATH, OPS_API_RELPATH
from tilegen.dsl.render import TEMPLATES_RELPATH, template_relpath


@pytest.fixture
def tree(tmp_path) -> Path:
    """A copy of the ops (registry, templates, header sections), the shared templates and the
    generated files: all `tilegen generate` reads or writes."""
    root = tmp_path / "repo"
    (root / "tilegen").mkdir(parents=True)
    for rel in (REGISTRY_RELPATH, TEMPLATES_RELPATH, GENERATED_RELPATH, INCLUDE_RELPATH):
        shutil.copytree(REPO_ROOT / rel, root / rel, ignore=shutil.ignore_patterns("*.so", "*.o"))
    shutil.copy(REPO_ROOT / OPS_API_RELPATH, root / OPS_API_RELPATH)
    return root


def template(tree: Path, name: str) -> Path:
    """The file of a template (its loader name) in the copied tree."""
    return tree / template_relpath(name, str(tree))


def tilegen_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_committed_tree_is_fresh(tree, capsys):
    code, out, err = tilegen_cli(capsys, "generate", "--check", "--root", tree)
    assert code == 0, err
    assert out.count("\n") == 1 and "fresh" in out


def test_template_change_makes_check_fail_and_generate_fixes_it(tree, capsys):
    path = template(tree, "gemm/ukernel.c.j2")
    path.write_text(path.read_text() + "/* a new line */\n")

    code, out, err = tilegen_cli(capsys, "generate", "--check", "--root", tree)
    assert code == 1
    stale = [line.split(": ", 1)[1] for line in err.splitlines() if line.startswith("stale: ")]
    kernels = sorted(p.relative_to(tree).as_posix() for p in (tree / GENERATED_RELPATH / "gemm").glob("*.c"))
    assert sorted(Path(s).as_posix() for s in stale) == kernels
    assert "run `tilegen generate" in err

    code, out, err = tilegen_cli(capsys, "generate", "--root", tree)
    assert code == 0 and len(out.splitlines()) == len(kernels)
    assert tilegen_cli(capsys, "generate", "--check", "--root", tree)[0] == 0


def test_files_are_written_only_when_their_content_changes(tree, capsys):
    generated = sorted([*(tree / GENERATED_RELPATH).rglob("*.*"), *(tree / INCLUDE_RELPATH).rglob("*.*")])
    for i, path in enumerate(generated):  # an old, distinct mtime on every file
        os.utime(path, ns=(10**18 + i, 10**18 + i))
    before = {p: p.stat().st_mtime_ns for p in generated}
    code, out, _ = tilegen_cli(capsys, "generate", "--root", tree)
    assert code == 0 and "up to date" in out
    assert {p: p.stat().st_mtime_ns for p in generated} == before


def test_orphan_file_is_reported_by_check_and_removed_by_generate(tree, capsys):
    orphan = tree / GENERATED_RELPATH / "gemm" / "tg_f32_gemm_ukernel_3x16__avx2.c"
    orphan.write_text("/* no registry entry renders this */\n")
    code, _, err = tilegen_cli(capsys, "generate", "--check", "--root", tree)
    assert code == 1 and f"orphan: {orphan.relative_to(tree)}" in err
    assert tilegen_cli(capsys, "generate", "--root", tree)[0] == 0
    assert not orphan.exists()


def python_m_tilegen(tmp_path, *argv, env=None) -> subprocess.CompletedProcess:
    """`python -m tilegen ARGV` from an empty directory (so the source tree cannot shadow the
    installed package), importing the same tilegen as this test process; `env` adds variables."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    path = [str(Path(tilegen.__path__[0]).parent), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p), **(env or {}))
    return subprocess.run([sys.executable, "-m", "tilegen", *map(str, argv)],
                          cwd=cwd, env=env, capture_output=True, text=True)


def test_check_through_python_dash_m(tree, tmp_path):
    proc = python_m_tilegen(tmp_path, "generate", "--check", "--root", tree)
    assert proc.returncode == 0, proc.stderr
    with open(template(tree, "gemm/pack.c.j2"), "a") as f:
        f.write("/* drift */\n")
    proc = python_m_tilegen(tmp_path, "generate", "--check", "--root", tree)
    assert proc.returncode == 1 and "stale: " in proc.stderr and "Traceback" not in proc.stderr


def test_generate_outside_a_checkout_is_an_error(tmp_path, capsys):
    code, out, err = tilegen_cli(capsys, "generate", "--check", "--root", tmp_path)
    assert code == 2 and err.startswith("tilegen: error:") and REGISTRY_RELPATH in err


# --- list and emit ---

def test_list_covers_every_isa_and_dtype(capsys):
    code, out, _ = tilegen_cli(capsys, "list")
    assert code == 0
    names = [parse_name(line.split()[0]) for line in out.splitlines()]
    for isa in ("avx512", "avx2", "neon"):
        for dtype in ("f32", "f64"):
            found = [n for n in names if (n["isa"], n["dtype"], n["op"]) == (isa, dtype, "gemm")]
            assert len(found) >= 2, (isa, dtype)
    assert any(n["isa"] == "scalar" for n in names)
    assert "not dispatched" in out


def test_list_filters(capsys):
    code, out, _ = tilegen_cli(capsys, "list", "--isa", "neon", "--dtype", "f64", "--op", "gemv",
                               "--root", REPO_ROOT)
    specs = [spec_from_name(line.split()[0]) for line in out.splitlines()]
    assert code == 0 and specs
    assert all((s.isa, s.dtype, s.op) == ("neon", "f64", "gemv") for s in specs)
    assert [line.split()[1] for line in out.splitlines()] == [s.tile for s in specs]
    # An op stands for its families' kernels.
    code, out, _ = tilegen_cli(capsys, "list", "--isa", "avx2", "--op", "conv2d")
    families = {spec_from_name(line.split()[0]).op for line in out.splitlines()}
    assert code == 0 and families == {"conv", "dwconv"}


def test_emit_prints_the_kernel(capsys):
    code, out, err = tilegen_cli(capsys, "emit", "--op", "gemm", "--dtype", "f32", "--isa", "neon",
                                 "--tile", "8x12", "--unroll", "2", "--epilogue", "bias,relu")
    assert code == 0, err
    assert "void tg_f32_gemm_bias_relu_ukernel_8x12__neon(" in out and "vfmaq_f32" in out
    code, out, err = tilegen_cli(capsys, "emit", "--op", "gemm", "--dtype", "f64", "--isa", "avx512",
                                 "--tile", "4x16", "--a-layout", "rows", "--kloop", "asm",
                                 "--prefetch", "4")
    assert code == 0, err
    assert "void tg_f64_gemm_ukernel_4x16__avx512_rows(" in out
    assert "vfmadd231pd" in out and "prefetcht0" in out and "#else" in out  # asm + fallback
    code, out, err = tilegen_cli(capsys, "emit", "--op", "conv", "--dtype", "f32", "--isa", "avx2",
                                 "--tile", "6x16", "--field", "kh=3", "--field", "kw=3",
                                 "--field", "stride=2")
    assert code == 0, err
    assert "void tg_f32_conv3x3s2_ukernel_6x16__avx2(" in out


@pytest.mark.parametrize("argv, words", [
    (["emit", "--op", "gemm", "--dtype", "f32", "--isa", "avx512", "--tile", "16x32"],
     ["tile", "budget of 32"]),
    (["emit", "--op", "gemm", "--dtype", "f32", "--isa", "avx2", "--tile", "8x16"],
     ["tile", "budget of 16", "the largest avx2 tile with NR=16 that fits is 6x16"]),
    (["emit", "--op", "gemm", "--dtype", "f32", "--isa", "avx512", "--tile", "4x24"], ["nr", "16"]),
    (["emit", "--op", "gemm", "--dtype", "f32", "--isa", "avx512", "--tile", "4by32"], ["tile"]),
    (["emit", "--op", "gemm", "--dtype", "f32", "--isa", "neon", "--tile", "8x12", "--tail", "mask"],
     ["tail", "temp"]),
    (["emit", "--op", "gemm", "--dtype", "f32", "--isa", "neon", "--tile", "8x12",
      "--epilogue", "gelu"], ["epilogue", "relu6"]),
    (["emit", "--op", "gemm", "--dtype", "f32", "--isa", "neon", "--tile", "8x12", "--unroll", "x"],
     ["unroll"]),
    (["emit", "--op", "gemm", "--dtype", "f16", "--isa", "neon", "--tile", "8x12"], ["dtype", "f64"]),
    (["emit", "--op", "gemm", "--dtype", "f32", "--isa", "neon", "--tile", "8x12", "--kloop", "asm"],
     ["kloop", "allowed: c"]),
    (["emit", "--op", "gemm", "--dtype", "f32", "--tile", "8x12"], ["--isa"]),
    (["list", "--isa", "sse"], ["--isa", "avx512", "neon", "scalar"]),
    (["list", "--op", "fft"], ["--op", "gemm"]),
    (["emit", "--op", "conv", "--dtype", "f32", "--isa", "avx2", "--tile", "6x16", "--field",
      "stride=3"], ["stride", "allowed"]),
    (["list", "--dtype", "int8"], ["--dtype", "f32"]),
    (["list", "--root", "/nonexistent"], ["root"]),
    (["frobnicate"], ["frobnicate"]),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    code, out, err = tilegen_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("tilegen: error: ") and err.count("\n") == 1, err
    assert all(w in err for w in words), err


def test_bad_input_from_a_real_process_has_no_traceback(tmp_path):
    proc = python_m_tilegen(tmp_path, "emit", "--op", "gemm", "--dtype", "f32", "--isa", "avx512",
                            "--tile", "16x32")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_no_arguments_prints_the_usage(capsys):
    code, out, err = tilegen_cli(capsys)
    assert code == 0 and err == ""
    assert out.startswith("usage: tilegen") and all(c in out for c in ("generate", "emit", "bench"))


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"tilegen {tilegen.__version__}"


def test_help_shows_choices_and_defaults(capsys):
    assert main(["emit", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    from tilegen.dsl import FAMILIES, ISAS
    for words in ("{" + ",".join(FAMILIES) + "}", "{" + ",".join(ISAS) + "}", "{mask,temp}", "one of packed, rows",
                  "(default packed)", "(default 0)"):
        assert words in out, words


def test_help_names_the_sdk_ops_and_every_bench_op(capsys):
    """`generate --help` lists the SDK's ops (the op registry, not `tilegen list`'s kernel
    families); `bench --help` says what each --op value measures, bert (a model) included."""
    from tilegen.ops import OPS
    from tilegen.tools import benchcases

    assert main(["generate", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    ops_help = out[out.index("--ops OPS with"):out.index("--out OUT with")]
    assert f"(allowed: {', '.join(OPS)};" in ops_help and "tilegen list" not in ops_help
    assert main(["bench", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "bert" in benchcases.OPS and "bert" not in OPS
    for op in benchcases.OPS:
        summary = " ".join(benchcases.summary(op).split())
        assert summary and f"{op}: {summary}" in out, op
    assert "bert: a model, not an op: a 6-layer BERT-style encoder forward" in out


def test_an_invalid_isa_cap_is_one_line_for_the_commands_that_need_the_core(tmp_path):
    """TILEGEN_ISA=foo makes `import tilegen` raise; the command still generates code and
    reports the error as one line where it needs the compiled core."""
    env = {"TILEGEN_ISA": "foo"}
    for argv in (["info"], ["bench", "--quick"], ["tune", "--quick"]):
        proc = python_m_tilegen(tmp_path, *argv, env=env)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr.startswith("tilegen: error: TILEGEN_ISA=foo: unknown ISA")
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    proc = python_m_tilegen(tmp_path, "list", "--op", "gemv", env=env)
    assert proc.returncode == 0 and "tg_f32_gemv_ukernel" in proc.stdout, proc.stderr


def test_emit_says_where_its_kernel_comes_from(capsys):
    argv = ["emit", "--op", "gemm", "--dtype", "f32", "--isa", "avx2", "--tile", "6x16"]
    code, out, err = tilegen_cli(capsys, *argv)
    head = out.split("*/")[0]
    assert code == 0 and err == ""
    assert "Emitted by `tilegen emit`" in head and "Generated by" not in head
    assert "the same kernel as tilegen/ops/gemm/gemm.yaml entry tg_f32_gemm_ukernel_6x16__avx2" in head
    assert f"-I {Path(tilegen.__file__).parent / 'generated'}" in head
    registry = (REPO_ROOT / GENERATED_RELPATH / "gemm" / "tg_f32_gemm_ukernel_6x16__avx2.c").read_text()
    assert out.split("*/", 1)[1] == registry.split("*/", 1)[1]  # the registry kernel's body
    code, out, err = tilegen_cli(capsys, *argv, "--unroll", "4")
    assert code == 0 and err.startswith("tilegen: warning: the emitted kernel is NOT the registry's")
    assert "unroll 4 (registry: 2)" in out.split("*/")[0]
    code, out, err = tilegen_cli(capsys, "emit", "--op", "gemm", "--dtype", "f32", "--isa", "avx2",
                                 "--tile", "5x16")
    assert code == 0 and "not in the registry" in out.split("*/")[0]


def test_a_build_that_leaves_an_isa_out_names_none_of_its_kernels():
    """-DTG_SKIP_ISA_<NAME> (setup.py's, for an ISA whose flags the compiler lacks) takes the
    ISA's kernels out of every family's list and its probes, and its bit out of the shipped
    set, so the baseline code links without them; the other ISAs' lists stay."""
    gen = REPO_ROOT / GENERATED_RELPATH

    def expand(isa, *defines):
        src = ("#include \"tg_ukernels.h\"\n#define ROW(isa, ...) <isa>\n"
               "kernels: TG_FOREACH_GEMMF16_UKERNEL_f16(ROW) TG_FOREACH_GEMMS8_UKERNEL_s8(ROW)\n"
               "probes: TG_FOREACH_FMA_PROBE(ROW)\nshipped: TG_ISAS_SHIPPED\n"
               f"id: TG_ISA_{isa.upper()}\nother: TG_ISA_AVX512VNNI\n")
        cc = shutil.which("gcc") or shutil.which("cc")
        out = subprocess.run([cc, "-E", "-P", "-x", "c", f"-I{gen}", *defines, "-"], input=src,
                             capture_output=True, text=True, check=True).stdout
        return {k: v.strip() for k, v in (line.split(":", 1) for line in out.splitlines()
                                          if line.split(":")[0] in
                                          ("kernels", "probes", "shipped", "id", "other"))}

    for isa in ("avx512fp16", "avxvnni"):
        full, cut = expand(isa), expand(isa, f"-DTG_SKIP_ISA_{isa.upper()}")
        tag, bit = f"<{full['id']}>", f"(1u << {full['id']})"
        if tag not in full["kernels"]:
            pytest.skip(f"this architecture's build has no {isa} kernels")
        assert tag in full["probes"] and bit in full["shipped"]
        assert tag not in cut["kernels"] and tag not in cut["probes"]
        assert bit not in cut["shipped"]
        assert f"<{full['other']}>" in cut["kernels"]  # the others stay

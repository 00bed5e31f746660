"""`tilegen tune` and the tuning cache: tune --quick writes a cache that the next import applies,
TILEGEN_TUNING=off ignores it, corrupt and foreign caches are ignored with a warning, and matmul
stays right under a tuned configuration. Every child uses TILEGEN_CACHE_DIR in tmp_path, so the
real per-user cache is never read or written."""
import json
import sys
import textwrap

import numpy as np
import pytest
import yaml

import cprog
import tilegen
from tilegen.tools import tuning
from tilegen.core import _core
from tilegen.ops.gemm import _gemm
from tilegen.dsl import load_registry
from tilegen.tools.report import format_runtime_info

PROBE = textwrap.dedent("""
    import json, warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import tilegen
    import numpy as np
    from tilegen.core import _core
    from tilegen.ops.gemm import _gemm
    from tilegen.ops.paged_attention import _paged_attention as _attention
    cfg = {d: _gemm.gemm_config(t) for d, t in (("f32", np.float32), ("f64", np.float64))}
    print(json.dumps({
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
        "tuning": tilegen.runtime_info()["tuning"],
        "paged": _attention.kernel_name(),
        "config": {d: {"kc": c["kc"], "nc": c["nc"], "rows": c["rows"]["kernel"],
                       "packed": c["packed"]["kernel"], "isa": c["isa"],
                       "stream_rows": c["stream_rows"], "b_inner_rows": c["b_inner_rows"]}
                   for d, c in cfg.items()},
    }))
""")


def env_for(cache_dir, **extra):
    return cprog.clean_env(**{"TILEGEN_CACHE_DIR": str(cache_dir), "TILEGEN_TUNING": "on", **extra})


def probe(cache_dir, **extra):
    r = cprog.python(PROBE, env=env_for(cache_dir, **extra), timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def builtin(tmp_path_factory):
    """The configuration with no cache at all (what an untuned machine runs)."""
    return probe(tmp_path_factory.mktemp("empty"))["config"]


def builtin_paged():
    from tilegen.ops.paged_attention import _paged_attention as _attention

    return _attention.kernel_name()


def isa_of(dtype):
    return tilegen.runtime_info()["kernels"]["gemm"][dtype]["isa"]


def other_tile(dtype, layout="rows"):
    """A production main-tile candidate that is not the largest (None if there is only one)."""
    nr = tilegen.runtime_info()["kernels"]["gemm"][dtype][layout]["nr"]
    names = [e for e in load_registry()
             if e.production and e.spec.op == "gemm" and e.spec.dtype == dtype
             and e.spec.isa == isa_of(dtype) and e.spec.a_layout == layout
             and e.spec.nr == nr and not e.spec.epilogue and e.spec.mr > 1]
    names.sort(key=lambda e: -e.spec.mr)
    return names[1].name if len(names) > 1 else None


def other_paged():
    """A decode kernel tune may choose that is not the built-in one (None if there is none)."""
    from tilegen.ops.paged_attention import _paged_attention as _attention

    others = [n for n in _attention.paged_kernels() if n != _attention.kernel_name()]
    return others[0] if others else None


def write_cache(cache_dir, doc=None, **changes):
    """A cache for this machine (as tuning.write makes it), with top-level `changes`."""
    if doc is None:
        key = {"brand": tilegen.runtime_info()["cpu_brand"], "arch": tilegen.runtime_info()["arch"],
               "features": tilegen.runtime_info()["features"]["os_enabled"]}
        nr32 = _gemm.gemm_config(np.float32)["nr"]
        nr64 = _gemm.gemm_config(np.float64)["nr"]
        gemm = {isa_of("f32"): {"f32": {"kc": 96, "nc": 3 * nr32, "kernel": other_tile("f32"),
                                        "stream_rows": 5, "b_inner_rows": 100}}}
        gemm.setdefault(isa_of("f64"), {})["f64"] = {"kc": 40, "nc": 5 * nr64,
                                                     "kernel": other_tile("f64"), "stream_rows": 3,
                                                     "b_inner_rows": 7}
        doc = {"format": 1, "tilegen_version": tilegen.__version__, "cpu": key,
               "isa": {isa: {"gemm": g} for isa, g in gemm.items()}}
        doc["isa"][isa_of("f32")]["paged_attention"] = {"f32": {"kernel": other_paged()}}
    doc.update(changes)
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / "tuning.yaml"
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return path


def test_tune_quick_writes_a_cache_the_next_import_applies(tmp_path, builtin):
    cache = tmp_path / "cache"
    r = cprog.run([sys.executable, "-m", "tilegen", "tune", "--quick"], env=env_for(cache),
                  timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for dtype in ("f32", "f64"):
        assert f"{dtype} ({isa_of(dtype)}): built-in KC" in r.stdout
    assert "geometric mean" in r.stdout and "chosen:" in r.stdout and "wrote " in r.stdout
    assert "  stream " in r.stdout and "stream rows" in r.stdout
    assert "  b-inner " in r.stdout and "b-inner rows" in r.stdout
    assert "f32 paged attention" in r.stdout and "(built-in)" in r.stdout
    doc = tuning.load(str(cache / "tuning.yaml"))
    assert doc["tilegen_version"] == tilegen.__version__
    entry = doc["isa"][isa_of("f32")]
    assert set(entry["gemm"]) >= {"f32"} and entry["measured"]["f32"]["before_gflops"]
    for gflops in entry["measured"]["f32"]["after_gflops"].values():
        assert gflops > 0
    assert all(rate > 0 for rate in entry["measured"]["paged_attention"].values())
    from tilegen.ops.paged_attention import _paged_attention as _attention
    assert set(entry["measured"]["paged_attention"]) == set(_attention.paged_kernels())

    got = probe(cache)
    assert got["warnings"] == [] and got["tuning"]["status"] == "applied"
    assert got["tuning"]["file"] == str(cache / "tuning.yaml")
    for dtype, cfg in doc["isa"][isa_of("f32")]["gemm"].items():
        assert (got["config"][dtype]["kc"], got["config"][dtype]["nc"]) == (cfg["kc"], cfg["nc"])
        want_stream = cfg.get("stream_rows") or builtin[dtype]["stream_rows"]
        assert got["config"][dtype]["stream_rows"] == want_stream
        want_b_inner = cfg.get("b_inner_rows") or builtin[dtype]["b_inner_rows"]
        assert got["config"][dtype]["b_inner_rows"] == want_b_inner
    assert got["paged"] == (entry["paged_attention"]["f32"]["kernel"] or builtin_paged())

    # The same file with values tune may well not have picked: the import must apply them.
    path = write_cache(cache)
    got = probe(cache)
    assert got["tuning"]["status"] == "applied", got
    assert got["config"]["f32"]["kc"] == 96 and got["config"]["f64"]["kc"] == 40
    assert got["config"]["f32"]["stream_rows"] == 5 and got["config"]["f64"]["stream_rows"] == 3
    assert got["config"]["f32"]["b_inner_rows"] == 100 and got["config"]["f64"]["b_inner_rows"] == 7
    assert got["config"]["f32"] != builtin["f32"] and got["config"]["f64"] != builtin["f64"]
    if other_tile("f32"):
        assert got["config"]["f32"]["rows"] == other_tile("f32")
    assert got["paged"] == (other_paged() or builtin_paged())

    r = cprog.run([sys.executable, "-m", "tilegen", "tune", "--reset"], env=env_for(cache))
    assert r.returncode == 0 and not path.exists() and "removed" in r.stdout


def test_tuning_off_ignores_the_cache(tmp_path, builtin):
    write_cache(tmp_path)
    got = probe(tmp_path, TILEGEN_TUNING="off")
    assert got["warnings"] == [] and got["config"] == builtin
    assert got["tuning"] == {"status": "off", "applied": False, "file": None,
                             "detail": "TILEGEN_TUNING=off"}


def test_no_cache_reads_nothing(tmp_path):
    code = ("import sys, tilegen; print('yaml' in sys.modules, "
            "tilegen.runtime_info()['tuning']['status'])")
    r = cprog.python(code, env=env_for(tmp_path / "nothing-here"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "none"]


@pytest.mark.parametrize("content, words", [
    ("{{{ not yaml", "not valid YAML"),
    ("just a string\n", "not a YAML mapping"),
    ("format: 99\n", "format is 99"),
    (b"\xff\xfe\x00garbage", "not"),
])
def test_corrupt_cache_warns_and_is_ignored(tmp_path, builtin, content, words):
    (tmp_path / "tuning.yaml").write_bytes(content if isinstance(content, bytes) else content.encode())
    got = probe(tmp_path)
    assert got["config"] == builtin and got["tuning"]["status"] == "ignored"
    (w,) = got["warnings"]
    assert w.startswith("TuningWarning: tilegen: ignoring the tuning cache") and words in w, w
    assert "tilegen tune" in w


def test_malformed_entries_warn_and_are_ignored(tmp_path, builtin):
    path = write_cache(tmp_path)
    doc = yaml.safe_load(path.read_text())
    doc["isa"][isa_of("f32")]["gemm"]["f32"]["kc"] = -5
    write_cache(tmp_path, doc)
    got = probe(tmp_path)
    assert got["config"] == builtin and "kc is -5" in got["warnings"][0]
    doc["isa"][isa_of("f32")]["gemm"]["f32"].update(kc=128, kernel="tg_f32_gemm_ukernel_99x32__nope")
    write_cache(tmp_path, doc)
    got = probe(tmp_path)
    assert got["config"] == builtin and got["tuning"]["status"] == "ignored"
    assert "does not fit this build" in got["warnings"][0]
    doc["isa"][isa_of("f32")]["gemm"]["f32"].update(kernel=None, stream_rows=65)
    write_cache(tmp_path, doc)
    got = probe(tmp_path)
    assert got["config"] == builtin and "stream_rows is 65" in got["warnings"][0]
    doc["isa"][isa_of("f32")]["gemm"]["f32"].update(stream_rows=None, b_inner_rows=257)
    write_cache(tmp_path, doc)
    got = probe(tmp_path)
    assert got["config"] == builtin and "b_inner_rows is 257" in got["warnings"][0]
    doc["isa"][isa_of("f32")]["gemm"]["f32"].update(b_inner_rows=None)
    for kernel, words in ((5, "paged_attention: expected f32"),
                          ("tg_f32_attndecode_ukernel_9x9__nope", "does not fit this build")):
        doc["isa"][isa_of("f32")]["paged_attention"] = {"f32": {"kernel": kernel}}
        write_cache(tmp_path, doc)
        got = probe(tmp_path)
        assert got["config"] == builtin and words in got["warnings"][0], got["warnings"]
        assert got["paged"] == builtin_paged()


@pytest.mark.parametrize("change, words", [
    ({"cpu": {"brand": "Some Other CPU 9000", "arch": "x86_64", "features": []}}, "another CPU"),
    ({"tilegen_version": "0.0.1-other"}, "written by tilegen 0.0.1-other"),
    ("features", "other usable features"),
    ("isa", "not for the ISA in use"),
])
def test_foreign_cache_warns_and_is_ignored(tmp_path, builtin, change, words):
    path = write_cache(tmp_path)
    doc = yaml.safe_load(path.read_text())
    if change == "features":
        doc["cpu"]["features"] = doc["cpu"]["features"][:-1] + ["sve2"]
    elif change == "isa":
        doc["isa"] = {"neon" if isa_of("f32") != "neon" else "avx512": next(iter(doc["isa"].values()))}
    else:
        doc.update(change)
    write_cache(tmp_path, doc)
    got = probe(tmp_path)
    assert got["config"] == builtin and got["tuning"]["status"] == "ignored"
    (w,) = got["warnings"]
    assert "ignoring the tuning cache" in w and words in w, w


CHECK = textwrap.dedent("""
    import numpy as np, tilegen
    from tilegen.core import _core
    from tilegen.ops.gemm import _gemm
    assert tilegen.runtime_info()["tuning"]["status"] == "applied", tilegen.runtime_info()["tuning"]
    rng = np.random.default_rng(5)
    bad = []
    for t, rtol in ((np.float32, 2e-5), (np.float64, 1e-12)):
        cfg = _gemm.gemm_config(t)
        # 16 x 1100 x 700: few rows times a B beyond L2/2, and 1100 x 700 x 16: an A beyond
        # L2 under few columns (the tuned stream rows: B's sweep depth, A's panel height)
        for m, k, n in ((1, 1, 1), (3, 41, 7), (33, 97, 130), (130, 250, 67), (257, 400, 301),
                        (1, 1100, 700), (16, 1100, 700), (1100, 700, 16), (1100, 700, 40)):
            for order in "CF":
                a = np.asarray(rng.uniform(-1, 1, (m, k)), t, order=order)
                b = rng.uniform(-1, 1, (k, n)).astype(t)
                want = a.astype(np.float64) @ b.astype(np.float64)
                scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
                for got in (tilegen.matmul(a, b), tilegen.matmul(a[::2], b[:, ::3].copy())):
                    ref = want if got.shape == want.shape else want[::2, ::3]
                    sc = scale if got.shape == want.shape else scale[::2, ::3]
                    if not np.all(np.abs(got - ref) <= rtol * np.sqrt(k) * (sc + 1)):
                        bad.append((t.__name__, m, k, n, order))
        print(t.__name__, cfg["kc"], cfg["nc"], cfg["rows"]["kernel"])
    print("bad", bad)
""")


def test_matmul_stays_right_under_a_tuned_config(tmp_path):
    """KC smaller than K, NC a few NR wide and a smaller main tile: many blocks and edges."""
    write_cache(tmp_path)
    for threads in ("1", "2"):
        r = cprog.python(CHECK, env=env_for(tmp_path, TILEGEN_NUM_THREADS=threads), timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[-1] == "bad []", r.stdout
        assert "float32 96 " in r.stdout and "float64 40 " in r.stdout


def test_cache_folder_follows_the_platform(monkeypatch, tmp_path):
    monkeypatch.delenv("TILEGEN_CACHE_DIR", raising=False)
    monkeypatch.setattr(tuning.sys, "platform", "linux")
    monkeypatch.setattr(tuning.os, "name", "posix")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tuning.cache_path() == str(tmp_path / "xdg" / "tilegen" / "tuning.yaml")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert tuning.cache_dir() == str(tmp_path / ".cache" / "tilegen")
    monkeypatch.setattr(tuning.sys, "platform", "darwin")
    assert tuning.cache_dir() == str(tmp_path / "Library" / "Caches" / "tilegen")
    monkeypatch.setenv("TILEGEN_CACHE_DIR", str(tmp_path / "mine"))
    assert tuning.cache_dir() == str(tmp_path / "mine")


def test_write_keeps_other_isas_and_replaces_foreign_files(tmp_path):
    path = str(tmp_path / "tuning.yaml")
    entry = {"gemm": {"f32": {"kc": 128, "nc": 512, "kernel": None}}}
    tuning.write({"isa_a": entry}, path)
    tuning.write({"isa_b": entry}, path)
    assert set(tuning.load(path)["isa"]) == {"isa_a", "isa_b"}
    doc = tuning.load(path)
    doc["cpu"]["brand"] = "elsewhere"
    (tmp_path / "tuning.yaml").write_text(yaml.safe_dump(doc))
    tuning.write({"isa_c": entry}, path)
    assert set(tuning.load(path)["isa"]) == {"isa_c"}
    with pytest.raises(tuning.CacheError, match="kc"):
        tuning.write({"isa_d": {"gemm": {"f32": {"kc": 0, "nc": 1}}}}, path)


def test_report_shows_the_tuning_state():
    text = format_runtime_info({"tuning": {"status": "applied", "applied": True, "file": "/c/t.yaml",
                                           "detail": "applied f32 (avx2)"}})
    assert text == "tuning  applied f32 (avx2) from /c/t.yaml"
    text = format_runtime_info({"tuning": {"status": "ignored", "file": "/c/t.yaml",
                                           "detail": "it was written on another CPU"}})
    assert text == "tuning  ignored /c/t.yaml: it was written on another CPU"
    assert format_runtime_info({"tuning": {"status": "off", "detail": "TILEGEN_TUNING=off"}}) == \
        "tuning  off (TILEGEN_TUNING=off)"
    assert tilegen.runtime_info()["tuning"]["status"] == "off"  # tests/conftest.py turns it off


@pytest.mark.parametrize("argv", [["--dtype", "f16"], ["--quick", "extra"], ["--bogus"]])
def test_tune_bad_options_are_one_line_errors(capsys, argv):
    from tilegen.tools.cli import main

    assert main(["tune", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tilegen: error:") and err.count("\n") == 1


@pytest.mark.parametrize("depth", [-1, 65])
def test_stream_rows_out_of_range_is_refused(depth):
    before = _gemm.gemm_config(np.float32)["stream_rows"]
    with pytest.raises(ValueError, match="stream_rows"):
        _gemm.set_gemm_stream_rows(np.float32, depth)
    assert _gemm.gemm_config(np.float32)["stream_rows"] == before


@pytest.mark.parametrize("rows", [-1, _gemm.B_INNER_ROWS_MAX + 1])
def test_b_inner_rows_out_of_range_is_refused(rows):
    before = _gemm.gemm_config(np.float64)["b_inner_rows"]
    with pytest.raises(ValueError, match="b_inner_rows: rows=.* allowed: 0 to 256"):
        _gemm.set_gemm_b_inner_rows(np.float64, rows)
    assert _gemm.gemm_config(np.float64)["b_inner_rows"] == before

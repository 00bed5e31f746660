"""`tilegen tune` and the tuning cache: tune --quick writes a cache that the next import applies,
every op with a tune plug-in takes part, TILEGEN_TUNING=off ignores the cache, corrupt and
foreign caches are ignored with a warning, every candidate a plug-in offers computes right,
and matmul stays right under a tuned configuration. Every child uses TILEGEN_CACHE_DIR in
tmp_path, so the real per-user cache is never read or written."""
import json
import sys
import textwrap

import numpy as np
import pytest
import yaml

import cprog
import tilegen
from tilegen.ops import OPS
from tilegen.ops.attention import _attention
from tilegen.ops.gemm import _gemm
from tilegen.ops.image import _image
from tilegen.ops.paged_attention import _paged_attention
from tilegen.tools import tuning
from tilegen.tools.report import format_runtime_info

PROBE = textwrap.dedent("""
    import json, warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import tilegen
    import numpy as np
    from tilegen.ops.gemm import _gemm
    from tilegen.ops.attention import _attention
    from tilegen.ops.conv2d import _conv2d
    from tilegen.ops.image import _image
    from tilegen.ops.paged_attention import _paged_attention
    cfg = {d: _gemm.gemm_config(t) for d, t in (("f32", np.float32), ("f64", np.float64))}
    print(json.dumps({
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
        "tuning": tilegen.runtime_info()["tuning"],
        "paged": _paged_attention.kernel_name(),
        "attention": _attention.kernel_name(),
        "image": _image.kernel_names()["hfilt"],
        "conv": {k: v for k in ("nchw_spatial", "nhwc_pointwise")
                 for v in [_conv2d.preferred(*{"nchw_spatial": ("NCHW", "spatial"),
                                               "nhwc_pointwise": ("NHWC", "pointwise")}[k])]},
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
    """What an untuned machine runs (no cache at all)."""
    got = probe(tmp_path_factory.mktemp("empty"))
    return {k: got[k] for k in ("config", "paged", "attention", "image", "conv")}


def chosen(got):
    return {k: got[k] for k in ("config", "paged", "attention", "image", "conv")}


def isa():
    return tilegen.core._core.isa_in_use()


def other(names, builtin_name):
    """A candidate other than the built-in one, or None."""
    return next((n for n in names if n != builtin_name), None)


def other_tile(dtype):
    from tilegen.ops.gemm import tune

    return next(iter(tune._tiles(dtype)), None)


def tuned_values():
    """A cache entry for every op, with values tune may well not have picked."""
    nr32 = _gemm.gemm_config(np.float32)["nr"]
    nr64 = _gemm.gemm_config(np.float64)["nr"]
    gemm = {"f32_kc": 96, "f32_nc": 3 * nr32, "f32_stream_rows": 5, "f32_b_inner_rows": 100,
            "f64_kc": 40, "f64_nc": 5 * nr64, "f64_stream_rows": 3, "f64_b_inner_rows": 7}
    for dt in ("f32", "f64"):
        if other_tile(dt):
            gemm[f"{dt}_kernel"] = other_tile(dt)
    ops = {"gemm": gemm}
    for op, names, name in (("attention", _attention.kernels(), _attention.kernel_name()),
                            ("paged_attention", _paged_attention.paged_kernels(),
                             _paged_attention.kernel_name())):
        if other(names, name):
            ops[op] = {"f32_kernel": other(names, name)}
    if len(_image.kernel_isas()) > 1:
        ops["image"] = {"isa": _image.kernel_isas()[1]}
    ops["conv2d"] = {"nchw_spatial_method": "im2col", "nhwc_pointwise_method": "gemm"}
    return ops


def write_cache(cache_dir, doc=None, **changes):
    """A cache for this machine (as tuning.write makes it), with top-level `changes`."""
    if doc is None:
        info = tilegen.runtime_info()
        key = {"brand": info["cpu_brand"], "arch": info["arch"],
               "features": info["features"]["os_enabled"]}
        doc = {"format": tuning.FORMAT, "tilegen_version": tilegen.__version__, "cpu": key,
               "isa": {isa(): {"ops": tuned_values()}}}
    doc.update(changes)
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / "tuning.yaml"
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return path


def test_tune_quick_writes_a_cache_the_next_import_applies(tmp_path, builtin):
    cache = tmp_path / "cache"
    r = cprog.run([sys.executable, "-m", "tilegen", "tune", "--quick"], env=env_for(cache),
                  timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    hooks = tuning.plugins()
    assert set(hooks) >= {"gemm", "conv2d", "attention", "paged_attention", "image", "rmsnorm"}
    for op in hooks:  # every op with a plug-in took part, with its before/after table
        assert f"\n{op}:\n" in r.stdout and (f"  {op}: built-in -> tuned" in r.stdout or
                                              f"  {op}: the built-in configuration" in r.stdout), op
    for label in ("f32 main tile", "f32 KC", "f64 NC", "f32 stream rows", "f64 b-inner rows",
                  "f32 decode kernel", "kernel set", "NCHW spatial path"):
        assert f"  {label}, " in r.stdout, label
    assert "noise" in r.stdout and "wrote " in r.stdout
    doc = tuning.load(str(cache / "tuning.yaml"))
    assert doc["tilegen_version"] == tilegen.__version__
    entry = doc["isa"][isa()]
    assert set(entry["ops"]) == set(hooks) and set(entry["measured"]) == set(hooks)
    for op, m in entry["measured"].items():
        assert m["before"] and set(m["before"]) == set(m["after"]), op
        assert all(v > 0 for v in [*m["before"].values(), *m["after"].values()]), op
    assert set(entry["measured"]["paged_attention"]["knobs"]["f32_kernel"]["rates"]) == {
        (n + " (built-in)") if n == _paged_attention.kernel_name() else n
        for n in _paged_attention.paged_kernels()}

    got = probe(cache)
    assert got["warnings"] == [] and got["tuning"]["status"] == "applied"
    assert got["tuning"]["file"] == str(cache / "tuning.yaml")
    assert got["tuning"]["chosen"] == entry["ops"]
    gemm = entry["ops"]["gemm"]
    for dt in ("f32", "f64"):
        for what in ("kc", "nc", "stream_rows", "b_inner_rows"):
            want = gemm.get(f"{dt}_{what}", builtin["config"][dt][what])
            assert got["config"][dt][what] == want, (dt, what)

    # One op alone: the others' entries stay.
    r = cprog.run([sys.executable, "-m", "tilegen", "tune", "--quick", "--op", "image"],
                  env=env_for(cache), timeout=120)
    assert r.returncode == 0 and "\nimage:\n" in r.stdout and "\ngemm:\n" not in r.stdout, r.stdout
    assert set(tuning.load(str(cache / "tuning.yaml"))["isa"][isa()]["ops"]) == set(hooks)

    r = cprog.run([sys.executable, "-m", "tilegen", "tune", "--reset"], env=env_for(cache))
    assert r.returncode == 0 and not (cache / "tuning.yaml").exists() and "removed" in r.stdout


def test_the_import_applies_every_op_entry(tmp_path, builtin):
    """Values tune may well not have picked: the import must apply each of them."""
    write_cache(tmp_path)
    got = probe(tmp_path)
    assert got["tuning"]["status"] == "applied" and got["warnings"] == [], got
    assert got["config"]["f32"]["kc"] == 96 and got["config"]["f64"]["kc"] == 40
    assert got["config"]["f32"]["stream_rows"] == 5 and got["config"]["f64"]["stream_rows"] == 3
    assert got["config"]["f32"]["b_inner_rows"] == 100 and got["config"]["f64"]["b_inner_rows"] == 7
    if other_tile("f32"):
        assert other_tile("f32") in (got["config"]["f32"]["rows"], got["config"]["f32"]["packed"])
    values = tuned_values()
    assert got["attention"] == values.get("attention", {}).get("f32_kernel", builtin["attention"])
    assert got["paged"] == values.get("paged_attention", {}).get("f32_kernel", builtin["paged"])
    if "image" in values:
        assert got["image"].endswith("__" + values["image"]["isa"])
    assert got["conv"] == {"nchw_spatial": "im2col", "nhwc_pointwise": "gemm"}
    assert chosen(got) != builtin


def test_tuning_off_ignores_the_cache(tmp_path, builtin):
    write_cache(tmp_path)
    got = probe(tmp_path, TILEGEN_TUNING="off")
    assert got["warnings"] == [] and chosen(got) == builtin
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
    assert chosen(got) == builtin and got["tuning"]["status"] == "ignored"
    (w,) = got["warnings"]
    assert w.startswith("TuningWarning: tilegen: ignoring the tuning cache") and words in w, w
    assert "tilegen tune" in w


@pytest.mark.parametrize("op, values, words", [
    ("gemm", {"f32_kc": -5}, "f32_kc is -5"),
    ("gemm", {"f32_kernel": "tg_f32_gemm_ukernel_99x32__nope"}, "not a production kernel"),
    ("gemm", {"f32_stream_rows": 65}, "f32_stream_rows is 65"),
    ("gemm", {"f64_b_inner_rows": 257}, "f64_b_inner_rows is 257"),
    ("gemm", {"f32_bogus": 3}, "'f32_bogus' is not a knob"),
    ("attention", {"f32_kernel": "tg_f32_attention_ukernel_9x9__nope"}, "not an attention kernel"),
    ("paged_attention", {"f32_kernel": "tg_f32_attndecode_ukernel_9x9__nope"},
     "not a decode kernel"),
    ("image", {"isa": "sse9"}, "has no complete filter kernel set"),
    ("conv2d", {"nchw_spatial_method": "depthwise"}, "nchw_spatial_method is 'depthwise'"),
    ("rmsnorm", {"f32_kernel": "tg_f32_rmsnorm_ukernel_9x9__nope"}, "not an rmsnorm kernel"),
    ("fft", {"size": 4}, "no op 'fft'"),
])
def test_entries_this_build_cannot_take_are_ignored_whole(tmp_path, builtin, op, values, words):
    """One value an op refuses: the whole cache is ignored (nothing half-applied), with a
    warning naming it."""
    path = write_cache(tmp_path)
    doc = yaml.safe_load(path.read_text())
    doc["isa"][isa()]["ops"][op] = values
    write_cache(tmp_path, doc)
    got = probe(tmp_path)
    assert chosen(got) == builtin and got["tuning"]["status"] == "ignored"
    (w,) = got["warnings"]
    assert "does not fit this build" in w and words in w, w


def test_malformed_values_are_refused_when_read(tmp_path, builtin):
    path = write_cache(tmp_path)
    doc = yaml.safe_load(path.read_text())
    doc["isa"][isa()]["ops"]["gemm"]["f32_kc"] = [1, 2]
    write_cache(tmp_path, doc)
    got = probe(tmp_path)
    assert chosen(got) == builtin and "integer or string value" in got["warnings"][0]


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
        doc["isa"] = {"neon" if isa() != "neon" else "avx512": next(iter(doc["isa"].values()))}
    else:
        doc.update(change)
    write_cache(tmp_path, doc)
    got = probe(tmp_path)
    assert chosen(got) == builtin and got["tuning"]["status"] == "ignored"
    (w,) = got["warnings"]
    assert "ignoring the tuning cache" in w and words in w, w


def test_every_candidate_computes_right():
    """Each knob of each op's plug-in, at every value it offers (quick plans), passes the op's
    check; afterwards the built-ins are back."""
    before = tilegen.runtime_info()["kernels"]
    try:
        for op, hook in tuning.plugins().items():
            for knob in hook.knobs(quick=True):
                for value in knob.candidates({}):
                    knob.apply(value)
                    hook.check()
                knob.apply(None)
    finally:
        tuning.restore_builtins()
    assert tilegen.runtime_info()["kernels"] == before


def test_every_op_with_candidates_has_a_plug_in():
    """Ops whose families register kernels the dispatch never picks by itself (production:
    false alternatives) name them in a tune plug-in."""
    from tilegen.dsl import load_registry

    alternatives = {e.spec.family.op for e in load_registry() if not e.production}
    assert alternatives <= set(tuning.plugins()), alternatives
    for name in tuning.plugins():
        assert name in OPS


CHECK = textwrap.dedent("""
    import numpy as np, tilegen
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


def test_write_merges_isas_and_ops_and_replaces_foreign_files(tmp_path):
    path = str(tmp_path / "tuning.yaml")
    tuning.write({"isa_a": {"ops": {"gemm": {"f32_kc": 128}}}}, path)
    tuning.write({"isa_b": {"ops": {"gemm": {"f32_kc": 256}}}}, path)
    tuning.write({"isa_a": {"ops": {"image": {"isa": "avx2"}}}}, path)
    doc = tuning.load(path)
    assert set(doc["isa"]) == {"isa_a", "isa_b"}
    assert doc["isa"]["isa_a"]["ops"] == {"gemm": {"f32_kc": 128}, "image": {"isa": "avx2"}}
    doc["cpu"]["brand"] = "elsewhere"
    (tmp_path / "tuning.yaml").write_text(yaml.safe_dump(doc))
    tuning.write({"isa_c": {"ops": {}}}, path)
    assert set(tuning.load(path)["isa"]) == {"isa_c"}
    with pytest.raises(tuning.CacheError, match="integer or string"):
        tuning.write({"isa_d": {"ops": {"gemm": {"f32_kc": 1.5}}}}, path)


def test_report_shows_the_tuning_state_and_choices():
    text = format_runtime_info({"tuning": {
        "status": "applied", "applied": True, "file": "/c/t.yaml", "detail": "applied avx2: gemm",
        "chosen": {"gemm": {"f32_kc": 512}},
        "measured": {"gemm": {"knobs": {"f32_kc": {"rates": {"1024 (built-in)": 100.0,
                                                             "512": 104.2}, "noise": 0.012,
                                                   "chosen": "512"}}}}}})
    assert text.splitlines()[0] == "tuning  applied avx2: gemm from /c/t.yaml"
    assert "gemm f32_kc = 512 (+4.2% over 1024 (built-in), noise 1.2%)" in text
    text = format_runtime_info({"tuning": {"status": "ignored", "file": "/c/t.yaml",
                                           "detail": "it was written on another CPU"}})
    assert text == "tuning  ignored /c/t.yaml: it was written on another CPU"
    assert format_runtime_info({"tuning": {"status": "off", "detail": "TILEGEN_TUNING=off"}}) == \
        "tuning  off (TILEGEN_TUNING=off)"
    assert tilegen.runtime_info()["tuning"]["status"] == "off"  # tests/conftest.py turns it off


@pytest.mark.parametrize("argv", [["--op", "fft"], ["--quick", "extra"], ["--bogus"]])
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

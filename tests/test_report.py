"""`tilegen info` / `tg.show_config()`: the runtime_info() report."""
import tilegen
from tilegen.tools.cli import main
from tilegen.tools.report import format_runtime_info

FULL = {
    "version": "0.1.0", "numpy_version": "2.0.0", "arch": "x86_64", "cpu_brand": "Some CPU",
    "features": {"detected": ["sse2", "avx2", "avx512f"], "os_enabled": ["sse2", "avx2"]},
    "isa_cap": None, "isas_available": ["avx2", "scalar"],
    "kernels": {"gemm": {"f32": {"isa": "avx2", "kernel": "tg_f32_gemm_ukernel_6x16__avx2",
                                 "kernels_by_rows": ["tg_f32_gemm_ukernel_1x16__avx2"]
                                 + ["tg_f32_gemm_ukernel_6x16__avx2"] * 5,
                                 "mc": 72, "kc": 256, "nc": 4080}}},
    "threads": {"num_threads": 4, "backend": "pthreads"}, "library": "/x/libtilegen.so",
}


def rows(text):
    return {line[:line.index("  ")]: line[line.index("  "):].strip()
            for line in text.splitlines() if line[:1].strip()}


def test_full_report_is_aligned_and_complete():
    text = format_runtime_info(FULL)
    r = rows(text)
    assert r["CPU"] == "Some CPU" and r["features"] == "sse2 avx2 avx512f"
    assert r["OS-enabled"] == "sse2 avx2" and r["ISA cap"].startswith("none")
    assert r["gemm f32"].startswith("tg_f32_gemm_ukernel_6x16__avx2")
    assert "for m = 1: 1x16, 2-6: 6x16" in text
    assert "MC 72, KC 256, NC 4080" in text and r["threads"] == "4, pthreads"
    assert "tilegen 0.1.0" in r["versions"] and r["library"] == "/x/libtilegen.so"
    values_at = {len(line) - len(line[line.index("  "):].lstrip()) for line in text.splitlines()}
    assert len(values_at) == 1  # one value column


def test_missing_and_unknown_keys_are_tolerated():
    assert format_runtime_info({}) == ""
    nested = {"kernel": "tg_f64_gemm_ukernel_1x4__scalar",
              "kernels_by_rows": ["tg_f64_gemm_ukernel_1x4__scalar"]}
    text = format_runtime_info({"isa_cap": "scalar", "features": {}, "new_key": [1, 2],
                                "kernels": {"gemm": {"f64": {"new": 1, "packed": nested}}}})
    r = rows(text)
    assert r["ISA cap"] == "scalar" and r["new_key"] == "1 2" and "gemm f64" in r
    assert "new: 1" in text and "packed: tg_f64_gemm_ukernel_1x4__scalar" in text
    assert "  for m = 1: 1x4" in text


def test_info_command_and_show_config_print_the_same_report(capsys):
    expected = format_runtime_info(tilegen.runtime_info())
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert out == expected + "\n"
    assert "gemm f32" in out and "gemm f64" in out
    tilegen.show_config()
    assert capsys.readouterr().out == out

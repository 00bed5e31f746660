"""The DSL: validation (register budget, vector width, allowed values), the name schema,
the fluent builder, registry validation and a golden rendering."""

import pytest
from conftest import REPO_ROOT  # the source tree: its registry and templates are tested

from tilegen.dsl import (
    DTYPES, FAMILIES, ISAS, F32, KernelSpec, format_name, gemm, load_registry, parse_name, registry_path,
    spec_from_name,
)
from tilegen.dsl.render import render_kernel

GOLDEN_DIR = REPO_ROOT / "tests" / "golden"


def spec(**kw) -> KernelSpec:
    return KernelSpec(**{"op": "gemm", "dtype": "f32", "isa": "avx512", "mr": 4, "nr": 32, **kw})


# --- lowering: what the hardware allows ---

@pytest.mark.parametrize("isa, dtype, mr, nr, budget", [
    ("avx512", "f32", 16, 32, 32),   # 32 acc + 2 B + 1 A = 35
    ("avx2", "f32", 8, 16, 16),      # 16 acc + 2 B + 1 A = 19
    ("avx2", "f64", 7, 8, 16),
    ("neon", "f32", 8, 16, 32),      # 32 acc + 4 B + 1 A = 37
    ("scalar", "f32", 4, 4, 16),     # 16 + 4 + 1
])
def test_register_budget_rejects_oversized_tiles(isa, dtype, mr, nr, budget):
    with pytest.raises(ValueError, match=rf"^tile: {mr}x{nr} .* budget of {budget}"):
        spec(isa=isa, dtype=dtype, mr=mr, nr=nr)


@pytest.mark.parametrize("isa, dtype, mr, nr", [
    ("avx512", "f32", 14, 32), ("avx512", "f64", 14, 16), ("avx2", "f32", 6, 16),
    ("neon", "f32", 8, 12), ("scalar", "f64", 2, 4),
])
def test_register_budget_accepts_tiles_that_fit(isa, dtype, mr, nr):
    assert spec(isa=isa, dtype=dtype, mr=mr, nr=nr).tile == f"{mr}x{nr}"


def test_indexed_dot_takes_a_rows_four_at_a_time():
    """neondot's int8 GEMM (SDOT by element): one A vector holds four rows' quads, so MR is a
    multiple of 4 and the budget counts MR/4 A vectors; a refused tile names the largest one
    that fits and keeps that rule."""
    s8 = dict(op="gemms8", dtype="s8", isa="neondot", kr=4)
    assert KernelSpec(**s8, mr=8, nr=12).tile == "8x12c4"         # 24 + 3 + 2 = 29
    with pytest.raises(ValueError, match=r"^mr: .*MR=6 is not a multiple of 4"):
        KernelSpec(**s8, mr=6, nr=8)
    # 16 x 2 + 2 + 4 = 38; 13x8c4 would fit 32 registers but breaks the rows rule.
    with pytest.raises(ValueError, match=r"^tile: 16x8c4 .* 4 A quad vector .*MR/lanes <= 32; "
                                         r"the largest neondot tile with NR=8 that fits is 12x8c4$"):
        KernelSpec(**s8, mr=16, nr=8)


def test_smmla_takes_k_in_octets_and_rows_in_pairs():
    """neoni8mm's int8 GEMM (SMMLA: 2x8 by 8x2): KR is 8 there and 4 elsewhere, MR even."""
    s8 = dict(op="gemms8", dtype="s8", isa="neoni8mm")
    assert KernelSpec(**s8, mr=8, nr=8, kr=8).name == "tg_s8_gemm_ukernel_8x8c8__neoni8mm"
    with pytest.raises(ValueError, match=r"^kr: neoni8mm's .* KR=8, got 4"):
        KernelSpec(**s8, mr=8, nr=8, kr=4)
    with pytest.raises(ValueError, match=r"^kr: neondot's .* KR=4, got 8"):
        KernelSpec(**{**s8, "isa": "neondot"}, mr=8, nr=8, kr=8)
    with pytest.raises(ValueError, match=r"^mr: SMMLA .* MR=5 is odd"):
        KernelSpec(**s8, mr=5, nr=8, kr=8)
    # 8 x 12: 24 tiles + 6 B column pairs + 4 A row pairs = 34.
    with pytest.raises(ValueError, match=r"^tile: 8x12c8 .* 34 vector registers.*NR/2 \+ MR/2"):
        KernelSpec(**s8, mr=8, nr=12, kr=8)


@pytest.mark.parametrize("isa, dtype, nr, lanes", [
    ("avx512", "f32", 24, 16), ("avx512", "f64", 12, 8), ("avx2", "f32", 12, 8), ("neon", "f64", 3, 2),
])
def test_nr_must_be_a_multiple_of_the_vector_width(isa, dtype, nr, lanes):
    with pytest.raises(ValueError, match=rf"^nr: .*{lanes} lanes"):
        spec(isa=isa, dtype=dtype, mr=1, nr=nr)


def bf16_spec(isa: str, mr: int, nr: int) -> KernelSpec:
    return KernelSpec(op="gemmbf16", dtype="bf16", isa=isa, mr=mr, nr=nr, kr=2)


def test_bfdot_by_lane_takes_mr_in_fours_and_counts_its_a_vectors():
    """neonbf16's BFDOT by lane loads four rows' A pairs at a time: MR is a multiple of 4, and
    each load is a register (12x8c2: 24 + 2 + 3 = 29); a tile over the budget is told the
    largest MR that is both a multiple of 4 and fits, not merely one that fits."""
    tile = bf16_spec("neonbf16", 12, 8)
    assert tile.family.register_budget(tile).used == 29
    with pytest.raises(ValueError, match=r"^mr: MR=6 is not a multiple of .*4 lanes"):
        bf16_spec("neonbf16", 6, 8)
    with pytest.raises(ValueError, match=r"^tile: 12x12c2 .* = 42 .* budget of 32; .*"
                                         r"MR\*NR/lanes \+ NR/lanes \+ MR/lanes .* is 8x12c2$"):
        bf16_spec("neonbf16", 12, 12)
    # Widened NEON tiles of any MR still exist (rows by broadcast where MR % 4 != 0).
    assert bf16_spec("neon", 3, 8).tile == "3x8c2"
    text = render_kernel(bf16_spec("neonbf16", 4, 8))
    assert text.count("vld1q_bf16") == 3 and text.count("vbfdotq_laneq_f32(") == 8
    assert "vbfdotq_laneq_f32(vacc3x1, vb1, va, 3)" in text


@pytest.mark.parametrize("field, value, allowed", [
    ("op", "conv9d", FAMILIES), ("dtype", "f16", DTYPES), ("isa", "sse9", ISAS),
])
def test_unknown_values_name_the_field_and_the_allowed_values(field, value, allowed):
    with pytest.raises(ValueError) as err:
        spec(**{field: value})
    msg = str(err.value)
    assert msg.startswith(f"{field}:") and repr(value) in msg and "allowed values" in msg
    assert all(a in msg for a in allowed)


@pytest.mark.parametrize("kw, field", [
    ({"unroll": 0}, "unroll"), ({"unroll": 17}, "unroll"), ({"mr": 0}, "mr"), ({"kr": 4}, "kr"),
    ({"prefetch": -1}, "prefetch"), ({"epilogue": ("gelu",)}, "epilogue"),
    ({"epilogue": ("relu", "bias")}, "epilogue"), ({"epilogue": ("relu", "relu6")}, "epilogue"),
    ({"isa": "avx2", "nr": 16, "tail": "mask"}, "tail"), ({"variant": "Bad-Name"}, "variant"),
    ({"kloop": "fortran"}, "kloop"), ({"isa": "neon", "nr": 12, "kloop": "asm"}, "kloop"),
    ({"isa": "scalar", "nr": 4, "kloop": "asm"}, "kloop"),
    ({"op": "gemv", "nr": 1, "kr": 32, "kloop": "asm"}, "kloop"),
    ({"op": "conv", "kh": 3, "kw": 3, "prefetch": 32}, "prefetch"),  # channel-first only
    ({"op": "conv", "kh": 3, "kw": 3, "layout": "nchw", "nr": 48, "stride": 2}, "stride"),
    ({"op": "dwconv", "kh": 3, "kw": 3, "layout": "nchw", "nr": 64, "stride": 2}, "stride"),
    ({"op": "attndecode", "nr": 64, "prefetch": 8, "prefetch_to": "l3"}, "prefetch_to"),
])
def test_other_invalid_schedules_name_their_field(kw, field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        spec(**kw)


# --- the name schema ---

REGISTRY = load_registry(registry_path(str(REPO_ROOT)))


@pytest.mark.parametrize("entry", REGISTRY, ids=lambda e: e.name)
def test_registry_names_round_trip(entry):
    s = entry.spec
    rebuilt = spec_from_name(entry.name, unroll=s.unroll, prefetch=s.prefetch, tail=s.tail,
                             kloop=s.kloop)
    assert rebuilt == s and format_name(rebuilt) == entry.name


@pytest.mark.parametrize("name, fields", [
    ("tg_f32_gemm_ukernel_14x32__avx512",
     dict(dtype="f32", op="gemm", epilogue=(), mr=14, nr=32, kr=1, isa="avx512", variant="")),
    ("tg_f32_gemm_bias_relu_ukernel_14x32__avx512",
     dict(epilogue=("bias", "relu"), mr=14, nr=32, isa="avx512", variant="")),
    ("tg_f32_gemm_bias_relu6_ukernel_8x12__neon", dict(epilogue=("bias", "relu6"), isa="neon")),
    ("tg_f64_gemm_relu_ukernel_6x8__avx2_prfm", dict(dtype="f64", epilogue=("relu",), variant="prfm")),
    ("tg_f32_gemm_ukernel_2x4__scalar_fast_path", dict(isa="scalar", variant="fast_path")),
])
def test_hand_written_names_round_trip(name, fields):
    parsed = parse_name(name)
    assert {k: parsed[k] for k in fields} == fields
    assert spec_from_name(name).name == name


def test_name_with_kr_parses():
    assert parse_name("tg_f32_gemm_ukernel_4x16c4__avx2")["kr"] == 4


@pytest.mark.parametrize("name", [
    "tg_f32_gemm_14x32__avx512", "f32_gemm_ukernel_14x32__avx512", "tg_f32_gemm_ukernel_14x32_avx512",
    "tg_f32_gemm_ukernel_14by32__avx512", "tg_F32_gemm_ukernel_14x32__avx512",
])
def test_malformed_names_are_rejected(name):
    with pytest.raises(ValueError, match="^name:"):
        parse_name(name)


# --- the fluent builder (DESIGN.md) ---

def test_builder_from_the_design():
    k = (gemm(F32).tile(m=14, n=32).vectorize("n").unroll("k", 4).epilogue("bias", "relu")
         .target("avx512"))
    assert k.name == "tg_f32_gemm_bias_relu_ukernel_14x32__avx512"
    assert k.spec == KernelSpec(op="gemm", dtype="f32", isa="avx512", mr=14, nr=32, unroll=4,
                                epilogue=("bias", "relu"))
    assert "void tg_f32_gemm_bias_relu_ukernel_14x32__avx512(" in k.render()


@pytest.mark.parametrize("build, field", [
    (lambda: gemm(F32).vectorize("m"), "vectorize"),
    (lambda: gemm(F32).unroll("n", 2), "unroll"),
    (lambda: gemm(F32).tile(m=14, n=32).spec, "isa"),
    (lambda: gemm(F32).target("avx2").spec, "mr"),
    (lambda: gemm(F32).tile(m=16, n=32).target("avx512").name, "tile"),
])
def test_builder_errors_name_the_verb_or_field(build, field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        build()


# --- registry validation ---

def write_registry(tmp_path, body: str) -> str:
    path = tmp_path / "kernels.yaml"
    path.write_text("kernels:\n" + body)
    return str(path)


def test_registry_rejects_duplicate_names(tmp_path):
    path = write_registry(tmp_path, "  - {op: gemm, dtype: f32, isa: avx2, tile: 6x16}\n"
                                    "  - {op: gemm, dtype: f32, isa: avx2, tile: 6x16, unroll: 4}\n")
    with pytest.raises(ValueError, match=r"kernels\[1\] and kernels\[0\] are both "
                                         r"tg_f32_gemm_ukernel_6x16__avx2"):
        load_registry(path)


def test_registry_rejects_unknown_fields(tmp_path):
    path = write_registry(tmp_path, "  - {op: gemm, dtype: f32, isa: avx2, tile: 6x16, unrol: 4}\n")
    with pytest.raises(ValueError, match=r"kernels\[0\]: unknown field\(s\) \['unrol'\]"):
        load_registry(path)


@pytest.mark.parametrize("body, message", [
    ("  - {op: gemm, dtype: f32, isa: avx2}\n", "missing field 'tile'"),
    ("  - {op: gemm, dtype: f32, isa: avx2, tile: 8x16}\n", "^tile: 8x16"),
    ("  - {op: gemm, dtype: f32, isa: avx2, tile: 6x16, production: maybe}\n", "production"),
    ("  - {op: gemm, dtype: f32, isa: avx2, tile: 6x16}\n"
     "  - {op: gemm, dtype: f32, isa: avx2, tile: 1x24}\n", "NR values \\[16\\]"),
    # The widest packed NR is the main one; NR/2 is allowed only for "rows" kernels (narrow set).
    ("  - {op: gemm, dtype: f32, isa: avx2, tile: 6x16}\n"
     "  - {op: gemm, dtype: f32, isa: avx2, tile: 1x8}\n", "NR values \\[8\\]"),
    # A prefetch level without a distance: the _pfl2 name would promise prefetches never made.
    ("  - {op: attndecode, dtype: f32, isa: avx512, tile: 4x64, prefetch_to: l2}\n",
     "prefetch_to 'l2' needs a prefetch distance"),
])
def test_registry_rejects_invalid_entries(tmp_path, body, message):
    with pytest.raises(ValueError, match=message):
        load_registry(write_registry(tmp_path, body))


# --- golden rendering: a template change shows up as a readable diff ---

GOLDEN_SPECS = [
    KernelSpec(op="gemm", dtype="f32", isa="avx2", mr=4, nr=16, unroll=2),
    # The asm k loop, rows layout (row bases, scaled addressing), B prefetch; variant keeps it apart.
    KernelSpec(op="gemm", dtype="f64", isa="avx2", mr=3, nr=8, unroll=2, a_layout="rows",
               kloop="asm", prefetch=4, variant="asm"),
]


@pytest.mark.parametrize("golden", GOLDEN_SPECS, ids=lambda s: s.name)
def test_golden_rendering(golden, update_golden):
    GOLDEN_SPEC = golden
    path = GOLDEN_DIR / f"{GOLDEN_SPEC.name}.c"
    rendered = render_kernel(GOLDEN_SPEC, str(REPO_ROOT))
    if update_golden:
        path.parent.mkdir(exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
    assert path.is_file(), f"{path} is missing; run `pytest --update-golden` to create it"
    assert rendered == path.read_text(encoding="utf-8"), (
        f"{GOLDEN_SPEC.name} renders differently from {path}; if the change is intended, "
        "run `pytest tests/test_dsl.py --update-golden` and review the diff")


# --- prefetch levels: one spelling per ISA, the level in the kernel's name ---

@pytest.mark.parametrize("isa, nr, l1, l2", [
    ("avx512", 64, "_MM_HINT_T0)", "_MM_HINT_T1)"), ("avx2", 64, "_MM_HINT_T0)", "_MM_HINT_T1)"),
    ("neon", 64, ", 0, 3)", ", 0, 2)"), ("scalar", 16, ", 0, 3)", ", 0, 2)"),
])
def test_decode_prefetch_level_reaches_the_kernel_and_its_name(isa, nr, l1, l2):
    near = spec(op="attndecode", isa=isa, nr=nr, prefetch=8)
    far = spec(op="attndecode", isa=isa, nr=nr, prefetch=8, prefetch_to="l2")
    assert format_name(far) == format_name(near) + "_pfl2"
    assert spec_from_name(format_name(far), prefetch=8) == far
    src_near, src_far = render_kernel(near), render_kernel(far)
    assert src_near.count(l1) > 0 and l2 not in src_near
    assert src_far.count(l2) == src_near.count(l1) and l1 not in src_far

"""The attention and attndecode families in the DSL: names carry their fields, the generator
refuses tiles the register file cannot hold and blocks the driver cannot take."""
import pytest

from tilegen.dsl import KernelSpec
from tilegen.dsl.builder import op
from tilegen.dsl.spec import parse_name, spec_from_name


def test_names_carry_family_fields():
    s = KernelSpec("attention", "f32", "avx2", 16, 6, kb=48, pv_rows=4, pv_vecs=2)
    assert s.name == "tg_f32_attention_ukernel_16x6__avx2_pv4x2"
    assert spec_from_name(s.name) == s
    s = KernelSpec("attention", "f32", "scalar", 4, 2, kb=16, pv_rows=4, pv_vecs=2, variant="x")
    assert s.name == "tg_f32_attention_ukernel_4x2__scalar_kb16_pv4x2_x"
    assert parse_name(s.name)["variant"] == "x" and spec_from_name(s.name) == s
    d = KernelSpec("attndecode", "f32", "avx2", 4, 64, pv_vecs=2)
    assert d.name == "tg_f32_attndecode_ukernel_4x64__avx2_pv2" and spec_from_name(d.name) == d
    b = op("attention", "f32").tile(m=32, n=12).vectorize("m").set(kb=96).target("avx512")
    assert b.name == "tg_f32_attention_ukernel_32x12__avx512_kb96"
    assert "attn_exp" in b.render()


@pytest.mark.parametrize("fields,word", [
    (dict(op="attention", isa="avx512", mr=32, nr=16), "register"),         # 32 + 2 + 1 > 32
    (dict(op="attention", isa="avx512", mr=20, nr=8), "vector width"),
    (dict(op="attention", isa="avx512", mr=32, nr=12, kb=50), "multiple of NR"),
    (dict(op="attention", isa="avx512", mr=32, nr=12, kb=600), "limit"),
    (dict(op="attention", isa="avx512", mr=32, nr=12, pv_rows=5), "divide"),
    (dict(op="attention", isa="avx512", mr=32, nr=12, pv_rows=8, pv_vecs=4), "register"),
    (dict(op="attention", isa="avx2", mr=16, nr=8), "register"),
    (dict(op="attention", dtype="f64", isa="avx512", mr=16, nr=4), "dtype"),
    (dict(op="attndecode", isa="avx512", mr=4, nr=60), "vector width"),
    (dict(op="attndecode", isa="avx2", mr=4, nr=64, pv_vecs=8), "register"),  # PV 8 + 8 + 1 > 16
])
def test_refused(fields, word):
    fields = {"dtype": "f32", **fields}
    with pytest.raises(ValueError) as e:
        KernelSpec(**fields)
    assert word in str(e.value)

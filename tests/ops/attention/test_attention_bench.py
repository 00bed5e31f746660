"""The attention, paged_attention and bert bench plug-ins: every quick case runs once on each
library present and passes its own check; a wrong answer fails it."""
import numpy as np
import pytest

from tilegen.tools.bench import installed
from tilegen.tools.benchcases import OPS


@pytest.mark.parametrize("op", ["attention", "paged_attention", "bert"])
def test_quick_cases_run_and_check(op):
    mod = OPS[op]
    for case in mod.cases(quick=True):
        operands = case.operands(seed=1)
        for lib in mod.LIBS:
            if not installed(lib):
                continue
            call, to_numpy = mod.make_call(lib, case, operands, 1)
            assert case.check(operands, to_numpy(call())) is None, (op, case.id, lib)
        call, to_numpy = mod.make_call("tilegen", case, operands, 1)
        wrong = np.asarray(to_numpy(call())).copy()
        wrong.flat[0] += 1.0
        assert case.check(operands, wrong) is not None


def test_full_case_lists_name_the_targets():
    ids = {c.id for c in OPS["attention"].cases()}
    assert {"attention-f32-b1h12s512d64", "attention-f32-b1h32s2048d128",
            "attention-f32-b1h32s2048d128-causal"} <= ids
    paged = OPS["paged_attention"].cases()
    target = [c for c in paged if (c.b, c.hq, c.hkv, c.d, c.seq_len, c.block_size) ==
              (8, 32, 8, 128, 4096, 16)]
    assert target and target[0].work == 2 * 8 * 4096 * 8 * 128 * 4  # 256 MiB of K/V

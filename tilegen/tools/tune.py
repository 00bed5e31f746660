"""Search block sizes and tiles on this machine and store the best for the next `import tilegen`.

`tilegen tune` times representative single-threaded products (squares, a skinny M=16 product and
one with a column-major A, which runs the "packed" A layout) for float32 and float64 on the ISA
in use, searching in turn:

1. the main tile of each A layout, among the registry's production GEMM kernels of that layout
   (tilegen.dsl.load_registry(), filtered by op, dtype, ISA, A layout and production);
2. KC (the k depth of a packed block), then NC (the width of a packed B block), then (full run)
   KC again around the best at the chosen NC;
3. the stream rows: how many rows of an A streamed from beyond L2 one kernel call reads at
   once, each a prefetch stream (the height of the row panels of a deep A under 16 columns of C;
   how many streams a core follows well is what differs most between Intel and AMD), on that
   product alone;
4. the b-inner rows: up to how many rows of C a B beyond L2 is read one column panel at a time
   for all the rows (KC derived from L1) instead of blocked, on products of 16 to 128 rows times
   a B read from memory (64 MiB in float32; the crossover differs by CPU: 48 rows on a Zen 3,
   about 64 on an Intel Xeon, about 16 on a Zen 4) and times a transformer layer's B (768x3072,
   between L2 and memory), which the b-inner order must not slow.

Then, for float32, paged attention's decode kernel among the registry's kernels of its ISA (they
differ in how far ahead they prefetch the cache rows, which is what differs by CPU), timed on a
KV cache read from memory.

Each candidate is scored by the geometric mean of the best-of-N GFLOP/s over the products it
affects. At the end the built-in configuration and the winner are re-measured in interleaved
rounds; the winner is kept only if it beats the built-in one by more than the noise margin. The
result goes to the per-user cache (tilegen/tuning.py), keyed by CPU, ISA and tilegen version,
and is printed as before/after GFLOP/s.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

MARGIN = 0.03  # a candidate must beat the current best by 3% to replace it (noise guard)


@dataclass(frozen=True)
class Product:
    label: str
    m: int
    k: int
    n: int
    a_order: str = "C"  # "F": column-major A, which runs the packed A layout

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n


@dataclass
class Plan:
    products: Tuple[Product, ...]
    kc: Tuple[int, ...]       # KC candidates (the built-in value is added)
    nc: Tuple[int, ...]       # NC candidates, before rounding to NR
    reps: int
    target: float             # seconds per repetition
    refine: bool              # KC again at the chosen NC
    final_rounds: int
    sweep_rounds: int         # candidates of a sweep measured in turn this many times (best kept)
    streamed: Tuple[Product, ...]  # an A beyond L2 streamed: for the stream rows
    streams: Tuple[int, ...]       # stream-rows candidates (the built-in one is added)
    few_rows: Tuple[Product, ...]  # few rows of C times a B beyond L2: for the b-inner rows
    b_inner: Tuple[int, ...]       # b-inner-rows candidates (the built-in one is added)
    paged: Tuple[int, int] = (8, 2048)  # paged decode: sequences x cached tokens (128 MiB of K/V)


# A B between L2 and memory, a transformer's linear layer (hidden 768, FFN 3072): the b-inner
# order must not cost these what it gains on a B read from memory (AMD Zen 4: 48 rows gained 3%
# on 16x4096x4096 and lost 20% on 16x768x3072 and 32x4096x4096).
MID_B = tuple(Product(f"{m}x768x3072 (mid B)", m, 768, 3072) for m in (16, 128))

FULL = Plan(
    products=(Product("512x512x512", 512, 512, 512), Product("1024x1024x1024", 1024, 1024, 1024),
              Product("1024x2048x1024 (deep)", 1024, 2048, 1024),
              Product("16x1024x1024", 16, 1024, 1024),
              Product("512x512x512 (A col-major)", 512, 512, 512, "F")),
    kc=(128, 256, 384, 512, 768, 1024, 1536, 2048), nc=(256, 512, 1024, 2048, 4096),
    reps=5, target=0.03, refine=True, final_rounds=4, sweep_rounds=2,
    streamed=(Product("4096x4096x16 (A streamed)", 4096, 4096, 16),), streams=(4, 8, 12, 16, 32),
    few_rows=tuple(Product(f"{m}x4096x4096 (big B)", m, 4096, 4096) for m in (16, 32, 64, 128))
    + MID_B,
    b_inner=(1, 16, 32, 64, 128))
QUICK = Plan(
    products=(Product("256x256x256", 256, 256, 256), Product("512x512x512", 512, 512, 512),
              Product("16x512x512", 16, 512, 512),
              Product("256x256x256 (A col-major)", 256, 256, 256, "F")),
    kc=(128, 256, 384), nc=(512, 1024, 2048),
    reps=3, target=0.008, refine=False, final_rounds=2, sweep_rounds=1,
    streamed=(Product("2048x2048x16 (A streamed)", 2048, 2048, 16),), streams=(4, 8, 16),
    few_rows=tuple(Product(f"{m}x4096x4096 (big B)", m, 4096, 4096) for m in (16, 64)),
    b_inner=(1, 32, 96),
    paged=(4, 1024))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="a short search (~20 s) on smaller products")
    p.add_argument("--dtype", choices=["f32", "f64", "all"], default="all",
                   help="element type to tune (default: both)")
    p.add_argument("--dry-run", action="store_true", help="search and print, but write no cache")
    p.add_argument("--reset", action="store_true",
                   help="delete this machine's tuning cache and exit (tilegen's built-in choices return)")


def run(args) -> int:
    from . import tuning

    if args.reset:
        path = tuning.cache_path()
        if os.path.isfile(path):
            os.remove(path)
            print(f"removed {path}")
        else:
            print(f"no tuning cache at {path}")
        return 0
    import numpy as np  # noqa: F401

    import tilegen
    from tilegen.core import _core

    dtypes = ["f32", "f64"] if args.dtype == "all" else [args.dtype]
    plan = QUICK if args.quick else FULL
    key = tuning.cpu_key()
    print(f"tilegen tune{' --quick' if args.quick else ''}: {key['brand']} ({key['arch']}), "
          f"tilegen {tilegen.__version__}, 1 thread; cache {tuning.cache_path()}")
    st = tuning.status()
    if st["status"] in ("applied", "ignored"):
        print(f"  (the cache in force at import was {st['status']}; starting from the built-in "
              f"configuration)")
    threads = _core.get_num_threads()
    _core.set_num_threads(1)
    t0 = time.monotonic()
    entries: Dict[str, dict] = {}
    try:
        for dtype in dtypes:
            tuning.restore_defaults(dtype)
            result = Tuner(dtype, plan).run()
            entry = entries.setdefault(result.pop("isa"), {"gemm": {}, "measured": {}})
            entry["gemm"][dtype] = result.pop("config")
            entry["measured"][dtype] = result
        if "f32" in dtypes:
            isa, kernel, measured = tune_paged(plan)
            entry = entries.setdefault(isa, {"gemm": {}, "measured": {}})
            entry["paged_attention"] = {"f32": {"kernel": kernel}}
            entry["measured"]["paged_attention"] = measured
    except RuntimeError as e:  # the chosen configuration failed its correctness check
        print(f"tilegen: error: {e}", file=sys.stderr)
        return 1
    finally:
        _core.set_num_threads(threads)
    print(f"tuned in {time.monotonic() - t0:.0f} s")
    if args.dry_run:
        print("--dry-run: no cache written; this process keeps the tuned configuration")
        return 0
    path = tuning.write(entries)
    print(f"wrote {path}: the next `import tilegen` applies it (TILEGEN_TUNING=off ignores it)")
    return 0


def tune_paged(plan: Plan, out=None) -> Tuple[str, Optional[str], Dict[str, float]]:
    """Paged attention's float32 decode kernel: each registered kernel of its ISA on a cache of
    plan.paged (sequences, tokens; Hq 32, Hkv 8, D 128, blocks of 16 scattered), best K/V GB/s
    of interleaved rounds; another kernel replaces the built-in one only if it reads MARGIN
    faster and gives its answer. Returns (ISA, kernel or None for the built-in, GB/s by kernel)."""
    import numpy as np

    from . import tuning
    from .bench_worker import measure
    from tilegen.dsl.spec import spec_from_name
    from tilegen.ops.paged_attention import _paged_attention as _attention

    out = out or sys.stdout
    tuning.apply_paged(None)
    builtin = _attention.kernel_name()
    names = _attention.paged_kernels()
    isa = spec_from_name(builtin).isa
    seqs, tokens = plan.paged
    rng = np.random.default_rng(7)
    blocks = seqs * tokens // 16
    k = rng.random((blocks, 16, 8, 128), dtype=np.float32)
    v = rng.random((blocks, 16, 8, 128), dtype=np.float32)
    q = rng.standard_normal((seqs, 32, 128), dtype=np.float32)
    table = rng.permutation(blocks).astype(np.int32).reshape(seqs, tokens // 16)
    lens = np.full(seqs, tokens, np.int32)
    run = lambda: _attention.paged_attention(q, k, v, table, lens)  # noqa: E731
    rates: Dict[str, float] = {}
    answers = {}
    for _ in range(plan.final_rounds):
        for name in names:
            tuning.apply_paged(name)
            if name not in answers:
                answers[name] = run()
            r = measure(run, plan.target, plan.reps)
            rates[name] = max(rates.get(name, 0.0), (k.nbytes + v.nbytes) / r["best_s"] / 1e9)
    best = max(names, key=lambda n: rates[n])
    print(f"f32 paged attention ({isa}), K/V GB/s, best of {plan.final_rounds} interleaved "
          f"rounds ({seqs} x {tokens} tokens): " + ", ".join(
              f"{n}{' (built-in)' if n == builtin else ''} {rates[n]:.1f}" for n in names),
          file=out, flush=True)
    chosen = best if rates[best] > rates[builtin] * (1 + MARGIN) else None
    if chosen is not None and not np.allclose(answers[chosen], answers[builtin], rtol=1e-4,
                                              atol=1e-5):
        raise RuntimeError(f"{chosen} disagrees with {builtin} on the tuning case")
    tuning.apply_paged(chosen)
    print(f"  chosen: {chosen or 'the built-in kernel'}" + (
        "" if chosen else f" (nothing else read {100 * MARGIN:.0f}% faster)"), file=out, flush=True)
    return isa, chosen, {n: round(r, 2) for n, r in rates.items()}


def _gmean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0


class Tuner:
    """The search for one dtype, in this process (the configuration is process-global)."""

    def __init__(self, dtype: str, plan: Plan, out=None):
        import numpy as np

        from . import tuning

        self.dtype, self.plan, self.out = dtype, plan, out or sys.stdout
        self.np_dtype = np.float32 if dtype == "f32" else np.float64
        self.base = tuning.defaults(dtype)
        self.isa = self.base["isa"]
        from tilegen.ops.gemm import _gemm as _core

        self.nr = int(_core.gemm_config(self.np_dtype)["nr"])
        rng = np.random.default_rng(7)
        self.operands = {}
        for p in (*plan.products, *plan.streamed, *plan.few_rows):
            a = rng.uniform(-1, 1, (p.m, p.k)).astype(self.np_dtype)
            if p.a_order == "F":
                a = np.asfortranarray(a)
            b = rng.uniform(-1, 1, (p.k, p.n)).astype(self.np_dtype)
            c = np.zeros((p.m, p.n), self.np_dtype)
            self.operands[p] = (a, b, c)

    # ---------------------------------------------------------------- measuring

    def apply(self, cfg: dict) -> None:
        from . import tuning

        tuning.apply(self.dtype, cfg["kc"], cfg["nc"], cfg.get("kernel"), cfg.get("stream_rows"),
                     cfg.get("b_inner_rows"))

    def rates(self, cfg: dict, products: Sequence[Product]) -> Dict[Product, float]:
        """Best GFLOP/s of each product under `cfg`."""
        from .bench_worker import measure
        from tilegen.ops.gemm._gemm import matmul

        self.apply(cfg)
        out = {}
        for p in products:
            a, b, c = self.operands[p]
            r = measure(lambda: matmul(a, b, out=c), self.plan.target, self.plan.reps)
            out[p] = p.flops / r["best_s"] / 1e9
        return out

    def score(self, cfg: dict, products: Sequence[Product]) -> float:
        return _gmean(list(self.rates(cfg, products).values()))

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    # ---------------------------------------------------------------- search

    def tiles(self, layout: str) -> List[str]:
        """Production GEMM kernels of this dtype, ISA and A layout with the layout's NR (not the
        narrow set), largest tile first (single-row kernels are the GEMV-like remainder, never
        a main tile)."""
        from tilegen.ops.gemm import _gemm as _core
        from tilegen.dsl import load_registry

        nr = _core.gemm_config(self.np_dtype)[layout]["nr"]
        entries = [e for e in load_registry()
                   if e.production and e.spec.op == "gemm" and e.spec.dtype == self.dtype
                   and e.spec.isa == self.isa and e.spec.a_layout == layout
                   and e.spec.nr == nr and not e.spec.epilogue and e.spec.mr > 1]
        return [e.name for e in sorted(entries, key=lambda e: -e.spec.mr)]

    def sweep(self, what: str, cfgs: List[dict], products, best: dict, best_score: float,
              show: Callable[[dict], str]) -> Tuple[dict, float]:
        # The candidates take turns, sweep_rounds times (drift hits them alike); the fastest
        # replaces `best` if it beats it by the margin (not a chain of small steps past it).
        rates: List[Dict[Product, float]] = [{} for _ in cfgs]
        for _ in range(self.plan.sweep_rounds):
            for cfg, r in zip(cfgs, rates):
                for p, v in self.rates(cfg, products).items():
                    r[p] = max(r.get(p, 0.0), v)
        scores = [_gmean(list(r.values())) for r in rates]
        if best in cfgs:
            best_score = scores[cfgs.index(best)]
        top = max(range(len(cfgs)), key=scores.__getitem__)
        if scores[top] > best_score * (1 + MARGIN):
            best, best_score = cfgs[top], scores[top]
        parts = [f"{show(cfg)} {s:.1f}" for cfg, s in zip(cfgs, scores)]
        self.say(f"  {what:<6} " + ", ".join(parts) + f"  -> {show(best)}")
        return best, best_score

    def run(self) -> dict:
        from tilegen.dsl.spec import spec_from_name

        plan, base = self.plan, self.base
        tile = lambda name: spec_from_name(name).tile  # noqa: E731
        default = {"kc": base["kc"], "nc": base["nc"], "kernel": None, "stream_rows": None,
                   "b_inner_rows": None}
        c_products = [p for p in plan.products if p.a_order == "C"]
        f_products = [p for p in plan.products if p.a_order == "F"]
        self.say(f"{self.dtype} ({self.isa}): built-in KC {base['kc']}, NC {base['nc']}, main tiles "
                 f"{tile(base['rows']) if base['rows'] else '-'} (rows) / {tile(base['packed'])} (packed)")

        # 1. the main tile of each A layout; the C driver keeps at most one non-default main
        #    tile per dtype (set_gemm_kernel re-fills the other layout with its largest tile).
        gains = []
        for layout, products in (("rows", c_products), ("packed", f_products)):
            names = self.tiles(layout)
            if len(names) < 2 or not products:
                continue
            ref = self.score(default, products)
            best, best_score = self.sweep(
                f"tile {layout}", [dict(default, kernel=n) for n in names], products,
                dict(default, kernel=names[0]), ref, lambda c: tile(c["kernel"]))
            if best["kernel"] != names[0]:
                gains.append((best_score / ref, best["kernel"]))
        kernel = max(gains)[1] if gains else None
        if len(gains) > 1:
            self.say(f"  (both layouts gain; keeping {tile(kernel)}, the larger gain: the driver "
                     f"takes one non-default main tile per dtype)")
        cfg = dict(default, kernel=kernel)
        score = self.score(cfg, plan.products)

        # 2. KC, NC, and KC again around the best.
        kcs = sorted(set(plan.kc) | {base["kc"]})
        cfg, score = self.sweep("KC", [dict(cfg, kc=k) for k in kcs], plan.products, cfg, score,
                                lambda c: str(c["kc"]))
        ncs = sorted({max(self.nr, n // self.nr * self.nr) for n in plan.nc} | {base["nc"]})
        cfg, score = self.sweep("NC", [dict(cfg, nc=n) for n in ncs], plan.products, cfg, score,
                                lambda c: str(c["nc"]))
        if plan.refine:
            near = sorted({max(32, cfg["kc"] + d) for d in (-64, -32, 32, 64)} - {cfg["kc"]})
            cfg, score = self.sweep("KC", [cfg] + [dict(cfg, kc=k) for k in near], plan.products,
                                    cfg, score, lambda c: str(c["kc"]))

        # 3. built-in vs winner, interleaved product by product (drift hits both alike);
        #    the winner is kept only if it clearly wins.
        main = lambda c: tile(c["kernel"]) if c["kernel"] else "built-in"  # noqa: E731
        before: Dict[Product, float] = {}
        cand: Dict[Product, float] = {}
        pairs = ((before, default),) if cfg == default else ((before, default), (cand, cfg))
        for _ in range(plan.final_rounds):
            for p in plan.products:
                for rates, c in pairs:
                    rates[p] = max(rates.get(p, 0.0), self.rates(c, [p])[p])
        g_before = _gmean(list(before.values()))
        if cfg == default:
            self.say(f"  nothing beat the built-in configuration; its GFLOP/s (best of "
                     f"{plan.final_rounds} rounds):")
            for p in plan.products:
                self.say(f"    {p.label:<28} {before[p]:7.1f}")
            self.say(f"    {'geometric mean':<28} {g_before:7.1f}")
            kept, after = False, dict(before)
        else:
            g_cand = _gmean(list(cand.values()))
            kept = g_cand > g_before * (1 + MARGIN)
            self.say(f"  built-in -> best found (KC {cfg['kc']}, NC {cfg['nc']}, main tile "
                     f"{main(cfg)}), GFLOP/s, best of {plan.final_rounds} interleaved rounds:")
            for p in plan.products:
                self.say(f"    {p.label:<28} {before[p]:7.1f} -> {cand[p]:7.1f}  "
                         f"({100 * (cand[p] / before[p] - 1):+.1f}%)")
            self.say(f"    {'geometric mean':<28} {g_before:7.1f} -> {g_cand:7.1f}  "
                     f"({100 * (g_cand / g_before - 1):+.1f}%)")
            after = cand if kept else dict(before)
        if kept:
            self.say(f"  chosen: KC {cfg['kc']}, NC {cfg['nc']}, main tile {main(cfg)}")
        else:
            why = ("nothing else was faster" if cfg == default
                   else f"the best found is not {100 * MARGIN:.0f}% faster")
            self.say(f"  chosen: the built-in configuration (KC {default['kc']}, NC "
                     f"{default['nc']}, largest tiles): {why}")
            cfg = default
        cfg = self.tune_rows(cfg, "stream_rows", "stream rows", plan.streamed, plan.streams,
                             before, after)
        cfg = self.tune_rows(cfg, "b_inner_rows", "b-inner rows", plan.few_rows, plan.b_inner,
                             before, after)
        self.apply(cfg)
        self.check()
        products = (*plan.products, *plan.streamed, *plan.few_rows)
        return {"isa": self.isa, "config": cfg,
                "before_gflops": {p.label: round(before[p], 2) for p in products},
                "after_gflops": {p.label: round(after[p], 2) for p in products}}

    def tune_rows(self, cfg: dict, key: str, what: str, ps: Sequence[Product],
                  candidates: Sequence[int], before: Dict[Product, float],
                  after: Dict[Product, float]) -> dict:
        """Steps 3 and 4 on the chosen configuration: a row count (`key` of the configuration)
        timed on the products `ps` it affects, kept only if it clearly beats the built-in one
        in interleaved rounds (adds `ps` to before and after)."""
        builtin = int(self.base[key])
        rows = sorted(set(candidates) | {builtin})
        start = dict(cfg, **{key: builtin})
        best, _ = self.sweep(what.split()[0], [dict(cfg, **{key: r}) for r in rows], ps, start,
                             self.score(start, ps), lambda c: str(c[key]))
        ref = dict(cfg, **{key: None})
        old = {p: 0.0 for p in ps}
        new = {p: 0.0 for p in ps}
        for _ in range(self.plan.final_rounds):
            for p in ps:
                old[p] = max(old[p], self.rates(ref, [p])[p])
                if best != start:
                    new[p] = max(new[p], self.rates(best, [p])[p])
        before.update(old)
        g_old = _gmean(list(old.values()))
        g_new = _gmean(list(new.values())) if best != start else 0.0
        shown = ", ".join(f"{p.label} {old[p]:.1f}" for p in ps)
        if g_new <= g_old * (1 + MARGIN):
            after.update(old)
            self.say(f"  chosen: the built-in {what} {builtin} ({shown} GFLOP/s)")
            return ref
        after.update(new)
        self.say(f"  chosen: {what} {best[key]} (" + ", ".join(
            f"{p.label} {old[p]:.1f} -> {new[p]:.1f}" for p in ps) +
            f" GFLOP/s, {100 * (g_new / g_old - 1):+.1f}%)")
        return best

    def check(self) -> None:
        """The chosen configuration computes right (edge tiles, several K blocks) before it is
        stored; raises RuntimeError otherwise."""
        import numpy as np

        from tilegen.ops.gemm._gemm import matmul

        rng = np.random.default_rng(11)
        for m, k, n in ((1, 7, 5), (17, 300, 45), (130, 777, 259)):
            for order in ("C", "F"):
                a = np.asarray(rng.uniform(-1, 1, (m, k)), self.np_dtype, order=order)
                b = rng.uniform(-1, 1, (k, n)).astype(self.np_dtype)
                want = a.astype(np.float64) @ b.astype(np.float64)
                scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
                tol = (2e-5 if self.dtype == "f32" else 1e-12) * math.sqrt(k)
                if not np.all(np.abs(matmul(a, b) - want) <= tol * (scale + 1)):
                    raise RuntimeError(f"tuned {self.dtype} configuration gives wrong results "
                                       f"for {m}x{k}x{n} ({order}-ordered A); not stored")

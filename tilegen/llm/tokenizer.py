"""The GGUF vocabulary as a `tokenizers` byte-level BPE (what llama.cpp's "gpt2" tokenizer
model is): tokens, merges, the pre-tokenizer named by tokenizer.ggml.pre, control tokens as
special tokens (one id each, never split)."""
from __future__ import annotations

from typing import Any


def _contents(reader, key, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


def load_tokenizer(reader) -> Any:
    """A tokenizers.Tokenizer from a gguf.GGUFReader."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    kind = _contents(reader, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise ValueError(f"model: tokenizer {kind!r}; tilegen.llm reads byte-level BPE ('gpt2')")
    tokens = _contents(reader, "tokenizer.ggml.tokens")
    types = _contents(reader, "tokenizer.ggml.token_type", [1] * len(tokens))
    merges = [tuple(m.split(" ", 1)) for m in _contents(reader, "tokenizer.ggml.merges", [])]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if _contents(reader, "tokenizer.ggml.pre") in ("smollm", "starcoder", "refact"):
        # Digits one at a time, then GPT-2's split (llama.cpp's regexes for these models).
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level])
    else:
        tok.pre_tokenizer = byte_level
    tok.decoder = decoders.ByteLevel()
    control = [t for t, ty in zip(tokens, types) if ty == 3]  # GGUF token type CONTROL
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    return tok

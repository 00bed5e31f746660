"""A llama-architecture decoder on tilegen's kernels: GGUF weights (gguf package) as packed
tg.Linear layers, tg.rmsnorm, RoPE, grouped-query attention through tg.attention (prefill) and
tg.paged_attention (decode), a SwiGLU FFN, the GGUF vocabulary as a `tokenizers` BPE, and a
continuous-batching Generator. `python -m tilegen.llm --prompt ...` generates text.

Needs the optional extra `pip install "tilegen[llm]"` (gguf, tokenizers). The names load on
first use, so the bench plug-in (bench.py) imports nothing compiled.
"""
import importlib
from typing import Any

_WHERE = {"Config": "model", "Model": "model", "default_model_path": "model",
          "Generator": "generate", "Request": "generate", "load_tokenizer": "tokenizer"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'tilegen.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)

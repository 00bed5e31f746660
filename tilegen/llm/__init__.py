"""A llama-architecture decoder on tilegen's kernels: GGUF weights (gguf package) as packed
tg.Linear layers, tg.rmsnorm, RoPE, grouped-query attention through tg.attention (prefill) and
tg.paged_attention (decode), a SwiGLU FFN, the GGUF vocabulary as a `tokenizers` BPE, and a
continuous-batching Generator. `python -m tilegen.llm --prompt ...` generates text.

Needs the optional extra `pip install "tilegen[llm]"` (gguf, tokenizers).
"""
from .model import Config, Model, default_model_path
from .generate import Generator, Request
from .tokenizer import load_tokenizer

__all__ = ["Config", "Generator", "Model", "Request", "default_model_path", "load_tokenizer"]

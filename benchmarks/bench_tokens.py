"""Token-level verification against string-level: what comparing token IDs costs.

Template: the corpus's Llama 3.1 (047__library_llama3.1_8b), its translation with
`{{- bos_token }}` first (what the translation writes for a vocabulary that adds BOS), and the
sdist's `ggml-vocab-llama-bpe.gguf` (llama.cpp's own tokenizer: `gotmpl2jinja engines install
tokenizer`). Or `--entry NAME --vocab NAME` for another family.

Runs `verify_template` on the same seeded conversations three ways (alternating, best of
`--rounds`) and prints the seconds of each, the time spent waiting on the tokenizer, and the
ratios to the string-level run:
- strings: the bare contract (no bos_token, byte-for-byte);
- text BOS rule: bos_token/eos_token passed, the BOS rule applied as text (no vocabulary);
- token IDs: every output tokenized under its host's convention (Ollama, transformers/vLLM,
  llama-server) and compared as IDs.

Usage: python benchmarks/bench_tokens.py [--cases 400] [--engines a,b] [--entry E --vocab V]
No assertion on time: the figures are for people.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = ROOT / "fixtures" / "corpus" / "huggingface__huggingface.js" / "entries"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--engines", default=None, help="comma-separated (default: all)")
    parser.add_argument("--entry", default="047__library_llama3.1_8b")
    parser.add_argument("--vocab", default="llama-bpe")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from gotmpl2jinja.emit import translate
    from gotmpl2jinja.engines.registry import set_render_timeout
    from gotmpl2jinja.engines.tokenizer import shipped_vocabularies, tokenizer_state, vocabulary
    from gotmpl2jinja.verify.harness import verify_template
    from gotmpl2jinja.verify.tokens import HostTokens, TokenLevel

    set_render_timeout(60.0)  # a busy machine must not turn a slow render into a failure
    if tokenizer_state() is not None:
        print(f"llama.cpp's tokenizer is {tokenizer_state()}", file=sys.stderr)
        return 1
    go = (ENTRIES / args.entry / "template.gotmpl").read_text(encoding="utf-8")
    vocab = vocabulary(shipped_vocabularies()[args.vocab])
    host = HostTokens.of_vocabulary(vocab)
    jinja = translate(go, name=args.entry)
    with_bos = ("{{- bos_token }}" + jinja) if host.add_bos else jinja
    engines = args.engines.split(",") if args.engines else None

    runs = [("strings", jinja, None), ("text BOS rule", with_bos, TokenLevel(host)),
            ("token IDs", with_bos, TokenLevel(host, vocab))]
    # one warm-up run each (engine processes started, templates compiled, vocabulary loaded)
    for _, source, tokens in runs:
        verify_template(go, source, cases=16, engines=engines, seed=args.seed + 1, tokens=tokens)
    print(f"{args.entry} with {vocab.path.name}, {args.cases} cases, seed {args.seed}, "
          f"best of {args.rounds} alternating rounds")
    tokenizing = [0.0]
    original = vocab.tokenize

    def timed_tokenize(*a: Any, **k: Any) -> list[list[int]]:
        start = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            tokenizing[0] += time.perf_counter() - start

    vocab.tokenize = timed_tokenize  # type: ignore[method-assign]
    seconds: dict[str, float] = {}
    in_tokenizer = 0.0
    for _ in range(args.rounds):
        for label, source, tokens in runs:
            if tokens is not None and tokens.vocab is not None:
                tokens._ids.clear()  # no ids kept from an earlier round
            tokenizing[0] = 0.0
            start = time.perf_counter()
            result = verify_template(go, source, cases=args.cases, engines=engines,
                                     seed=args.seed, tokens=tokens)
            took = time.perf_counter() - start
            assert result.ok, f"{label}: {len(result.divergences)} divergences"
            if took < seconds.get(label, float("inf")):
                seconds[label] = took
                if label == "token IDs":
                    in_tokenizer = tokenizing[0]
    for label, _, _ in runs:
        print(f"  {label:<14} {seconds[label]:7.2f} s")
    print(f"  (token IDs: {in_tokenizer:.2f} s of it waiting on llama.cpp's tokenizer)")
    base = seconds["strings"]
    for label in ("text BOS rule", "token IDs"):
        print(f"  {label} / strings: {seconds[label] / base:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

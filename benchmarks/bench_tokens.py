"""Token-level verification against string-level: what comparing token IDs costs.

Template: the corpus's Llama 3.1 (047__library_llama3.1_8b), its translation with
`{{- bos_token }}` first (what the translation writes for a vocabulary that adds BOS), and the
sdist's `ggml-vocab-llama-bpe.gguf` (llama.cpp's own tokenizer: `gotmpl2jinja engines install
tokenizer`). Or `--entry NAME --vocab NAME` for another family.

Runs `verify_template` on the same seeded conversations three ways and prints the seconds of
each and the ratios to the string-level run:
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

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = ROOT / "fixtures" / "corpus" / "huggingface__huggingface.js" / "entries"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--engines", default=None, help="comma-separated (default: all)")
    parser.add_argument("--entry", default="047__library_llama3.1_8b")
    parser.add_argument("--vocab", default="llama-bpe")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    from gotmpl2jinja.emit import translate
    from gotmpl2jinja.engines.tokenizer import shipped_vocabularies, tokenizer_state, vocabulary
    from gotmpl2jinja.verify.harness import verify_template
    from gotmpl2jinja.verify.tokens import HostTokens, TokenLevel

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
    print(f"{args.entry} with {vocab.path.name}, {args.cases} cases, seed {args.seed}")
    seconds: dict[str, float] = {}
    for label, source, tokens in runs:
        start = time.perf_counter()
        result = verify_template(go, source, cases=args.cases, engines=engines, seed=args.seed,
                                 tokens=tokens)
        seconds[label] = time.perf_counter() - start
        print(f"  {label:<14} {seconds[label]:7.2f} s  {len(result.engines)} engines  "
              f"divergences={len(result.divergences)}")
    base = seconds["strings"]
    for label in ("text BOS rule", "token IDs"):
        print(f"  {label} / strings: {seconds[label] / base:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

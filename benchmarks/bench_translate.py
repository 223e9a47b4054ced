"""How long translating takes, per corpus template, next to jinja2 compiling the result.

Prints, over every messages-path template of fixtures/corpus that translates: the median and
maximum translation time (parse + analysis + emit) and the ratio of translation time to
jinja2's own compile time of the emitted template (transformers' environment), median and
maximum. The aim is a ratio of at most 1: translating costs no more than loading the result.

Run: python benchmarks/bench_translate.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

from gotmpl2jinja.emit import translate, uses_messages
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.syntax.parser import parse

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "corpus"


def corpus_templates() -> list[Path]:
    paths = sorted((CORPUS / "ollama" / "template").glob("*.gotmpl"))
    paths += sorted((CORPUS / "ollama" / "historical").glob("tools-testdata@*/*.gotmpl"))
    paths += sorted((CORPUS / "huggingface__huggingface.js" / "entries").glob("*/template.gotmpl"))
    paths.append(ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl")
    return paths


def best_of(repeat: int, func: object) -> float:
    """Smallest wall time of `repeat` calls (least disturbed by the shared machine)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    rows: list[tuple[str, float, float]] = []
    skipped = 0
    for path in corpus_templates():
        source = path.read_text(encoding="utf-8")
        if not uses_messages(parse(source, name=path.name)):
            continue
        try:
            jinja = translate(source, name=path.name)
        except TranslationError:
            skipped += 1
            continue
        t_translate = best_of(args.repeat, lambda s=source, n=path.name: translate(s, name=n))
        t_compile = best_of(args.repeat, lambda j=jinja: env.from_string(j))
        label = path.parent.name if path.name == "template.gotmpl" else path.name
        rows.append((label, t_translate, t_compile))
    translate_ms = [t * 1000 for _, t, _ in rows]
    ratios = [t / c for _, t, c in rows]
    slowest = max(rows, key=lambda r: r[1])
    print(f"templates translated: {len(rows)} (untranslatable skipped: {skipped}); "
          f"best of {args.repeat}")
    print(f"translate time  median {statistics.median(translate_ms):.2f} ms, "
          f"max {max(translate_ms):.2f} ms ({slowest[0]})")
    print(f"translate / jinja2 compile  median {statistics.median(ratios):.2f}, "
          f"max {max(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

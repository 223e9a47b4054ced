"""Parse the whole template corpus in one process and print how long it takes.

Prints the number of templates, the total seconds, and the per-template median and maximum
(the grammar is built once before timing starts; its build time is printed separately).
Run: python benchmarks/bench_parse.py [repeats]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from gotmpl2jinja.modelfile import parse_modelfile
from gotmpl2jinja.parser import _parser, parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
INVALID_MODELFILE = "ahnafnafee__modelfile-syntax/syntaxes/tests/messages.modelfile"


def corpus_templates() -> list[tuple[str, str]]:
    """Every .gotmpl under fixtures/ and the TEMPLATE of every corpus Modelfile."""
    out = [(p.relative_to(FIXTURES).as_posix(), p.read_bytes().decode())
           for p in sorted(FIXTURES.rglob("*.gotmpl")) if p.is_file()]
    corpus = FIXTURES / "corpus"
    for path in sorted(corpus.rglob("*")):
        rel = path.relative_to(corpus).as_posix()
        is_modelfile = path.name == "Modelfile" or path.suffix in (".Modelfile", ".modelfile") \
            or "replikation__modelfiles/opencode/" in rel
        if not path.is_file() or not is_modelfile or rel == INVALID_MODELFILE:
            continue
        text = path.read_bytes().decode().replace("{__FILE_LOCATION__}", "model.gguf")
        template = parse_modelfile(text.replace("{__EOS_TOKEN__}", "</s>")).template
        if template is not None:
            out.append((rel, template))
    return out


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    started = time.perf_counter()
    _parser()
    build = time.perf_counter() - started
    templates = corpus_templates()
    chars = sum(len(src) for _, src in templates)
    for _ in range(repeats):
        times = []
        total_start = time.perf_counter()
        for name, source in templates:
            t0 = time.perf_counter()
            parse(source, name=name)
            times.append(time.perf_counter() - t0)
        total = time.perf_counter() - total_start
        slowest = max(range(len(times)), key=times.__getitem__)
        print(f"templates={len(templates)} chars={chars} total_s={total:.3f} "
              f"median_ms={statistics.median(times) * 1000:.2f} "
              f"max_ms={times[slowest] * 1000:.2f} ({templates[slowest][0]}) "
              f"grammar_build_s={build:.3f}")


if __name__ == "__main__":
    main()

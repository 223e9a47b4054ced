"""Parse the whole template corpus in one process and print how long it takes.

Prints the number of templates, characters and tokens, then per repeat the total wall seconds,
the CPU seconds of this process (the honest figure on a shared machine: wall time grows with
other processes' load, printed as the 1-minute load average), and the per-template median and
maximum. The grammar is built before timing starts; its build time is printed separately.
Run: python benchmarks/bench_parse.py [repeats]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from gotmpl2jinja.ollama.modelfile import parse_modelfile
from gotmpl2jinja.syntax.parser import _parser, parse

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
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    started, cpu_started = time.perf_counter(), time.process_time()
    _, lexer = _parser()
    build = time.perf_counter() - started
    build_cpu = time.process_time() - cpu_started
    templates = corpus_templates()
    chars = sum(len(src) for _, src in templates)
    tokens = sum(sum(1 for _ in lexer.start(src)) for _, src in templates)
    print(f"templates={len(templates)} chars={chars} tokens={tokens} "
          f"grammar_build_s={build:.3f} (cpu {build_cpu:.3f})")
    for _ in range(repeats):
        times = []
        total_start, cpu_start = time.perf_counter(), time.process_time()
        for name, source in templates:
            t0 = time.perf_counter()
            parse(source, name=name)
            times.append(time.perf_counter() - t0)
        total = time.perf_counter() - total_start
        cpu = time.process_time() - cpu_start
        slowest = max(range(len(times)), key=times.__getitem__)
        print(f"total_s={total:.3f} cpu_s={cpu:.3f} us_per_token_cpu={cpu / tokens * 1e6:.1f} "
              f"median_ms={statistics.median(times) * 1000:.2f} "
              f"max_ms={times[slowest] * 1000:.2f} ({templates[slowest][0]}) "
              f"load1={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

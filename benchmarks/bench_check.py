"""How long `convert`'s check takes: the translation verified against Go before it is written.

For a few corpus templates (and the seed template): wall and CPU seconds of
`verify.check_translation` (every one-message shape plus CHECK_CASES random conversations, on
`verify.check_engines()`), once the Go renderer and the engines are running (a warm-up check of
another template starts them): "first" is what `convert` pays (each engine compiles the Jinja
afresh), "again" the same check repeated (compiled templates cached).

Usage: python benchmarks/bench_check.py [--repeat N]
No assertion on time: the figures are for people (aim: well under 2 s for a typical template).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = [
    ROOT / "fixtures" / "corpus" / "ollama" / "template" / "chatml.gotmpl",
    ROOT / "fixtures" / "corpus" / "ollama" / "template" / "llama3-instruct.gotmpl",
    ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl",
]


def main() -> None:
    from gotmpl2jinja.emit import translate
    from gotmpl2jinja.verify.check import CHECK_CASES, check_engines, check_translation

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    engines = check_engines()
    print(f"engines: {', '.join(engines)}; random cases: {CHECK_CASES}; "
          f"machine load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    warm = "{{ range .Messages }}{{ .Content }}{{ end }}"
    check_translation(warm, translate(warm), engines=engines)
    for path in TEMPLATES:
        if not path.exists():
            continue
        source = path.read_text(encoding="utf-8")
        jinja = translate(source, name=path.name)
        wall = time.perf_counter()
        check_translation(source, jinja, name=path.name, engines=engines)
        first = time.perf_counter() - wall
        walls, cpus = [], []
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            result = check_translation(source, jinja, name=path.name, engines=engines)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        print(f"{path.name:24s} {result.cases} cases  first {first:.2f} s  again: best "
              f"{min(walls):.2f} s, median {sorted(walls)[len(walls) // 2]:.2f} s (this "
              f"process's CPU {min(cpus):.2f} s; node and Go run beside it)")


if __name__ == "__main__":
    main()

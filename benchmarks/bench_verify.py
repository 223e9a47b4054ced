"""How fast the differential harness verifies: cases per second, and where the time goes.

Template: fixtures/seeds/002_qwen-style.gotmpl (chatml with tools, thinking and tool calls),
its Jinja from the translator (or `--jinja FILE`). All engines unless `--engines`.

Prints:
- verified cases/second of `verify_template` end to end (generation + Go + every engine);
- the split: hypothesis generation alone, the Go reference renderer alone, each engine alone
  (on a sample of the same conversations), in milliseconds per case.

Usage: python benchmarks/bench_verify.py [--cases 10000] [--sample 500] [--engines a,b]
No assertion on time: the figures are for people (target: 10,000 cases < 60 s on one core).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl"


def sample_conversations(count: int, seed: int) -> tuple[list[dict[str, Any]], float]:
    """`count` conversations from the harness's own strategy, and the seconds it took."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    from gotmpl2jinja.strategies import conversations

    drawn: list[dict[str, Any]] = []

    def keep(conv: dict[str, Any]) -> bool:
        drawn.append(conv)
        return False

    start = time.perf_counter()
    try:
        find(conversations(), keep, random=random.Random(seed), settings=settings(
            max_examples=count, database=None, deadline=None, phases=[Phase.generate],
            suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        pass
    return drawn, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=500)
    parser.add_argument("--engines", default=None)
    parser.add_argument("--jinja", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from gotmpl2jinja.conversation import jinja_context
    from gotmpl2jinja.engines import DEFAULT_NOW, get_engines
    from gotmpl2jinja.errors import RenderError
    from gotmpl2jinja.verify import go_render, parse_engine_list, verify_template

    go_source = TEMPLATE.read_text(encoding="utf-8")
    if args.jinja is not None:
        jinja_source = args.jinja.read_text(encoding="utf-8")
    else:
        from gotmpl2jinja.emit import translate

        jinja_source = translate(go_source, name=TEMPLATE.name)
    names = parse_engine_list(args.engines)
    engines = get_engines(names)
    print(f"template: {TEMPLATE.relative_to(ROOT)}; engines: {', '.join(e.name for e in engines)}")

    # Warm up: Go build/start, node start, compile caches.
    verify_template(go_source, jinja_source, cases=5, engines=names, seed=args.seed)

    start = time.perf_counter()
    result = verify_template(go_source, jinja_source, cases=args.cases, engines=names,
                             seed=args.seed)
    elapsed = time.perf_counter() - start
    print(f"verify_template: {result.cases} cases in {elapsed:.1f} s = "
          f"{result.cases / elapsed:,.0f} verified cases/s "
          f"({len(result.divergences)} divergences)")

    convs, generation = sample_conversations(args.sample, args.seed + 1)
    n = len(convs)
    print(f"split over a sample of {n} conversations (ms per case):")
    print(f"  hypothesis generation  {generation / n * 1000:7.3f}")
    start = time.perf_counter()
    for conv in convs:
        try:
            go_render(go_source, conv, DEFAULT_NOW)
        except RenderError:
            pass
    print(f"  go reference           {(time.perf_counter() - start) / n * 1000:7.3f}")
    contexts = [jinja_context(conv) for conv in convs]
    for engine in engines:
        start = time.perf_counter()
        for context in contexts:
            try:
                engine.render(jinja_source, context, now=DEFAULT_NOW)
            except RenderError:
                pass
        print(f"  {engine.name:<22} {(time.perf_counter() - start) / n * 1000:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

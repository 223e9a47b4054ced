"""How fast the differential harness verifies: cases per second, and where the time goes.

Template: fixtures/seeds/002_qwen-style.gotmpl (chatml with tools, thinking and tool calls),
its Jinja from the translator (or `--jinja FILE`). All engines unless `--engines`.

Prints:
- verified cases/second of `verify_template` end to end (generation + Go + every engine);
- the CPU time each process spent in that run, per case (Linux: from /proc): this Python process
  (the harness and the in-process engines), the Go reference renderer, and each engine that
  runs in a process of its own (Node, the C++ drivers), the largest first;
- the split on a sample of the same conversations, in milliseconds per case: generation (the
  bulk mode's seeded random draw, and hypothesis's engine for comparison), the Go reference
  renderer and each engine, each one case per request and in batches as the harness does. A
  runtime context (llama-server's) renders, as in the harness, only the cases in the
  contract's scope there; the line says how many;
- per runtime context, the cases it compared in that run, its own draws included (a context
  draws until it compared 90% of the cases: verify.percontext), and how many it drew.

Usage: python benchmarks/bench_verify.py [--cases 10000] [--sample 500] [--engines a,b]
No assertion on time: the figures are for people (target: 10,000 cases < 60 s on one core).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl"


def sample_conversations(count: int, seed: int) -> tuple[list[dict[str, Any]], float]:
    """`count` conversations as the harness draws them in bulk, and the seconds it took."""
    from gotmpl2jinja.verify.strategies import draw_random, text_pool, tools_pool

    text_pool(), tools_pool()  # built once per process, not per case
    rng = random.Random(seed)
    start = time.perf_counter()
    drawn = [draw_random(rng).conversation for _ in range(count)]
    return drawn, time.perf_counter() - start


def hypothesis_generation(count: int, seed: int) -> float:
    """Seconds for hypothesis's engine to generate `count` conversations, one test case each."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    from gotmpl2jinja.verify.strategies import conversations

    start = time.perf_counter()
    try:
        find(conversations(), lambda conv: False, random=random.Random(seed), settings=settings(
            max_examples=count, database=None, deadline=None, phases=[Phase.generate],
            suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        pass
    return time.perf_counter() - start


def per_case_ms(seconds: float, n: int) -> str:
    return f"{seconds / n * 1000:7.3f}"


def process_cpu(engines: list[Any]) -> dict[str, float]:
    """CPU seconds so far of this process and of each child process, by name: the engine that
    runs it, else its program's name (the Go reference renderer). Empty without /proc."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = {"python (harness + in-process engines)": usage.ru_utime + usage.ru_stime}
    owners = {proc.pid: e.name for e in engines
              if (proc := getattr(e, "_proc", None)) is not None}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != os.getpid():
                continue
            pid = int(entry.name)
            name = owners.get(pid) or (
                "go reference" if "ollama-reference" in (entry / "cmdline").read_text()
                else f"process {pid}")
            cpu[name] = cpu.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=500)
    parser.add_argument("--engines", default=None)
    parser.add_argument("--jinja", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from gotmpl2jinja.batch.files import parse_engine_list
    from gotmpl2jinja.engines.registry import DEFAULT_NOW, get_engines, render_many
    from gotmpl2jinja.errors import RenderError
    from gotmpl2jinja.verify.closed import without_flags
    from gotmpl2jinja.verify.conversation import jinja_context
    from gotmpl2jinja.verify.harness import MAX_BATCH, verify_template
    from gotmpl2jinja.verify.outcomes import go_render, go_render_many, out_of_scope

    go_source = TEMPLATE.read_text(encoding="utf-8")
    if args.jinja is not None:
        jinja_source = args.jinja.read_text(encoding="utf-8")
    else:
        from gotmpl2jinja.emit import translate

        jinja_source = translate(go_source, name=TEMPLATE.name)
    names = parse_engine_list(args.engines)
    engines = get_engines(names)
    print(f"template: {TEMPLATE.relative_to(ROOT)}; engines: {', '.join(e.name for e in engines)}")
    print(f"machine load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")

    # Warm up: Go build/start, node start, compile caches (on every context: a runtime
    # context compiles the template on its first in-scope case).
    verify_template(go_source, jinja_source, cases=5, engines=names, seed=args.seed)
    warm, _ = sample_conversations(50, args.seed + 2)
    for engine in engines:
        ready = [jinja_context(c) for c in warm if out_of_scope(engine, c, jinja_source) is None]
        render_many(engine, jinja_source, ready[:1], now=DEFAULT_NOW)

    before = process_cpu(engines)
    start = time.perf_counter()
    result = verify_template(go_source, jinja_source, cases=args.cases, engines=names,
                             seed=args.seed)
    elapsed = time.perf_counter() - start
    after = process_cpu(engines)
    print(f"verify_template: {result.cases} cases in {elapsed:.1f} s = "
          f"{result.cases / elapsed:,.0f} verified cases/s "
          f"({len(result.divergences)} divergences)")
    for name in result.contexts:
        tally = result.counts[name]
        print(f"  {name}: compared {tally.compared} of {result.cases} "
              f"({tally.drawn} drawn of its own)" + (f", {tally.short}" if tally.short else ""))
    spent = sorted(((after[k] - before.get(k, 0.0), k) for k in after), reverse=True)
    if spent:
        total = sum(seconds for seconds, _ in spent)
        print(f"CPU time of that run, per case ({total / result.cases * 1000:.2f} ms in all, "
              f"on {os.cpu_count()} CPUs):")
        for seconds, name in spent:
            print(f"  {name:<38} {per_case_ms(seconds, result.cases)}   "
                  f"{seconds / total:4.0%}")

    convs, generation = sample_conversations(args.sample, args.seed + 1)
    plain = [without_flags(conv) for conv in convs]  # Go renders Ollama's request
    n = len(convs)
    print(f"split over a sample of {n} conversations (ms per case):")
    print(f"  generation, bulk random draw       {per_case_ms(generation, n)}")
    print("  generation, hypothesis engine      "
          f"{per_case_ms(hypothesis_generation(n, args.seed + 1), n)}")
    start = time.perf_counter()
    for conv in plain:
        try:
            go_render(go_source, conv, DEFAULT_NOW)
        except RenderError:
            pass
    single = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, n, MAX_BATCH):
        go_render_many(go_source, plain[i:i + MAX_BATCH], DEFAULT_NOW)
    print(f"  go reference       single {per_case_ms(single, n)}   batch "
          f"{per_case_ms(time.perf_counter() - start, n)}")
    start = time.perf_counter()
    contexts = [jinja_context(conv) for conv in convs]
    print(f"  jinja_context      {per_case_ms(time.perf_counter() - start, n)}")
    for engine in engines:
        mine = [context for conv, context in zip(convs, contexts, strict=True)
                if out_of_scope(engine, conv, jinja_source) is None]
        if not mine:
            print(f"  {engine.name:<18} no case of the sample is in scope here")
            continue
        start = time.perf_counter()
        for context in mine:
            try:
                engine.render(jinja_source, context, now=DEFAULT_NOW)
            except RenderError:
                pass
        single = time.perf_counter() - start
        start = time.perf_counter()
        for i in range(0, len(mine), MAX_BATCH):
            render_many(engine, jinja_source, mine[i:i + MAX_BATCH], now=DEFAULT_NOW)
        batch = time.perf_counter() - start
        scope = f"   ({len(mine)} of {n} in scope; per sample case" if len(mine) < n else ""
        print(f"  {engine.name:<18} single {per_case_ms(single, len(mine))}   batch "
              f"{per_case_ms(batch, len(mine))}" + (
                  f"{scope} {per_case_ms(batch, n).strip()})" if scope else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Renders per second through the Python driver of the Go reference renderer.

Workload: a chatml-style template with tools (qwen2.5's historical tool template from the corpus)
on a 10-message conversation with one tool definition and a tool call. Prints figures; asserts
nothing about speed. Run: `python benchmarks/bench_reference.py [--seconds 3]`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from gotmpl2jinja.ollama.reference import ReferenceRenderer

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "ollama" / "historical"
TOOLS = next(CORPUS.glob("tools-testdata@*"))


def conversation() -> dict[str, object]:
    """10 messages: system, then user/assistant turns including a tool call and its result."""
    messages = json.loads((TOOLS / "messages.json").read_text(encoding="utf-8"))
    messages += [
        {"role": "assistant", "content": "Let me check both cities."},
        {"role": "user", "content": "Thanks. And Berlin?"},
        {"role": "assistant", "content": "Berlin is 18 degrees Celsius."},
        {"role": "user", "content": "Great, summarise all three please."},
    ]
    assert len(messages) == 10
    tools = json.loads((TOOLS / "tools.json").read_text(encoding="utf-8"))
    return {"messages": messages, "tools": tools}


def go_cpu_seconds(pid: int | None) -> float:
    """User+system CPU time of the Go process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(label: str, seconds: float, step: object, pid: int | None,
            per_call: int = 1) -> None:
    """Call `step` for about `seconds`; print renders per wall second and per CPU second
    (Python plus Go), the latter being what one core sustains even when the machine is shared.
    `per_call`: renders one call of `step` makes (a batch)."""
    assert callable(step)
    step()  # warm up (starts/builds the process, fills the template cache)
    count, start = 0, time.perf_counter()
    cpu_start, go_start = time.process_time(), go_cpu_seconds(pid)
    calls = max(1, 100 // per_call)
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(calls):
            step()
        count += calls * per_call
    cpu = time.process_time() - cpu_start + go_cpu_seconds(pid) - go_start
    per_cpu = f"{count / cpu:>9,.0f} /CPU-s" if cpu > 0 else "        n/a"
    print(f"{label:<46} {count / elapsed:>9,.0f} /s  {per_cpu}  ({count} in {elapsed:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    template = (TOOLS / "qwen2.5.gotmpl").read_text(encoding="utf-8")
    chat = conversation()
    with ReferenceRenderer() as renderer:
        start = time.perf_counter()
        renderer.render(template, chat)
        print(f"first render (build if needed + start): {time.perf_counter() - start:.3f} s")
        size = len(renderer.render(template, chat))
        pid = renderer.process_id
        print(f"machine load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        measure(f"render, chatml+tools, 10 messages ({size} B out)", args.seconds,
                lambda: renderer.render(template, chat), pid)
        for size in (10, 100):
            batch = [chat] * size
            measure(f"render_many, same, batches of {size} (per case)", args.seconds,
                    lambda b=batch: renderer.render_many(template, b), pid, per_call=size)
        measure("check_parse, same template (cached)", args.seconds,
                lambda: renderer.check_parse(template), pid)
        counter = iter(range(10**9))
        measure("render, a new template source each time", args.seconds,
                lambda: renderer.render(template + f"{{{{/* {next(counter)} */}}}}", chat), pid)


if __name__ == "__main__":
    main()

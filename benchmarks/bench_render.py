"""What our translation costs to render, next to the model's own Jinja template.

For every paired corpus entry (`fixtures/corpus/huggingface__huggingface.js/entries/*`: Ollama's
`template.gotmpl` and the same model's GGUF `gguf_chat_template.jinja`) whose Go template
translates and whose own template renders the conversation, both are rendered on the same
8-message conversation (system, user, assistant, user, an assistant tool call, its result,
assistant, user; tools given where the Ollama template reads `.Tools` and the model's own
template renders that turn, else plain turns), with
the context our contract gives (`conversation.jinja_context`, plus the entry's BOS/EOS).

Prints, per pair and as median / p90 / max, the ratio translation / own template:
- on jinja2 in transformers' settings (the `jinja2` engine), time per render in-process;
- on llama.cpp's engine (`llamacpp`, raw context), time per render in batches of `--batch`
  through the driver (the JSON round trip is in both sides' figures, so these ratios understate
  the engine's own difference);
then the scaling of the seed's translation (fixtures/seeds/002) from 100 to 1,000 messages on
both engines, beside what reading the conversation alone costs there (`{{ messages|length }}`),
and the seed translation's length, whole and by part (each top-level runtime macro with the
helpers defined inside it, and the template's own part). With `--instructions` (needs
valgrind) the same scaling on llama.cpp's engine is also counted in instructions by callgrind,
which do not change with the machine's load: the driver run on one request, then on three,
the difference halved, so that reading the template and starting the process are left out.

Usage: python benchmarks/bench_render.py [--repeat 30] [--batch 20] [--no-llamacpp] [--only NAME]
       [--instructions]
No assertion on time: the figures are for people.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = ROOT / "fixtures" / "corpus" / "huggingface__huggingface.js" / "entries"
SEED = ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl"

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "required": ["city"], "properties": {
        "city": {"type": "string", "description": "The city, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "The local time in a time zone.",
    "parameters": {"type": "object", "required": ["zone"], "properties": {
        "zone": {"type": "string", "description": "An IANA zone name"}}}}}


def conversation(with_tools: bool) -> dict[str, Any]:
    """The 8-message conversation every pair renders."""
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello! Who are you?"},
        {"role": "assistant", "content": "I am an assistant. How can I help?"},
        {"role": "user", "content": "What is the weather in Paris?"},
    ]
    if with_tools:
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": '{"temperature": 21, "sky": "clear"}',
             "tool_name": "get_weather"},
        ]
    else:
        messages += [
            {"role": "assistant", "content": "I cannot look that up, sorry."},
            {"role": "user", "content": "Then tell me about Paris."},
        ]
    messages += [
        {"role": "assistant", "content": "It is 21 degrees and clear in Paris."},
        {"role": "user", "content": "Thanks! And tomorrow?"},
    ]
    conv: dict[str, Any] = {"messages": messages}
    if with_tools:
        conv["tools"] = [WEATHER, TIME]
    return conv


def long_conversation(n: int) -> dict[str, Any]:
    """`n` messages for the scaling figure: a system message, then user/assistant turns with a
    tool call and its result every tenth turn, tools given."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."}]
    i = 0
    while len(messages) < n:
        if i % 10 == 9 and len(messages) + 3 <= n:
            messages += [
                {"role": "user", "content": f"Weather {i}?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": f"City {i}"}}}]},
                {"role": "tool", "content": '{"temperature": 21}', "tool_name": "get_weather"},
            ]
        else:
            role = "user" if messages[-1]["role"] != "user" else "assistant"
            messages.append({"role": role, "content": f"Message number {i}, some words."})
        i += 1
    return {"messages": messages[:n], "tools": [WEATHER, TIME]}


def time_per_call(call: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` calls after one warm-up, in seconds: as timeit does, the best
    time is the render's own cost, the others that plus whatever else the machine did (on 2
    shared cores a median still jumps 5× now and then)."""
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def instructions_per_render(driver: Path, template: str, context: dict[str, Any],
                            now: float) -> int:
    """Instructions llama.cpp's raw driver spends on one render of `context` (callgrind)."""
    def total(renders: int) -> int:
        lines = []
        for i in range(renders):
            request: dict[str, Any] = {"id": i + 1, "key": "bench", "mode": "raw", "now": now,
                                       "contexts": [context]}
            if i == 0:
                request["template"] = template
            lines.append(json.dumps(request, ensure_ascii=False))
        with tempfile.TemporaryDirectory() as tmp:
            requests = Path(tmp) / "requests.jsonl"
            requests.write_text("\n".join(lines) + "\n", encoding="utf-8")
            with requests.open(encoding="utf-8") as stdin:
                done = subprocess.run(
                    ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/callgrind.out",
                     str(driver)], stdin=stdin, capture_output=True, text=True,
                    env=dict(os.environ, TZ="UTC"), check=False)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            raise RuntimeError(f"callgrind printed no count: {done.stderr[-300:]}")
        return int(found.group(1))
    return (total(3) - total(1)) // 2


#: A runtime macro defined at the top level of a translation (the helpers only one macro calls
#: are defined inside it, indented, and count with it).
TOP_MACRO = re.compile(r"^\{%- macro (\w+)\(", re.MULTILINE)


def length_parts(jinja: str, intro: str, outro: str) -> list[tuple[str, int]]:
    """Where a translation's characters are: the header, each top-level runtime macro (with
    the helpers inside it), and the template's own part after the macros."""
    if intro not in jinja:
        return [("the template itself", len(jinja))]
    head, rest = jinja.split(intro, 1)
    block, body = rest.split(outro, 1)
    starts = [m.start() for m in TOP_MACRO.finditer(block)] + [len(block)]
    parts = [("header", len(head) + len(intro) + starts[0])]
    parts += [(TOP_MACRO.match(block, a).group(1), b - a)  # type: ignore[union-attr]
              for a, b in zip(starts, starts[1:], strict=False)]
    return parts + [("the template itself", len(outro) + len(body))]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(label: str, ratios: list[float]) -> str:
    if not ratios:
        return f"{label}: no pairs"
    return (f"{label}: {len(ratios)} pairs, ratio translation / own template: "
            f"median {statistics.median(ratios):.1f}x, p90 {quantile(ratios, 0.9):.1f}x, "
            f"max {max(ratios):.1f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30, help="renders timed per template")
    parser.add_argument("--batch", type=int, default=20, help="renders per llama.cpp request")
    parser.add_argument("--no-llamacpp", action="store_true", help="jinja2 only")
    parser.add_argument("--only", default=None, help="entries whose name contains this")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the scaling on llama.cpp in instructions (valgrind)")
    args = parser.parse_args()

    from gotmpl2jinja.batch.compare import tokens_for_entry, without_generation_tags
    from gotmpl2jinja.emit import translate
    from gotmpl2jinja.emit.runtime import MACROS_INTRO, MACROS_OUTRO
    from gotmpl2jinja.engines.cpp.build import driver_path
    from gotmpl2jinja.engines.registry import DEFAULT_NOW, get_engine, render_many
    from gotmpl2jinja.errors import Gotmpl2JinjaError, RenderError
    from gotmpl2jinja.verify.conversation import jinja_context

    jinja2 = get_engine("jinja2")
    cpp = None
    if not args.no_llamacpp:
        try:
            cpp = get_engine("llamacpp")
        except Gotmpl2JinjaError as exc:
            print(f"llamacpp not available ({exc}); jinja2 only", file=sys.stderr)

    def on_jinja2(source: str, context: dict[str, Any]) -> float:
        return time_per_call(lambda: jinja2.render(source, context, now=DEFAULT_NOW), args.repeat)

    def on_cpp(source: str, context: dict[str, Any]) -> float:
        assert cpp is not None
        batch = [context] * args.batch

        def once() -> None:
            out = render_many(cpp, source, batch, now=DEFAULT_NOW)
            if isinstance(out[0], RenderError):
                raise out[0]
        return time_per_call(once, args.repeat) / args.batch

    print(f"machine load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{args.repeat} timed renders per template (the fastest)")
    print(f"{'entry':<44} {'tools':>5} {'own ms':>8} {'ours ms':>8} {'ratio':>6}"
          + ("" if cpp is None else f" {'cpp own':>8} {'cpp ours':>8} {'ratio':>6}"))
    ratios: list[float] = []
    tool_ratios: list[float] = []
    cpp_ratios: list[float] = []
    skipped: dict[str, int] = {}
    for entry in sorted(ENTRIES.iterdir()):
        if args.only and args.only not in entry.name:
            continue
        go_path, own_path = entry / "template.gotmpl", entry / "gguf_chat_template.jinja"
        if not (go_path.is_file() and own_path.is_file()):
            continue
        go_source = go_path.read_text(encoding="utf-8")
        own = without_generation_tags(own_path.read_text(encoding="utf-8"))
        meta_path = entry / "meta.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        try:
            ours = translate(go_source, name="template.gotmpl")
        except Gotmpl2JinjaError:
            skipped["not translated"] = skipped.get("not translated", 0) + 1
            continue
        tokens = tokens_for_entry(meta, go_source, own)
        context = None
        # the tool conversation where the Ollama template reads .Tools; the plain one where the
        # model's own template refuses a tool turn (roles that must alternate, say)
        for with_tools in ([True, False] if ".Tools" in go_source else [False]):
            candidate = jinja_context(conversation(with_tools))
            candidate["bos_token"], candidate["eos_token"] = tokens
            try:
                jinja2.render(own, candidate, now=DEFAULT_NOW)
            except RenderError:
                continue
            context = candidate
            break
        if context is None:
            skipped["own template renders neither conversation"] = (
                skipped.get("own template renders neither conversation", 0) + 1)
            continue
        try:
            jinja2.render(ours, context, now=DEFAULT_NOW)
        except RenderError:  # the template fails on it in Go too (the translation is verified)
            skipped["Ollama's template fails on the conversation"] = (
                skipped.get("Ollama's template fails on the conversation", 0) + 1)
            continue
        own_s, ours_s = on_jinja2(own, context), on_jinja2(ours, context)
        ratio = ours_s / own_s
        ratios.append(ratio)
        if with_tools:
            tool_ratios.append(ratio)
        line = (f"{entry.name[:44]:<44} {'yes' if with_tools else '':>5} {own_s * 1e3:8.3f} "
                f"{ours_s * 1e3:8.3f} {ratio:5.1f}x")
        if cpp is not None:
            try:
                cpp_own, cpp_ours = on_cpp(own, context), on_cpp(ours, context)
            except RenderError as exc:
                line += f"  llamacpp: {str(exc).splitlines()[0][:40]}"
            else:
                cpp_ratios.append(cpp_ours / cpp_own)
                line += f" {cpp_own * 1e3:8.3f} {cpp_ours * 1e3:8.3f} {cpp_ours / cpp_own:5.1f}x"
        print(line, flush=True)
    print()
    print(summary("jinja2", ratios))
    print(summary("jinja2, templates with tools", tool_ratios))
    if cpp is not None:
        print(summary(f"llamacpp (raw context, batches of {args.batch})", cpp_ratios))
    for why, count in sorted(skipped.items()):
        print(f"left out: {count} entries ({why})")

    seed_source = SEED.read_text(encoding="utf-8")
    seed_jinja = translate(seed_source, name=SEED.name)
    print()
    print(f"seed translation ({SEED.relative_to(ROOT)}): {len(seed_jinja):,} characters, "
          f"{seed_jinja.count(chr(10)):,} lines")
    parts = length_parts(seed_jinja, MACROS_INTRO, MACROS_OUTRO)
    print("  by part: " + ", ".join(f"{name} {size:,}" for name, size in parts))
    small, large = (jinja_context(long_conversation(n)) for n in (100, 1000))
    t100, t1000 = on_jinja2(seed_jinja, small), on_jinja2(seed_jinja, large)
    print(f"seed translation on jinja2: 100 messages {t100 * 1e3:.2f} ms, 1,000 messages "
          f"{t1000 * 1e3:.2f} ms: {t1000 / t100:.1f}x")
    if cpp is not None:
        c100, c1000 = on_cpp(seed_jinja, small), on_cpp(seed_jinja, large)
        print(f"seed translation on llamacpp: 100 messages {c100 * 1e3:.2f} ms, 1,000 messages "
              f"{c1000 * 1e3:.2f} ms: {c1000 / c100:.1f}x")
        reading = "{{ messages|length }}"
        r100, r1000 = on_cpp(reading, small), on_cpp(reading, large)
        print(f"reading the conversation alone on llamacpp ({reading}): 100 messages "
              f"{r100 * 1e3:.2f} ms, 1,000 messages {r1000 * 1e3:.2f} ms: {r1000 / r100:.1f}x")
    driver = driver_path("llamacpp")
    if args.instructions and (driver is None or shutil.which("valgrind") is None):
        print("instructions: needs valgrind and the llamacpp engine built", file=sys.stderr)
    elif args.instructions and driver is not None:
        now = DEFAULT_NOW.timestamp()
        for label, source in (("seed translation", seed_jinja),
                              ("reading the conversation alone", "{{ messages|length }}")):
            i100, i1000 = (instructions_per_render(driver, source, c, now) for c in (small, large))
            print(f"{label} on llamacpp, instructions per render (callgrind): 100 messages "
                  f"{i100:,}, 1,000 messages {i1000:,}: {i1000 / i100:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

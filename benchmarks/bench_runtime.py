"""How much the runtime macros cost per render, on each engine.

Workloads (one render each, figures are the median of `--repeats` renders, in milliseconds):
- `plain`          `{{ s }}` of a 4 KiB message (the baseline: engine + transport overhead);
- `json_string`    the same message through json_string's replace chain;
- `json_value`     a tool call's arguments (nested, 20 leaves, mixed numbers);
- `json_tools`     five realistic tools (what `{{ .Tools }}` prints);
- `print_number`   100 floats of every magnitude, through print_number.
Prints figures; asserts nothing about speed.
Run: `python benchmarks/bench_runtime.py [--repeats 30] [--engines jinja2,minijinja]`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from gotmpl2jinja.emit.runtime import macro_source
from gotmpl2jinja.engines.registry import get_engines

MESSAGE = ("Hello <world> & \"friends\"\n\tline\u2028 é 😀 " * 100)[:4096]
ARGUMENTS: dict[str, Any] = {
    "city": "Paris", "days": 3, "unit": "celsius", "lat": 48.8566, "lon": 2.3522,
    "filters": {"rain": True, "wind": None, "Max": 1e6, "min": -0.5e-7},
    "tags": ["a", "B", "c<d>"], "nested": {"z": [1, 2, {"y": "x"}], "a": {"b": {"c": 1e21}}},
}
TOOLS = [{
    "type": "function",
    "function": {
        "name": f"tool_{i}",
        "description": f"Does thing {i} with <care> & attention",
        "parameters": {
            "type": "object", "required": ["a", "b"],
            "properties": {
                "a": {"type": "string", "description": "first"},
                "b": {"type": ["integer", "null"], "enum": [1, 2, 3]},
                "c": {"type": "object", "properties": {"x": {"type": "number"},
                                                       "y": {"type": "array",
                                                             "items": {"type": "string"}}}},
                "d": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
            },
        },
    },
} for i in range(5)]
FLOATS = [(-1) ** i * (1.37 ** (i - 50)) for i in range(100)]

WORKLOADS: dict[str, tuple[str, dict[str, Any]]] = {
    "plain": ("{{ s }}", {"s": MESSAGE}),
    "json_string": (macro_source(["json_string"]) + "{{ json_string(s) }}", {"s": MESSAGE}),
    "json_value": (macro_source(["json_value"]) + "{{ json_value(v) }}", {"v": ARGUMENTS}),
    "json_tools": (macro_source(["json_tools"]) + "{{ json_tools(tools) }}", {"tools": TOOLS}),
    "print_number": (macro_source(["print_number"])
                     + "{% for x in xs %}{{ print_number(x) }} {% endfor %}", {"xs": FLOATS}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--engines", default="jinja2,hfjinja,minijinja,minijinja-trim")
    args = parser.parse_args()
    engines = get_engines(args.engines.split(","))
    print(f"{'workload':14}" + "".join(f"{e.name:>16}" for e in engines) + "   (ms, median)")
    for name, (template, context) in WORKLOADS.items():
        row = f"{name:14}"
        for engine in engines:
            engine.render(template, context)  # compile and warm up
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                engine.render(template, context)
                times.append((time.perf_counter() - start) * 1000)
            row += f"{statistics.median(times):16.3f}"
        print(row)


if __name__ == "__main__":
    main()

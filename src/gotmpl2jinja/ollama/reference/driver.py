"""Talk to one long-lived copy of the Go reference renderer (`binary` finds or builds it).

Why a server process: starting a Go program per render costs milliseconds; one process that
reads JSON lines serves thousands of renders a second and caches parsed templates by source.
Why a timeout: a template can loop for ever (`{{ range 1000000000000 }}`); the Go side cannot
interrupt text/template, so the driver kills the process and starts a fresh one.

May depend on: `errors`, `lifetime`, `ollama.reference.binary`.
"""

from __future__ import annotations

import base64
import json
import math
import os
import select
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from gotmpl2jinja.errors import ReferenceRendererError
from gotmpl2jinja.lifetime import popen_tied
from gotmpl2jinja.ollama.reference.binary import (  # noqa: F401 - the driver's names before
    CACHE_ENV,
    GO_SOURCES,
    binary_path,
    cache_dir,
    ensure_binary,
    find_go,
    source_hash,
    stderr_note,
)

#: Seconds one request may take before the process is killed and restarted.
DEFAULT_TIMEOUT = 5.0

#: The longest timeout accepted (a day): beyond it `select` overflows, and nobody waits so long.
MAX_TIMEOUT = 86400.0

#: How many template ids the driver remembers (the Go side keeps 4096 parsed templates).
TEMPLATE_IDS = 2048


def check_timeout(seconds: float) -> float:
    """A render timeout must be a positive, finite number of seconds (at most a day): 0, a
    negative number or infinity would mean waiting for ever on a template that loops."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or \
            not math.isfinite(seconds) or not 0 < seconds <= MAX_TIMEOUT:
        raise ReferenceRendererError(
            f"timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, "
            f"not {seconds!r}")
    return float(seconds)


class GoProcess:
    """One running renderer: send a request dict, get the response dict, within a timeout."""

    def __init__(self, binary: Path) -> None:
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        try:
            self._proc = popen_tied(
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
        if not (math.isfinite(timeout) and timeout > 0):  # a batch's scaled limit: still bounded
            check_timeout(timeout)
        deadline = time.monotonic() + min(timeout, 30 * MAX_TIMEOUT)
        while True:
            newline = buffer.find(b"\n")
            if newline >= 0:
                self._pending = buffer[newline + 1:]
                return buffer[:newline]
            wait = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._stdout_fd], [], [], min(wait, 3600.0))
            if not ready:
                if time.monotonic() < deadline:
                    continue
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
        self._timeout = check_timeout(timeout)
        self._lock = threading.Lock()
        self._process: GoProcess | None = None

    @property
    def timeout(self) -> float:
        """Seconds one request may take (positive and finite: see `check_timeout`)."""
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._timeout = check_timeout(seconds)

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

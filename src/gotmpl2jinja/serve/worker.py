"""The playground's worker: `serve.requests` (on the `pipeline` stage) in a process of its own.

Why a process: the in-process engines (jinja2, transformers, minijinja) stop a render that runs
past the CLI's timeout with SIGALRM, which only works on a main thread, and a web server runs
requests on worker threads. In a process of its own the pipeline runs on its main thread, with
the CLI's render timeouts, exactly as the commands run it; and whatever a template does (loops
past every timeout, exhausts memory, crashes an engine), the server kills this process, says
so in the page, and starts a fresh one for the next request.

May depend on: errors, pipeline (the CLI's timeouts), serve.requests.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.pipeline.reading import set_timeout
from gotmpl2jinja.serve import requests

#: The requests the worker answers, by name.
OPERATIONS = {"convert": requests.convert, "render": requests.render,
              "download": requests.download, "facts": requests.facts,
              "conversation": requests.check_conversation}


def run_worker(conn: Connection, models_dir: Path | None, timeout: float) -> None:
    """The worker's loop (the child process's main thread): one request at a time, each
    answered ("ok", data) or ("error", {message, line, col}); a verify also sends
    ("progress", cases) as it goes."""
    set_timeout(timeout)  # the CLI's --timeout, on Go and on every engine
    while True:
        try:
            op, request, uploads = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(answer(op, request, uploads, models_dir, conn))


def answer(op: str, request: dict[str, Any], uploads: dict[str, Path],
           models_dir: Path | None, conn: Connection) -> tuple[str, Any]:
    """One request's answer; every failure is a sentence for the page, never a traceback."""
    try:
        if op == "verify":
            return "ok", requests.verify(request, models_dir, uploads,
                                         lambda done: conn.send(("progress", done)))
        if op == "choices":
            return "ok", requests.choices(models_dir)
        return "ok", OPERATIONS[op](request, models_dir, uploads)
    except Gotmpl2JinjaError as exc:
        return "error", requests.error_json(exc)
    except RecursionError:
        return "error", {"message": "error: the input nests too deeply to process (Python's "
                                    "recursion limit)"}
    except UnicodeError as exc:
        return "error", {"message": f"error: the input is not UTF-8 text ({exc})"}
    except MemoryError:
        return "error", {"message": "error: the request needs more memory than there is"}
    except Exception as exc:  # noqa: BLE001 - a bug must be a sentence in the page, not a crash
        return "error", {"message": f"error: gotmpl2jinja failed on this request "
                                    f"({type(exc).__name__}: {exc}); please report it"}


class Worker:
    """The server's handle on one worker process: started on first use, one request at a
    time, killed and replaced when a request runs past its limit or the process dies."""

    def __init__(self, models_dir: Path | None, timeout: float) -> None:
        self._args = (models_dir, timeout)
        self._lock = threading.Lock()
        self._process: Any = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self._stop()
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        self._process = context.Process(target=run_worker, args=(theirs, *self._args),
                                        name="gotmpl2jinja-serve-worker", daemon=True)
        self._process.start()
        theirs.close()
        self._conn = ours
        return ours

    def _stop(self) -> None:
        if self._process is not None and self._process.pid is not None:
            self._process.kill()
            self._process.join(5)
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None

    def close(self) -> None:
        with self._lock:
            self._stop()

    def warm(self) -> None:
        """Start the process (and load the pipeline in it) before the first request."""
        self.call("choices", {}, {}, limit=120)

    def call(self, op: str, request: dict[str, Any], uploads: dict[str, Path], *,
             limit: float, progress: Callable[[int], None] | None = None
             ) -> tuple[str, Any]:
        """Send one request and wait for its answer at most `limit` seconds."""
        with self._lock:
            conn = self._start()
            deadline = time.monotonic() + limit
            try:
                conn.send((op, request, uploads))
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._stop()
                        return "error", {"message": (
                            f"error: this request did not finish within {limit:g} s (a "
                            "template that loops?); it was stopped, the next request starts "
                            "afresh")}
                    if not conn.poll(min(left, 0.25)):
                        if not self._process.is_alive():
                            raise EOFError
                        continue
                    kind, data = conn.recv()
                    if kind == "progress":
                        if progress is not None:
                            progress(data)
                        continue
                    return kind, data
            except (EOFError, OSError, BrokenPipeError):
                code = self._process.exitcode if self._process is not None else None
                self._stop()
                return "error", {"message": (
                    "error: the worker stopped on this request"
                    + (f" (exit code {code})" if code is not None else "")
                    + "; the next request starts afresh")}

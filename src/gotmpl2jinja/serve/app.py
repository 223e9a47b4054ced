"""The playground's web application: the page, and a small JSON API over `serve.worker`.

Safe by default: it binds 127.0.0.1 (the `serve` command warns for any other host), refuses a
request body past a size limit before reading it, runs the pipeline with the CLI's render
timeouts in a worker process that is replaced when a template hangs or crashes it, and answers
every failure as JSON with a one-line message for the page, never a stack trace.

May depend on: serve.worker (Starlette and uvicorn: the `serve` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import tempfile
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gotmpl2jinja.serve.worker import Worker

#: Largest request body, in bytes: a template, a conversation, a page's Jinja (a chat template
#: is a few KiB; the largest of the corpus is under 100 KiB).
MAX_BODY = 2 * 1024 * 1024
#: Largest upload of a vocabulary (a GGUF's header and tokens, or a tokenizer_config.json).
MAX_UPLOAD = 64 * 1024 * 1024
#: Seconds each kind of request may take in the worker before it is stopped (each render in
#: it has the CLI's own timeout besides).
LIMITS = {"choices": 120.0, "convert": 300.0, "render": 120.0, "download": 60.0,
          "facts": 60.0, "conversation": 30.0}
#: A verify may take this long plus this much per case.
VERIFY_BASE, VERIFY_PER_CASE = 120.0, 3.0
STATIC = resources.files("gotmpl2jinja.serve") / "static"


def error(message: str, status: int = 400, **where: Any) -> JSONResponse:
    return JSONResponse({"error": {"message": message, **where}}, status_code=status)


class BodyLimit:
    """Refuse a request whose body is larger than its limit (413), from Content-Length before
    reading, else while it streams in."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = MAX_UPLOAD if scope["path"].startswith("/api/upload") else MAX_BODY
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        too_big = too_large(limit)
        if length is not None and length.isdigit() and int(length) > limit:
            await too_big(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await too_big(scope, receive, send)


class _TooLarge(Exception):
    pass


def too_large(limit: int) -> JSONResponse:
    return error(f"error: the request is larger than the playground takes ({limit // 2**20} "
                 "MiB); a chat template is a few KiB", status=413)


@dataclass
class VerifyJob:
    """One verify run: its progress, then its answer."""

    total: int
    done: int = 0
    answer: tuple[str, Any] | None = None


@dataclass
class Playground:
    """The application's state: the two workers (verify runs apart, so that the page can
    render while it runs), the uploads and the verify jobs."""

    models_dir: Path | None
    timeout: float
    uploads: dict[str, Path] = field(default_factory=dict)
    jobs: dict[str, VerifyJob] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.worker = Worker(self.models_dir, self.timeout)
        self.verifier = Worker(self.models_dir, self.timeout)
        self._folder = tempfile.TemporaryDirectory(prefix="gotmpl2jinja-serve-")
        self._ids = itertools.count(1)

    def close(self) -> None:
        self.worker.close()
        self.verifier.close()
        self._folder.cleanup()

    def new_id(self) -> str:
        return str(next(self._ids))

    def store(self, name: str, data: bytes) -> tuple[str, Path]:
        key = self.new_id()
        safe = "".join(c for c in Path(name).name if c.isalnum() or c in "._-") or "upload"
        path = Path(self._folder.name) / key / safe
        path.parent.mkdir()
        path.write_bytes(data)
        self.uploads[key] = path
        return key, path


def answer_of(kind: str, data: Any) -> JSONResponse:
    if kind == "ok":
        return JSONResponse(data)
    return JSONResponse({"error": data}, status_code=422)


async def read_json(request: Request) -> dict[str, Any] | JSONResponse:
    try:
        body = await request.json()
    except ValueError as exc:
        return error(f"error: the request is not JSON ({exc})")
    if not isinstance(body, dict):
        return error("error: the request must be a JSON object")
    return body


def create_app(*, models_dir: Path | None = None, timeout: float = 5.0,
               warm: bool = True) -> Starlette:
    """The application; `timeout` is the CLI's --timeout (each render, Go and engines)."""
    state = Playground(models_dir, timeout)

    async def index(request: Request) -> Response:
        return FileResponse(str(STATIC / "index.html"))

    async def call(op: str, request: Request) -> Response:
        body = await read_json(request)
        if isinstance(body, JSONResponse):
            return body
        kind, data = await asyncio.to_thread(state.worker.call, op, body, state.uploads,
                                             limit=LIMITS[op])
        return answer_of(kind, data)

    async def choices(request: Request) -> Response:
        kind, data = await asyncio.to_thread(state.worker.call, "choices", {}, state.uploads,
                                             limit=LIMITS["choices"])
        return answer_of(kind, data)

    async def convert(request: Request) -> Response:
        return await call("convert", request)

    async def render(request: Request) -> Response:
        return await call("render", request)

    async def download(request: Request) -> Response:
        return await call("download", request)

    async def conversation(request: Request) -> Response:
        return await call("conversation", request)

    async def upload(request: Request) -> Response:
        """A vocabulary (GGUF) or a tokenizer_config.json, as the body; its BOS facts."""
        what = request.query_params.get("kind", "")
        if what not in ("gguf", "tokenizer_config"):
            return error("error: upload kind must be gguf or tokenizer_config")
        data = await request.body()
        key, _ = state.store(request.query_params.get("name", what), data)
        probe = {"vocab": key} if what == "gguf" else {"tokenizer_config": key}
        kind, found = await asyncio.to_thread(state.worker.call, "facts", probe, state.uploads,
                                              limit=LIMITS["facts"])
        if kind != "ok":
            state.uploads.pop(key, None)
            return answer_of(kind, found)
        return JSONResponse({"id": key, "facts": found})

    async def start_verify(request: Request) -> Response:
        body = await read_json(request)
        if isinstance(body, JSONResponse):
            return body
        cases = body.get("cases", 50)
        total = cases if isinstance(cases, int) and not isinstance(cases, bool) else 0
        key = state.new_id()
        job = state.jobs[key] = VerifyJob(total=total)

        def progress(done: int) -> None:
            job.done = done

        def run() -> None:
            job.answer = state.verifier.call(
                "verify", body, dict(state.uploads), progress=progress,
                limit=VERIFY_BASE + VERIFY_PER_CASE * max(total, 1))

        threading.Thread(target=run, name=f"verify-{key}", daemon=True).start()
        return JSONResponse({"job": key, "total": total})

    async def verify_status(request: Request) -> Response:
        job = state.jobs.get(request.path_params["job"])
        if job is None:
            return error("error: no such verify run", status=404)
        data: dict[str, Any] = {"done": job.done, "total": job.total,
                                "finished": job.answer is not None}
        if job.answer is not None:
            kind, found = job.answer
            data["result" if kind == "ok" else "error"] = found
        return JSONResponse(data)

    async def failed(request: Request, exc: Exception) -> Response:
        return error(f"error: the server failed on this request ({type(exc).__name__}); "
                     "please report it", status=500)

    routes = [
        Route("/", index),
        Route("/api/choices", choices),
        Route("/api/convert", convert, methods=["POST"]),
        Route("/api/render", render, methods=["POST"]),
        Route("/api/download", download, methods=["POST"]),
        Route("/api/conversation", conversation, methods=["POST"]),
        Route("/api/upload", upload, methods=["POST"]),
        Route("/api/verify", start_verify, methods=["POST"]),
        Route("/api/verify/{job}", verify_status),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if warm:  # the first request need not wait for the engines to start
            threading.Thread(target=state.worker.warm, daemon=True).start()
        try:
            yield
        finally:
            state.close()

    app = Starlette(routes=routes, exception_handlers={Exception: failed}, lifespan=lifespan)
    app.add_middleware(BodyLimit)
    app.state.playground = state
    return app

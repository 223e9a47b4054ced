"""The `serve` command: the playground in the browser (`gotmpl2jinja.serve`).

Registered on the group in `cli.main`. Imports inside the command are deferred: the web stack
(Starlette, uvicorn) comes with the `serve` extra, and a missing extra is one line, exit 2.

May depend on: cli.common, serve.
"""

from __future__ import annotations

import importlib.util
import socket
import sys

import click

from gotmpl2jinja.cli.common import (
    friendly_errors,
    store_dir,
    store_option,
    timeout_option,
)

#: The hosts that reach only this machine.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
#: The sentence a missing extra gets.
NEEDS_EXTRA = ("error: serve needs the web stack of the serve extra: "
               "pip install 'gotmpl2jinja[serve]'")


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="The port to listen on (0: any free one; the address is printed).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on. Another than this machine's own lets others "
              "run templates here: a warning says so.")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser.")
@store_option("The installed models the page offers (read-only).")
@timeout_option
@friendly_errors
def serve(port: int, host: str, open_browser: bool, store: str | None, timeout: float) -> None:
    """A local playground in the browser: translate a template, render conversations on Go and
    every engine side by side with the differences marked, verify, download.

    Needs the serve extra (pip install 'gotmpl2jinja[serve]'). It listens on 127.0.0.1 only,
    unless --host says otherwise; Ctrl-C stops it."""
    if any(importlib.util.find_spec(name) is None for name in ("starlette", "uvicorn")):
        click.echo(NEEDS_EXTRA, err=True)
        sys.exit(2)
    import uvicorn  # deferred: the serve extra

    from gotmpl2jinja.serve.app import create_app  # deferred: imports Starlette

    if host not in LOCAL_HOSTS:
        click.echo(f"warning: serving on {host}: anyone who can reach this address can run "
                   "templates on this machine through the playground (it has no login)",
                   err=True)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # before the address is printed: a client may connect at once
    except OSError as exc:
        sock.close()
        click.echo(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(1)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/"
    app = create_app(models_dir=store_dir(store), timeout=timeout)
    click.echo(f"gotmpl2jinja playground on {url} (Ctrl-C stops it)", err=True)
    if open_browser:
        import webbrowser  # deferred: only with --open

        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_keep_alive=5)
    uvicorn.Server(config).run(sockets=[sock])

"""The `engines` command group: list the Jinja engines and their state, and `engines install`.

Registered on the group in `cli.main`. Imports inside the commands are deferred for start-up
time: a command imports its stage when it runs.

May depend on: cli.common (and, when a command runs, engines.registry,
ollama.reference.binary, ollama.reference.driver).
"""

from __future__ import annotations

import sys

import click

from gotmpl2jinja.cli.common import friendly_errors


@click.group(invoke_without_command=True)
@click.pass_context
def engines(ctx: click.Context) -> None:
    """List the Jinja engines and whether each is available here (and why not).

    `gotmpl2jinja engines install [NAMES]` sets up those that need it (e.g. @huggingface/jinja
    through npm into the per-user cache) and builds the Go reference renderer; verification
    never installs anything by itself.
    """
    if ctx.invoked_subcommand is not None:
        return
    from gotmpl2jinja.engines.registry import ENGINES, TOOLS
    from gotmpl2jinja.ollama.reference.binary import cached_binary, packaged_binary

    width = max(len(name) for name in [*ENGINES, *TOOLS])
    for name, spec in [*ENGINES.items(), *TOOLS.items()]:
        reason = spec.unavailable()
        state = "available" if reason is None else f"unavailable: {reason}"
        click.echo(f"{name:<{width}}  {state}  — {spec.description}")
    packaged, built = packaged_binary(), cached_binary()
    state = (f"packaged ({packaged})" if packaged is not None else
             f"built ({built})" if built.is_file() else
             "not built yet (built on first use, or by `gotmpl2jinja engines install`)")
    click.echo(f"Go reference renderer: {state}")


@engines.command("install")
@click.argument("names", nargs=-1)
@friendly_errors
def engines_install(names: tuple[str, ...]) -> None:
    """Set up the engines NAMES (default: every one that has a setup step) and build the Go
    reference renderer; progress on stderr. Exit 1 if a setup step failed (npm missing, no
    network …: the message says) or an engine named is still unavailable."""
    from gotmpl2jinja.engines.registry import ENGINES, TOOLS, setup_engines, unknown_engine
    from gotmpl2jinja.ollama.reference.driver import ensure_binary, stderr_note

    unknown = [n for n in names if n not in ENGINES and n not in TOOLS]
    if unknown:
        raise unknown_engine(unknown)
    ensure_binary(progress=stderr_note)
    states, failed = setup_engines(list(names) or None, stderr_note)
    for name, why in states.items():
        click.echo(f"{name}: {'available' if why is None else 'unavailable: ' + why}")
    if failed or any(states[name] is not None for name in names):
        sys.exit(1)

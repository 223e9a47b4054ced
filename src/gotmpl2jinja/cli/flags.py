"""`gotmpl2jinja flags`: the table of which templates honour a host's add_generation_prompt
(docs/flags.md is its output).

Imports of the batch stage are deferred into the command, for start-up time.

May depend on: cli.common (and, when the command runs, batch, errors, ollama.source).
"""

from __future__ import annotations

from pathlib import Path

import click

from gotmpl2jinja.cli.common import check_output_target, friendly_errors, write_text_output


@click.command()
@click.argument("folders", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the table to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite an existing -o file.")
@friendly_errors
def flags(folders: tuple[str, ...], output: str | None, force: bool) -> None:
    """Per template under FOLDERS (folders or files), whether its translation honours
    add_generation_prompt, why not, and what the flag changes in Go's own rendering."""
    from gotmpl2jinja.batch import flags as flagging

    chosen = list(folders)
    missing = [f for f in chosen if not Path(f).exists()]
    if missing:
        from gotmpl2jinja.errors import Gotmpl2JinjaError
        from gotmpl2jinja.ollama.source import no_such_file

        raise Gotmpl2JinjaError(no_such_file(missing[0]))
    target = check_output_target(output, force) if output else None
    rows = flagging.table(chosen)
    command = " ".join(["gotmpl2jinja flags", *chosen, *(["-o", output] if output else [])])
    text = flagging.markdown(rows, command)
    if target is not None:
        write_text_output(text, target, force)
        click.echo(f"{flagging.summary(rows)} Wrote {output}.", err=True)
    else:
        click.echo(text, nl=False)

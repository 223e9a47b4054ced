"""The command line: `gotmpl2jinja parse|render|convert|verify|migrate|compare|sweep|engines|flags`.

Each command is thin: it reads inputs, calls one stage's API and prints. Every error this
package raises on purpose is printed as `FILE:LINE:COL: message` (or a plain sentence) and the
command exits 1; nothing here prints a Python traceback for bad input.

Exit codes: 0 success; 1 invalid input / translation impossible / divergence found;
2 usage error (click's own).

The group is defined here; its commands live in modules by theme (`cli.translate`,
`cli.check`, `cli.setup`, `cli.playground`) and are added to it below, so that no command
module imports this one. Imports inside the commands are deferred for start-up time.

May depend on: cli.check, cli.flags, cli.playground, cli.setup, cli.translate (and through them
cli.common), lifetime.
"""

from __future__ import annotations

import click

from gotmpl2jinja.cli.check import compare, coverage, migrate, sweep, verify
from gotmpl2jinja.cli.flags import flags
from gotmpl2jinja.cli.playground import serve
from gotmpl2jinja.cli.setup import engines
from gotmpl2jinja.cli.translate import convert, modelfile, parse, render, runtime

#: Commands that make the project's own tables (docs/coverage.md, docs/flags.md, the sweeps):
#: `--help` lists them apart, after the commands a user converts and checks templates with.
DEVELOPER_COMMANDS = ("coverage", "flags", "sweep")


class _Commands(click.Group):
    """The group, listing each command's first sentence whole in `--help` (click would cut it
    at the terminal's width with "..."), the developers' commands in a section of their own."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections: dict[bool, list[tuple[str, str]]] = {False: [], True: []}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                sections[name in DEVELOPER_COMMANDS].append(
                    (name, command.get_short_help_str(limit=10_000)))
        for developer, title in ((False, "Commands"),
                                 (True, "Developer commands (the project's own tables)")):
            if sections[developer]:
                with formatter.section(title):
                    formatter.write_dl(sections[developer])


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gotmpl2jinja")
def cli() -> None:
    """Translate Ollama's Go chat templates into equivalent Jinja chat templates."""


# in the order the commands were defined (`--help` lists them by name)
for _command in (parse, compare, render, modelfile, verify, convert, migrate, runtime, sweep,
                 coverage, engines, flags, serve):
    cli.add_command(_command)


def main() -> None:
    """The command, and its exit: once it has ended (or a first Ctrl-C ended it), a second
    interrupt does not break off the cleanup that stops the engines (no traceback)."""
    import sys

    from gotmpl2jinja.lifetime import exiting, interrupt_once

    interrupt_once()
    try:
        try:
            cli(prog_name="gotmpl2jinja")
        finally:
            exiting()
    except KeyboardInterrupt:  # a second interrupt while click was reporting the first
        sys.exit(130)


if __name__ == "__main__":
    main()

"""The command line: `gotmpl2jinja parse|render|convert|verify|migrate|compare`.

Each command is thin: it reads inputs, calls one stage's API and prints. Every error this
package raises on purpose is printed as `FILE:LINE:COL: message` (or a plain sentence) and the
command exits 1; nothing here prints a Python traceback for bad input.

Exit codes: 0 success; 1 invalid input / translation impossible / divergence found;
2 usage error (click's own).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gotmpl2jinja.errors import Gotmpl2JinjaError

F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(func: F) -> F:
    """Turn the package's own errors (and unreadable files) into one line on stderr, exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Gotmpl2JinjaError as exc:
            click.echo(str(exc), err=True)
            sys.exit(1)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"{where}{exc.strerror or exc}", err=True)
            sys.exit(1)
        except RecursionError:
            click.echo("error: the input nests too deeply to process (Python's recursion limit)",
                       err=True)
            sys.exit(1)
        except UnicodeDecodeError as exc:
            click.echo(f"error: the input is not UTF-8 text ({exc.reason} at byte {exc.start})",
                       err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def read_source(path: str) -> tuple[str, str]:
    """Read a template file (or `-` for standard input); returns (display name, text)."""
    if path == "-":
        return "<stdin>", sys.stdin.read()
    data = Path(path).read_bytes()
    return path, data.decode("utf-8")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gotmpl2jinja")
def cli() -> None:
    """Translate Ollama's Go chat templates into equivalent Jinja chat templates."""


@cli.command()
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, help="Print the AST as JSON.")
@friendly_errors
def parse(file: str, as_json: bool) -> None:
    """Parse a Go template and print its AST (and Ollama's parse-time facts)."""
    from gotmpl2jinja.parser import parse as parse_template
    from gotmpl2jinja.show import ast_to_json, ast_to_text

    name, text = read_source(file)
    template = parse_template(text, name=name)
    click.echo(ast_to_json(template) if as_json else ast_to_text(template))


@cli.command()
@click.argument("ollama_template", required=False)
@click.argument("reference_jinja", required=False)
@click.option("--corpus", type=click.Path(exists=True, file_okay=False),
              help="Compare every entry of a paired corpus folder instead.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="With --corpus: write the Markdown table here (default: stdout).")
@click.option("--cases", default=20, show_default=True, help="Generated conversations.")
@click.option("--seed", default=0, show_default=True, help="Seed of the generated ones.")
@click.option("--bos", default=None, help="BOS token text passed to the Jinja side.")
@click.option("--eos", default=None, help="EOS token text passed to the Jinja side.")
@click.option("--tokenizer-config", type=click.Path(exists=True, dir_okay=False),
              help="Take bos_token/eos_token from this tokenizer_config.json.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@friendly_errors
def compare(
    ollama_template: str | None, reference_jinja: str | None, corpus: str | None,
    output: str | None, cases: int, seed: int, bos: str | None, eos: str | None,
    tokenizer_config: str | None, as_json: bool,
) -> None:
    """Show where an Ollama template drifts from the model's own Jinja template (exit 1 if so)."""
    import json

    from gotmpl2jinja import compare as drift

    if corpus is not None:
        if ollama_template or reference_jinja:
            raise click.UsageError("give either two templates or --corpus, not both")
        results = drift.compare_corpus(Path(corpus), cases, seed, drift.stderr_progress)
        text = (json.dumps(drift.corpus_json(results), ensure_ascii=False, indent=1) + "\n"
                if as_json else drift.markdown_table(results, cases, seed))
        if output:
            Path(output).write_text(text, encoding="utf-8")
        else:
            click.echo(text, nl=False)
        return
    if not ollama_template or not reference_jinja:
        raise click.UsageError("give OLLAMA_TEMPLATE and REFERENCE_JINJA, or --corpus DIR")
    config_bos, config_eos = ("", "")
    if tokenizer_config:
        config_bos, config_eos = drift.tokens_from_tokenizer_config(Path(tokenizer_config))
    pair = drift.Pair(
        read_source(ollama_template)[1], read_source(reference_jinja)[1],
        bos=config_bos if bos is None else bos, eos=config_eos if eos is None else eos,
    )
    comparison = drift.compare(pair, cases=cases, seed=seed)
    if as_json:
        click.echo(json.dumps(comparison.to_json(), ensure_ascii=False, indent=1))
    else:
        click.echo(drift.text_report(comparison))
    if not comparison.agree:
        sys.exit(1)


@cli.command()
@click.argument("template")
@click.argument("conversation")
@click.option("--ollama", is_flag=True, default=True,
              help="Render as Ollama does (Go reference renderer; the default and only mode).")
@click.option("--now", default=None, help="Pinned clock for currentDate, RFC 3339.")
@click.option("--go-struct-function", is_flag=True,
              help="Print {{ .Function }} of a tool as Go structs, like Ollama v0.33.")
@click.option("--timeout", type=float, default=None, help="Seconds before giving up.")
@friendly_errors
def render(template: str, conversation: str, ollama: bool, now: str | None,
           go_struct_function: bool, timeout: float | None) -> None:
    """Print exactly what Ollama renders for TEMPLATE and CONVERSATION.json (no added newline)."""
    from gotmpl2jinja.reference import ReferenceRenderer, load_conversation

    _, text = read_source(template)
    with ReferenceRenderer() as renderer:
        if timeout is not None:
            renderer.timeout = timeout
        output = renderer.render(text, load_conversation(conversation), now=now,
                                 function_json=not go_struct_function)
    click.echo(output.encode("utf-8", "surrogateescape"), nl=False)  # Go's exact bytes


@cli.command()
@click.argument("source")
@click.option("--store", "from_store", is_flag=True,
              help="SOURCE is an installed model name (read from $OLLAMA_MODELS).")
@click.option("--json", "as_json", is_flag=True, help="Print every field as JSON.")
@friendly_errors
def modelfile(source: str, from_store: bool, as_json: bool) -> None:
    """Print the TEMPLATE Ollama would use from a Modelfile (or an installed model)."""
    import json

    from gotmpl2jinja.modelfile import parse_modelfile
    from gotmpl2jinja.store import load_model

    fields: dict[str, Any]  # the JSON printed by --json
    if from_store:
        model = load_model(source)
        fields = {"template": model.template, "system": model.system,
                  "messages": model.messages, "parameters": model.params, "warnings": []}
    else:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
        parsed = parse_modelfile(data, name="<stdin>" if source == "-" else source)
        fields = {"template": parsed.template, "system": parsed.system,
                  "messages": parsed.messages, "parameters": parsed.parameters,
                  "warnings": parsed.warnings}
    for warning in fields["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(fields, indent=2, ensure_ascii=False))
    elif fields["template"] is not None:
        click.echo(fields["template"], nl=False)


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("--cases", default=200, show_default=True, type=click.IntRange(min=0),
              help="Random conversations per template (hypothesis).")
@click.option("--exhaustive", "depth", type=click.IntRange(min=0), default=None,
              help="Also every message-shape sequence up to DEPTH messages.")
@click.option("--engines", default=None, help="Comma-separated engines (default: all).")
@click.option("--jinja", "jinja_file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Compare with this Jinja file instead of the translation (one INPUT).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@friendly_errors
def verify(inputs: tuple[str, ...], cases: int, depth: int | None, engines: str | None,
           jinja_file: str | None, as_json: bool, seed: int) -> None:
    """Check that Jinja renders byte-for-byte what Ollama renders (exit 0 only if it does).

    Each INPUT is a Go template, a Modelfile (verified with its SYSTEM/MESSAGE rule, as
    Ollama's server applies it) or a directory (its templates and Modelfiles).
    """
    import json

    from gotmpl2jinja import verify as harness
    from gotmpl2jinja.strategies import exhaustive_count

    paths = harness.template_inputs(inputs)
    if jinja_file is not None and len(paths) != 1:
        raise click.UsageError("--jinja takes exactly one INPUT (a template or a Modelfile)")
    engine_names = harness.parse_engine_list(engines)
    verdicts = []
    with _verify_progress() as progress:
        for path in paths:
            total = cases + (exhaustive_count(depth) if depth is not None else 0)
            task = progress.add_task(path.name, total=total) if progress else None
            verdict = harness.verify_file(
                path, jinja_path=Path(jinja_file) if jinja_file else None, cases=cases,
                exhaustive=depth, engines=engine_names, seed=seed,
                progress=_task_progress(progress, task) if progress else None,
            )
            if progress:
                progress.remove_task(task)
            verdicts.append(verdict)
            for warning in verdict.warnings:
                click.echo(f"warning: {warning}", err=True)
            if not as_json:
                if verdict.result is None:
                    click.echo(f"{path.stem}\t{path}\terror: {verdict.error}")
                else:
                    click.echo(harness.summary_line(verdict.result, str(path)))
                    for divergence in verdict.result.divergences:
                        click.echo(harness.format_divergence(divergence))
    failed = [v for v in verdicts if not v.ok]
    if as_json:
        click.echo(json.dumps([
            {"path": v.path, "kind": v.kind, "error": v.error, "warnings": v.warnings,
             **(v.result.to_json() if v.result else {})}
            for v in verdicts], ensure_ascii=False, indent=2))
    else:
        click.echo(f"{len(verdicts)} template(s): {len(verdicts) - len(failed)} equivalent, "
                   f"{len(failed)} not")
    if failed:
        sys.exit(1)


def _task_progress(progress: Any, task: Any) -> Callable[[int], None]:
    """verify_file's progress callback for one task of the rich display (a named function:
    mypy cannot type a lambda with a default argument)."""
    def update(done: int) -> None:
        progress.update(task, completed=done)
    return update


def _verify_progress() -> Any:
    """A rich progress display on stderr when it is a terminal (nothing otherwise)."""
    import contextlib

    if not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    console=Console(stderr=True), transient=True)


@cli.command()
@click.argument("input_spec", metavar="INPUT")
@click.option("-o", "--output", "output", default=None,
              help="Write here (a file, or a directory for jinja/hf/gguf); default stdout.")
@click.option("--format", "fmt", type=click.Choice(["jinja", "hf", "lmstudio", "gguf"]),
              default="jinja", show_default=True,
              help="jinja: chat_template.jinja; hf: chat_template in tokenizer_config.json; "
              "lmstudio: an LM Studio model config; gguf: a copy of --gguf with the template set.")
@click.option("--gguf", "gguf_source", type=click.Path(exists=True, dir_okay=False),
              default=None, help="The GGUF file to copy (with --format gguf).")
@click.option("--models", "models_dir", type=click.Path(file_okay=False), default=None,
              help="Ollama's models directory for ollama:NAME (default $OLLAMA_MODELS or "
              "~/.ollama/models).")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("--no-check", "no_check", is_flag=True,
              help="Skip checking the Jinja against Ollama's Go rendering before writing it.")
@friendly_errors
def convert(input_spec: str, output: str | None, fmt: str, gguf_source: str | None,
            models_dir: str | None, force: bool, no_check: bool) -> None:
    """Translate INPUT into equivalent Jinja.

    INPUT is a Go template file, a Modelfile (its SYSTEM and MESSAGE lines become a preamble,
    as Ollama's server applies them), `-` for standard input, or an installed Ollama model
    `ollama:NAME`. Without -o the Jinja goes to stdout (jinja format only); files are written
    atomically and never overwritten without --force. Warnings go to stderr.

    The Jinja is checked against Ollama's own rendering (Go's text/template) on generated
    conversations and every engine available before anything is printed or written; a
    divergence is an error (exit 1) with its minimal conversation. --no-check skips that.
    """
    from gotmpl2jinja.errors import Gotmpl2JinjaError
    from gotmpl2jinja.formats import write_output
    from gotmpl2jinja.inputs import convert_source, load_source
    from gotmpl2jinja.legacy import collect_warnings

    source = load_source(input_spec, models_dir=Path(models_dir) if models_dir else None)
    for warning in source.warnings:
        click.echo(f"warning: {warning}", err=True)
    try:
        jinja, problems = collect_warnings(lambda: convert_source(source))
    except Gotmpl2JinjaError as exc:
        if exc.line is not None:  # a Modelfile's TEMPLATE position → a position in the file
            exc.line, exc.col = source.locate(exc.line, exc.col)
        exc.name = source.name
        raise
    for problem in problems:  # where Ollama itself fails; the Jinja raises the same way
        click.echo(f"warning: {problem}", err=True)
    if no_check:
        click.echo("warning: not checked against Ollama's rendering (--no-check)", err=True)
    else:
        from gotmpl2jinja.errors import ReferenceRendererError
        from gotmpl2jinja.inputs import go_renderer
        from gotmpl2jinja.verify import check_line, check_translation

        try:
            checked = check_translation(source.template, jinja, name=source.name,
                                        render=go_renderer(source))
        except ReferenceRendererError as exc:
            raise ReferenceRendererError(f"cannot check the translation against Ollama's "
                                         f"rendering: {exc} (--no-check skips the check)"
                                         ) from None
        click.echo(check_line(checked), err=True)
    if output is None:
        if fmt != "jinja":
            raise click.UsageError(f"--format {fmt} writes a file: give it -o PATH")
        click.echo(jinja, nl=False)  # the exact bytes the -o file would hold
        return
    if fmt == "gguf" and gguf_source is None:
        raise click.UsageError("--format gguf needs --gguf MODEL.gguf (the file to copy)")
    if output.endswith(("/", os.sep)) and not Path(output).is_dir():
        raise click.UsageError(f"-o {output}: no such directory (create it, or name a file)")
    written = write_output(jinja, fmt, Path(output), force=force, stop=source.stop,
                           gguf_source=Path(gguf_source) if gguf_source else None)
    click.echo(f"wrote {written}", err=True)


@cli.command()
@click.argument("src", type=click.Path(exists=True))
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["jinja", "hf", "lmstudio"]),
              default="jinja", show_default=True, help="What to write for each verified item.")
@click.option("--ollama-store", "store", is_flag=False, flag_value="", default=None,
              metavar="[DIR]", help="Also every installed model (DIR: the models directory; "
              "default $OLLAMA_MODELS or ~/.ollama/models).")
@click.option("--cases", default=30, show_default=True, type=click.IntRange(min=1),
              help="Random conversations each conversion is verified on.")
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Write the Markdown report here (its .json twin beside it); "
              "default OUT/report.md.")
@click.option("--force", is_flag=True, help="Overwrite existing outputs and reports.")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON report on stdout.")
@friendly_errors
def migrate(src: str, out: str, fmt: str, store: str | None, cases: int, seed: int,
            report: str | None, force: bool, as_json: bool) -> None:
    """Convert and verify every template and Modelfile under SRC into OUT, with a report.

    Exit 0 only if every item was converted and verified; 1 if any item was not (the report
    says why) or the run could not start (nothing is written then); 2 usage error.
    """
    import json

    from gotmpl2jinja import migrate as batch

    with batch.rich_progress() as progress:
        result = batch.migrate(src, out, fmt=fmt, cases=cases, seed=seed, force=force,
                               store=store, report=report, progress=progress)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=1))
    else:
        click.echo(batch.summary(result))
        click.echo(f"report: {batch.report_paths(Path(out), Path(report) if report else None)[0]}")
    if not result.ok:
        sys.exit(1)


@cli.command()
@click.argument("names", nargs=-1)
@click.option("--list", "as_list", is_flag=True, help="List the macros with their contracts.")
@friendly_errors
def runtime(names: tuple[str, ...], as_list: bool) -> None:
    """Print the Jinja source of runtime macros NAMES (all public ones when none are given)."""
    from gotmpl2jinja.runtime import MACROS, macro_source, public_macros

    chosen = list(names) or public_macros()
    if as_list:
        for name in chosen:
            macro = MACROS.get(name)
            if macro is None:
                macro_source([name])  # raises the friendly unknown-macro error
                continue
            click.echo(f"{name}({', '.join(macro.params)})\n    {macro.doc}")
        return
    click.echo(macro_source(chosen))


@cli.command()
@click.argument("folders", nargs=-1)
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the table (or JSON) to this file instead of standard output.")
@click.option("--cases", type=int, default=2000, show_default=True,
              help="Random conversations per template (after the exhaustive pass).")
@click.option("--exhaustive", type=int, default=1, show_default=True,
              help="Depth of the bounded-exhaustive pass (messages per conversation).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--engines", default=None, help="Comma-separated engines (default: all).")
@click.option("--json", "as_json", is_flag=True, help="JSON rows instead of the Markdown table.")
@friendly_errors
def sweep(folders: tuple[str, ...], output: str | None, cases: int, exhaustive: int,
          seed: int, engines: str | None, as_json: bool) -> None:
    """Translate and verify every Go template under FOLDERS (default: fixtures/corpus and
    fixtures/seeds): one row each, progress on stderr."""
    import json

    from gotmpl2jinja import sweep as sweeping
    from gotmpl2jinja.verify import parse_engine_list

    chosen = list(folders) or ["fixtures/corpus", "fixtures/seeds"]
    rows = sweeping.sweep(
        chosen, cases=cases, exhaustive=exhaustive, seed=seed,
        engines=parse_engine_list(engines),
        progress=lambda n, total, row: click.echo(sweeping.progress_line(n, total, row),
                                                  err=True),
    )
    command = " ".join(["gotmpl2jinja sweep", *chosen, *(["-o", output] if output else []),
                        f"--cases {cases}", f"--exhaustive {exhaustive}", f"--seed {seed}",
                        *([f"--engines {engines}"] if engines else [])])
    if as_json:
        text = json.dumps(sweeping.to_json(rows), ensure_ascii=False, indent=1) + "\n"
    else:
        text = sweeping.to_markdown(rows, command=command, cases=cases, exhaustive=exhaustive,
                                    seed=seed)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"{sweeping.summary_sentence(rows)} Wrote {output}.", err=True)
    else:
        click.echo(text, nl=False)


def main() -> None:
    cli(prog_name="gotmpl2jinja")


if __name__ == "__main__":
    main()

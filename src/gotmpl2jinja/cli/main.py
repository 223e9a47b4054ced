"""The command line: `gotmpl2jinja parse|render|convert|verify|migrate|compare|sweep|engines`.

Each command is thin: it reads inputs, calls one stage's API and prints. Every error this
package raises on purpose is printed as `FILE:LINE:COL: message` (or a plain sentence) and the
command exits 1; nothing here prints a Python traceback for bad input.

Exit codes: 0 success; 1 invalid input / translation impossible / divergence found;
2 usage error (click's own).
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gotmpl2jinja.errors import Gotmpl2JinjaError

if TYPE_CHECKING:
    from gotmpl2jinja.engines.registry import EngineSelection

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
    """Read a template file (or `-` for standard input) as UTF-8, a leading BOM dropped as
    `convert` and `verify` drop it; returns (display name, text)."""
    from gotmpl2jinja.batch.sources import decode_template

    name = "<stdin>" if path == "-" else path
    data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    return name, decode_template(data, name)


#: The template shipped inside the package, so that `verify --example` runs anywhere.
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "qwen-style.gotmpl"


def _positive_seconds(ctx: click.Context, param: click.Parameter, value: float | None
                      ) -> float | None:
    """--timeout: above 0, finite, at most a day (0 or less would mean waiting for ever)."""
    from gotmpl2jinja.ollama.reference.driver import MAX_TIMEOUT

    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise click.BadParameter(f"{value:g} is not a number of seconds above 0 and at most "
                                 f"{MAX_TIMEOUT:g}")
    return value


def timeout_option(func: F) -> F:
    """`--timeout SECONDS`: how long one render may take, on Go and on each engine."""
    return click.option(
        "--timeout", type=float, default=5.0, show_default=True, callback=_positive_seconds,
        help="Seconds one render may take, on Go and on each Jinja engine (a template that "
        "runs longer is reported, not waited for).")(func)


def engine_options(func: F) -> F:
    """`--engines a,b` and `--require-all-engines`, shared by the commands that verify."""
    func = click.option(
        "--require-all-engines", is_flag=True,
        help="Fail (exit 1) when an engine is unavailable instead of skipping it.")(func)
    return click.option(
        "--engines", default=None,
        help="Comma-separated engines (default: every available one; see `gotmpl2jinja "
        "engines`).")(func)


def choose_engines(engines: str | None, require_all: bool, timeout: float | None,
                   quiet: bool = False) -> EngineSelection:
    """The engines a run uses (printed on stderr with those skipped and why, unless `quiet`:
    with --json the JSON says it); sets the render timeout of the Go renderer and engines."""
    from gotmpl2jinja.engines.registry import select_engines, set_render_timeout
    from gotmpl2jinja.ollama.reference import shared_renderer
    from gotmpl2jinja.verify.harness import parse_engine_list

    selection = select_engines(parse_engine_list(engines), require_all=require_all)
    if not quiet:
        click.echo(selection.describe(), err=True)
    if timeout is not None:
        set_render_timeout(timeout)
        shared_renderer().timeout = timeout
    return selection


def check_output_target(output: str, force: bool) -> Path:
    """Before any work: `-o FILE` must be a file we may write — not an existing one without
    --force, not a directory, in a directory that exists and is writable. The exit codes are
    `convert`'s: 2 for a directory given as a file, 1 for the rest."""
    from gotmpl2jinja.formats.writers import OutputError

    path = Path(output)
    if path.is_dir() or output.endswith(("/", os.sep)):
        raise click.UsageError(f"-o {output}: give a file name, not a directory")
    if path.exists() and not force:
        raise OutputError(f"{output} already exists (use --force to overwrite it)")
    parent = path.parent
    if not parent.is_dir():
        raise OutputError(f"cannot write {output}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputError(f"cannot write {output}: not writable")
    return path


def write_text_output(text: str, path: Path, force: bool) -> None:
    """Write a table or report atomically (a temp file beside it, then a rename)."""
    from gotmpl2jinja.formats.writers import write_output

    write_output(text, "jinja", path, force=force)


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
    from gotmpl2jinja.batch.sources import char_column
    from gotmpl2jinja.formats.show import ast_to_json, ast_to_text
    from gotmpl2jinja.parse.parser import parse as parse_template

    name, text = read_source(file)
    try:
        template = parse_template(text, name=name)
    except Gotmpl2JinjaError as exc:  # columns in characters, as every other message counts
        if exc.line is not None:
            exc.col = char_column(text, exc.line, exc.col)
        raise
    click.echo(ast_to_json(template) if as_json else ast_to_text(template))


@cli.command()
@click.argument("ollama_template", required=False)
@click.argument("reference_jinja", required=False)
@click.option("--corpus", type=click.Path(exists=True, file_okay=False),
              help="Compare every entry of a paired corpus folder instead.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="With --corpus: write the Markdown table here (default: stdout).")
@click.option("--force", is_flag=True, help="Overwrite an existing -o file.")
@click.option("--cases", default=20, show_default=True, type=click.IntRange(min=0),
              help="Generated conversations (besides the fixed catalogue).")
@click.option("--seed", default=0, show_default=True, help="Seed of the generated ones.")
@click.option("--bos", default=None, help="BOS token text passed to the Jinja side.")
@click.option("--eos", default=None, help="EOS token text passed to the Jinja side.")
@click.option("--tokenizer-config", type=click.Path(exists=True, dir_okay=False),
              help="Take bos_token/eos_token from this tokenizer_config.json.")
@click.option("--engines", default=None,
              help="Render the model's Jinja on these engines, one report each (default: "
              "jinja2, as transformers renders it; not with --corpus).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@friendly_errors
def compare(
    ollama_template: str | None, reference_jinja: str | None, corpus: str | None,
    output: str | None, force: bool, cases: int, seed: int, bos: str | None, eos: str | None,
    tokenizer_config: str | None, engines: str | None, as_json: bool,
) -> None:
    """Show where an Ollama template drifts from the model's own Jinja template (exit 1 if so).

    The model's Jinja is rendered as transformers renders it (engine jinja2) unless --engines
    names others; each engine gets its report (with --json, a list when several)."""
    import json

    from gotmpl2jinja.batch import compare as drift

    if corpus is not None:
        if ollama_template or reference_jinja:
            raise click.UsageError("give either two templates or --corpus, not both")
        if engines is not None:
            raise click.UsageError("--engines is for two templates; --corpus renders on jinja2")
        target = check_output_target(output, force) if output else None
        results = drift.compare_corpus(Path(corpus), cases, seed, drift.stderr_progress)
        text = (json.dumps(drift.corpus_json(results), ensure_ascii=False, indent=1) + "\n"
                if as_json else drift.markdown_table(results, cases, seed))
        if target is not None:
            write_text_output(text, target, force)
            click.echo(f"wrote {target}", err=True)
        else:
            click.echo(text, nl=False)
        return
    if output:
        raise click.UsageError("-o is for --corpus; the comparison of two templates prints")
    if not ollama_template or not reference_jinja:
        raise click.UsageError("give OLLAMA_TEMPLATE and REFERENCE_JINJA, or --corpus DIR")
    config_bos, config_eos = ("", "")
    if tokenizer_config:
        config_bos, config_eos = drift.tokens_from_tokenizer_config(Path(tokenizer_config))
    names = [drift.JINJA_ENGINE]
    if engines is not None:
        from gotmpl2jinja.engines.registry import select_engines
        from gotmpl2jinja.verify.harness import parse_engine_list

        names = select_engines(parse_engine_list(engines)).used
    go_text, jinja_text = read_source(ollama_template)[1], read_source(reference_jinja)[1]
    comparisons = [
        drift.compare(drift.Pair(go_text, jinja_text, bos=config_bos if bos is None else bos,
                                 eos=config_eos if eos is None else eos, engine=name),
                      cases=cases, seed=seed)
        for name in names]
    if as_json:
        data = [c.to_json() for c in comparisons]
        click.echo(json.dumps(data[0] if len(data) == 1 else data, ensure_ascii=False, indent=1))
    else:
        click.echo("\n\n".join(drift.text_report(c) for c in comparisons))
    if not all(c.agree for c in comparisons):
        sys.exit(1)


@cli.command()
@click.argument("template")
@click.argument("conversation")
@click.option("--now", default=None,
              help="Pin the clock for currentDate, RFC 3339 (default: now, local time zone, "
                   "as Ollama's server).")
@click.option("--go-struct-function", is_flag=True,
              help="Print {{ .Function }} of a tool as Go structs, like Ollama v0.33.")
@click.option("--template-only", is_flag=True,
              help="Template.Execute alone: skip the server's steps (think default, "
                   "capability refusals, image tags).")
@click.option("--timeout", type=float, default=5.0, show_default=True,
              callback=_positive_seconds, help="Seconds the render may take before giving up.")
@friendly_errors
def render(template: str, conversation: str, now: str | None,
           go_struct_function: bool, template_only: bool, timeout: float) -> None:
    """Print exactly what Ollama renders for TEMPLATE and CONVERSATION.json (no added newline):
    its server's steps for the template (an absent think is true on a thinking template; a
    request it refuses for a capability is an error), then Execute."""
    import datetime as dt

    from gotmpl2jinja.ollama.reference import ReferenceRenderer, read_conversation_text

    if template == "-" and conversation == "-":
        raise click.UsageError("TEMPLATE and CONVERSATION cannot both be standard input")
    _, text = read_source(template)
    request = read_conversation_text(conversation)  # the JSON text itself: -0 and escapes kept
    clock = now or dt.datetime.now().astimezone().isoformat()
    with ReferenceRenderer(timeout) as renderer:
        output = renderer.render(text, request, now=clock, function_json=not go_struct_function,
                                 server=not template_only)
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

    from gotmpl2jinja.ollama.modelfile import parse_modelfile
    from gotmpl2jinja.ollama.store import load_model

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


def as_option(func: F) -> F:
    """`--as template|modelfile`: how to read an input that could be either."""
    return click.option(
        "--as", "kind", type=click.Choice(["auto", "template", "modelfile"]), default="auto",
        show_default=True, help="Read INPUT as a Go template or a Modelfile (auto: by its "
        "name, else by its first line).")(func)


@cli.command()
@click.argument("inputs", nargs=-1)
@click.option("--example", is_flag=True,
              help="Also verify the example template shipped with gotmpl2jinja.")
@click.option("--cases", default=200, show_default=True, type=click.IntRange(min=0),
              help="Random conversations per template (hypothesis).")
@click.option("--exhaustive", "depth", type=click.IntRange(min=0), default=None,
              help="Also every message-shape sequence up to DEPTH messages.")
@engine_options
@timeout_option
@click.option("--jinja", "jinja_file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Compare with this Jinja file instead of the translation (one INPUT).")
@as_option
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@friendly_errors
def verify(inputs: tuple[str, ...], example: bool, cases: int, depth: int | None,
           engines: str | None, require_all_engines: bool, timeout: float,
           jinja_file: str | None, kind: str, as_json: bool, seed: int) -> None:
    """Check that Jinja renders byte-for-byte what Ollama renders (exit 0 only if it does).

    Each INPUT is a Go template, a Modelfile (verified with its SYSTEM/MESSAGE rule, as
    Ollama's server applies it) or a directory (its templates and Modelfiles). Every
    available engine is used unless --engines says otherwise; stderr names those skipped.
    """
    import json

    from gotmpl2jinja.verify import harness
    from gotmpl2jinja.verify.strategies import exhaustive_count

    if not inputs and not example:
        raise click.UsageError("give INPUT… (templates, Modelfiles, directories) or --example")
    total = cases + (exhaustive_count(depth) if depth is not None else 0)
    if total < 1:
        raise click.UsageError("--cases 0 without --exhaustive checks nothing; give --cases N "
                               "(N ≥ 1) or --exhaustive DEPTH")
    paths = harness.template_inputs(inputs) + ([EXAMPLE] if example else [])
    if not paths:
        raise Gotmpl2JinjaError(
            f"no templates (*.gotmpl, *.tmpl) or Modelfiles found in {', '.join(inputs)}")
    if jinja_file is not None and len(paths) != 1:
        raise click.UsageError("--jinja takes exactly one INPUT (a template or a Modelfile)")
    selection = choose_engines(engines, require_all_engines, timeout, quiet=as_json)
    verdicts = []
    with _verify_progress() as progress:
        for path in paths:
            task = progress.add_task(path.name, total=total) if progress else None
            verdict = harness.verify_file(
                path, jinja_path=Path(jinja_file) if jinja_file else None, cases=cases,
                exhaustive=depth, engines=selection.used, seed=seed, kind=kind,
                progress=_task_progress(progress, task) if progress else None,
            )
            if verdict.result is not None:
                verdict.result.skipped = dict(selection.skipped)
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
@as_option
@friendly_errors
def convert(input_spec: str, output: str | None, fmt: str, gguf_source: str | None,
            models_dir: str | None, force: bool, kind: str, no_check: bool) -> None:
    """Translate INPUT into equivalent Jinja.

    INPUT is a Go template file, a Modelfile (its SYSTEM and MESSAGE lines become a preamble,
    as Ollama's server applies them), `-` for standard input, or an installed Ollama model
    `ollama:NAME`. Without -o the Jinja goes to stdout (jinja format only); files are written
    atomically and never overwritten without --force. Warnings go to stderr.

    The Jinja is checked against Ollama's own rendering (Go's text/template) on generated
    conversations and every engine available before anything is printed or written; a
    divergence is an error (exit 1) with its minimal conversation. --no-check skips that.
    """
    from gotmpl2jinja.batch.sources import convert_source, load_source
    from gotmpl2jinja.emit.legacy import collect_warnings
    from gotmpl2jinja.errors import Gotmpl2JinjaError
    from gotmpl2jinja.formats.writers import write_output

    if gguf_source is not None and fmt != "gguf":
        raise click.UsageError(f"--gguf is only for --format gguf (not {fmt})")
    source = load_source(input_spec, models_dir=Path(models_dir) if models_dir else None,
                         kind=kind)
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
        from gotmpl2jinja.batch.sources import go_renderer
        from gotmpl2jinja.errors import ReferenceRendererError
        from gotmpl2jinja.verify.harness import check_line, check_translation

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
    if not Path(output).exists() and not Path(output).suffix and fmt != "lmstudio":
        raise click.UsageError(
            f"-o {output}: no such directory; create it to write {fmt}'s usual file inside, "
            "or give a file name with an extension")
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
@engine_options
@timeout_option
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Write the Markdown report here (its .json twin beside it); "
              "default OUT/report.md.")
@click.option("--force", is_flag=True, help="Overwrite existing outputs and reports.")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON report on stdout.")
@friendly_errors
def migrate(src: str, out: str, fmt: str, store: str | None, cases: int,
            engines: str | None, require_all_engines: bool, timeout: float, seed: int,
            report: str | None, force: bool, as_json: bool) -> None:
    """Convert and verify every template and Modelfile under SRC into OUT, with a report.

    Exit 0 only if every item was converted and verified; 1 if any item was not (the report
    says why) or the run could not start (nothing is written then); 2 usage error.
    """
    import json

    from gotmpl2jinja.batch import migrate as batch

    selection = choose_engines(engines, require_all_engines, timeout, quiet=as_json)
    with batch.rich_progress() as progress:
        result = batch.migrate(src, out, fmt=fmt, cases=cases, seed=seed, force=force,
                               store=store, report=report, progress=progress,
                               engines=selection.used, skipped=selection.skipped)
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
    from gotmpl2jinja.emit.runtime import MACROS, macro_source, public_macros

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
@click.option("--force", is_flag=True, help="Overwrite an existing -o file.")
@click.option("--cases", type=click.IntRange(min=0), default=2000, show_default=True,
              help="Random conversations per template (after the exhaustive pass).")
@click.option("--exhaustive", type=click.IntRange(min=0), default=1, show_default=True,
              help="Depth of the bounded-exhaustive pass (messages per conversation).")
@click.option("--seed", type=int, default=0, show_default=True)
@engine_options
@timeout_option
@click.option("--json", "as_json", is_flag=True, help="JSON rows instead of the Markdown table.")
@friendly_errors
def sweep(folders: tuple[str, ...], output: str | None, force: bool, cases: int,
          exhaustive: int, seed: int, engines: str | None, require_all_engines: bool,
          timeout: float, as_json: bool) -> None:
    """Translate and verify every Go template under FOLDERS (default: fixtures/corpus and
    fixtures/seeds): one row each, progress on stderr."""
    import json

    from gotmpl2jinja.batch import sweep as sweeping

    chosen = list(folders) or ["fixtures/corpus", "fixtures/seeds"]
    missing = [f for f in chosen if not Path(f).exists()]
    if missing:
        raise click.UsageError(f"{missing[0]}: no such file or directory"
                               + ("" if folders else " (give FOLDERS: the default is a "
                                  "checkout's fixtures/)"))
    target = check_output_target(output, force) if output else None
    selection = choose_engines(engines, require_all_engines, timeout, quiet=as_json)
    rows = sweeping.sweep(
        chosen, cases=cases, exhaustive=exhaustive, seed=seed,
        engines=selection.used,
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
                                    seed=seed, skipped=selection.skipped)
    if target is not None:
        write_text_output(text, target, force)
        click.echo(f"{sweeping.summary_sentence(rows)} Wrote {output}.", err=True)
    else:
        click.echo(text, nl=False)


@cli.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the table to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite an existing -o file.")
@click.option("--cases", type=click.IntRange(min=0), default=20, show_default=True,
              help="Random conversations per cell (after the one-message shapes).")
@engine_options
@friendly_errors
def coverage(output: str | None, force: bool, cases: int, engines: str | None,
             require_all_engines: bool) -> None:
    """The coverage table: each Go builtin, Ollama function and construct × each operand
    type, translated and verified (or refused, and why); docs/coverage.md is its output."""
    from gotmpl2jinja.batch import coverage as covering
    from gotmpl2jinja.engines.registry import raw_engine_names

    target = check_output_target(output, force) if output else None
    selection = choose_engines(engines or ",".join(raw_engine_names()), require_all_engines,
                               None)
    cells = covering.table(cases=cases, engines=selection.used,
                           progress=lambda line: click.echo(line, err=True))
    command = " ".join(["gotmpl2jinja coverage", *(["-o", output] if output else []),
                        f"--cases {cases}", *([f"--engines {engines}"] if engines else [])])
    text = covering.markdown(cells, command, selection.used)
    if target is not None:
        write_text_output(text, target, force)
        click.echo(f"{covering.summary(cells)} Wrote {output}.", err=True)
    else:
        click.echo(text, nl=False)


@cli.group(invoke_without_command=True)
@click.pass_context
def engines(ctx: click.Context) -> None:
    """List the Jinja engines and whether each is available here (and why not).

    `gotmpl2jinja engines install [NAMES]` sets up those that need it (e.g. @huggingface/jinja
    through npm into the per-user cache) and builds the Go reference renderer; verification
    never installs anything by itself.
    """
    if ctx.invoked_subcommand is not None:
        return
    from gotmpl2jinja.engines.registry import ENGINES
    from gotmpl2jinja.ollama.reference.driver import binary_path

    width = max(len(name) for name in ENGINES)
    for name, spec in ENGINES.items():
        reason = spec.unavailable()
        state = "available" if reason is None else f"unavailable: {reason}"
        click.echo(f"{name:<{width}}  {state}  — {spec.description}")
    built = binary_path()
    state = (f"built ({built})" if built.is_file() else
             "not built yet (built on first use, or by `gotmpl2jinja engines install`)")
    click.echo(f"Go reference renderer: {state}")


@engines.command("install")
@click.argument("names", nargs=-1)
@friendly_errors
def engines_install(names: tuple[str, ...]) -> None:
    """Set up the engines NAMES (default: every one that has a setup step) and build the Go
    reference renderer; progress on stderr. Exit 1 if a setup step failed (npm missing, no
    network …: the message says) or an engine named is still unavailable."""
    from gotmpl2jinja.engines.registry import ENGINES, setup_engines, unknown_engine
    from gotmpl2jinja.ollama.reference.driver import ensure_binary, stderr_note

    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        raise unknown_engine(unknown)
    ensure_binary(progress=stderr_note)
    states, failed = setup_engines(list(names) or None, stderr_note)
    for name, why in states.items():
        click.echo(f"{name}: {'available' if why is None else 'unavailable: ' + why}")
    if failed or any(states[name] is not None for name in names):
        sys.exit(1)


def main() -> None:
    cli(prog_name="gotmpl2jinja")


if __name__ == "__main__":
    main()

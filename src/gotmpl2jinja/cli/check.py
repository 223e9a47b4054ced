"""The commands that check translations or templates, one or many: verify, compare, migrate,
sweep, coverage.

Registered on the group in `cli.main`. Imports inside the commands are deferred for start-up
time: a command imports its stage when it runs.

May depend on: cli.common, errors (and, when a command runs, batch, engines.registry, ollama,
pipeline, verify).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from gotmpl2jinja.cli.common import (
    EXAMPLE,
    ExistingPath,
    as_option,
    check_output_target,
    choose_engines,
    engine_options,
    family_option,
    friendly_errors,
    gguf_writer_needed,
    read_source,
    store_option,
    timeout_option,
    write_text_output,
)
from gotmpl2jinja.errors import Gotmpl2JinjaError

#: verify, migrate and sweep: compare as each host feeds the model, on this vocabulary's tokens.
gguf_option = click.option(
    "--gguf", "gguf", default=None, type=click.Path(dir_okay=False),
    help="Compare token IDs, as Ollama, transformers/vLLM and llama-server tokenize, with this "
         "GGUF's vocabulary (llama.cpp's tokenizer: `gotmpl2jinja engines install tokenizer`).")


def token_level(gguf: str | None) -> Any:
    """The `verify.tokens.TokenLevel` of --gguf (None without it): `pipeline.token_level`."""
    from gotmpl2jinja.pipeline.checking import token_level as level

    return level(gguf)


def token_lines(result: Any) -> list[str]:
    """What verify says of a token-level comparison: how, and the template's special tokens
    the vocabulary does not know (not an error: tokens are tokens)."""
    if result.compared_on is None:
        return []
    lines = [f"  compared on {result.compared_on}"]
    if result.unknown_specials:
        lines.append(f"  {len(result.unknown_specials)} special token(s) of the template are "
                     f"not special tokens of this vocabulary: "
                     f"{', '.join(result.unknown_specials)}")
    return lines


@click.command()
@click.argument("ollama_template", required=False)
@click.argument("reference_jinja", required=False)
@click.option("--corpus", type=ExistingPath(file_okay=False),
              help="Compare every entry of a paired corpus folder instead.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="With --corpus: write the Markdown table here (default: stdout).")
@click.option("--force", is_flag=True, help="Overwrite an existing -o file.")
@click.option("--cases", default=20, show_default=True, type=click.IntRange(min=0),
              help="Generated conversations (besides the fixed catalogue).")
@click.option("--seed", default=0, show_default=True, help="Seed of the generated ones.")
@click.option("--bos", default=None, help="BOS token text passed to the Jinja side.")
@click.option("--eos", default=None, help="EOS token text passed to the Jinja side.")
@click.option("--tokenizer-config", type=ExistingPath(dir_okay=False),
              help="Take bos_token/eos_token from this tokenizer_config.json.")
@click.option("--gguf", type=ExistingPath(dir_okay=False), default=None,
              help="The model's GGUF (or a vocabulary): its BOS text, and BOS before the Go "
              "prompt when its tokenizer adds it, as Ollama feeds the model.")
@click.option("--engines", default=None,
              help="Render the model's Jinja on these engines, one report each (default: "
              "jinja2, as transformers renders it; not with --corpus).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("--training", is_flag=True,
              help="With --corpus: how many pairs agree on a finished conversation's closed "
              "final turn (add_generation_prompt=False, as training data is formatted).")
@friendly_errors
def compare(
    ollama_template: str | None, reference_jinja: str | None, corpus: str | None,
    output: str | None, force: bool, cases: int, seed: int, bos: str | None, eos: str | None,
    tokenizer_config: str | None, gguf: str | None, engines: str | None, as_json: bool,
    training: bool,
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
        if training:
            from gotmpl2jinja.batch import compare_training

            rows = compare_training.compare_training(Path(corpus), drift.stderr_progress)
            command = " ".join(["gotmpl2jinja compare --corpus", corpus, "--training",
                                *(["-o", output] if output else [])])
            text = compare_training.training_markdown(rows, command)
        else:
            results = drift.compare_corpus(Path(corpus), cases, seed, drift.stderr_progress)
            text = (json.dumps(drift.corpus_json(results), ensure_ascii=False, indent=1) + "\n"
                    if as_json else drift.markdown_table(results, cases, seed))
        if target is not None:
            write_text_output(text, target, force)
            click.echo(f"wrote {target}", err=True)
        else:
            click.echo(text, nl=False)
        return
    if training:
        raise click.UsageError("--training is for --corpus")
    if output:
        raise click.UsageError("-o is for --corpus; the comparison of two templates prints")
    if not ollama_template or not reference_jinja:
        raise click.UsageError("give OLLAMA_TEMPLATE and REFERENCE_JINJA, or --corpus DIR")
    config_bos, config_eos = ("", "")
    if tokenizer_config:
        config_bos, config_eos = drift.tokens_from_tokenizer_config(Path(tokenizer_config))
    rule: dict[str, Any] = {}
    if gguf:
        from gotmpl2jinja.ollama.vocab import facts_from_gguf

        facts = facts_from_gguf(gguf)
        config_bos = facts.bos_token or config_bos
        rule = {"adds_bos": bool(facts.adds_bos), "strips": facts.strips or ""}
    names = [drift.JINJA_ENGINE]
    if engines is not None:
        from gotmpl2jinja.batch.files import parse_engine_list
        from gotmpl2jinja.engines.registry import select_engines

        names = select_engines(parse_engine_list(engines)).used
    go_text, jinja_text = read_source(ollama_template)[1], read_source(reference_jinja)[1]
    comparisons = [
        drift.compare(drift.Pair(go_text, jinja_text, bos=config_bos if bos is None else bos,
                                 eos=config_eos if eos is None else eos, engine=name, **rule),
                      cases=cases, seed=seed, vocab=Path(gguf).name if gguf else "")
        for name in names]
    if as_json:
        data = [c.to_json() for c in comparisons]
        click.echo(json.dumps(data[0] if len(data) == 1 else data, ensure_ascii=False, indent=1))
    else:
        click.echo("\n\n".join(drift.text_report(c) for c in comparisons))
    if not all(c.agree for c in comparisons):
        sys.exit(1)


@click.command()
@click.argument("inputs", nargs=-1)
@click.option("--example", is_flag=True,
              help="Also verify the example template shipped with gotmpl2jinja.")
@click.option("--cases", default=200, show_default=True, type=click.IntRange(min=0),
              help="Random conversations per template (hypothesis).")
@click.option("--exhaustive", "depth", type=click.IntRange(min=0), default=None,
              help="Also every message-shape sequence up to DEPTH messages.")
@engine_options
@timeout_option
@click.option("--jinja", "jinja_file", default=None, type=ExistingPath(dir_okay=False),
              help="Compare with this Jinja file instead of the translation (one INPUT).")
@as_option
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@gguf_option
@family_option
@friendly_errors
def verify(inputs: tuple[str, ...], example: bool, cases: int, depth: int | None,
           engines: str | None, require_all_engines: bool, timeout: float,
           jinja_file: str | None, kind: str, as_json: bool, seed: int,
           gguf: str | None, family: str | None) -> None:
    """Check that Jinja renders byte-for-byte what Ollama renders (exit 0 only if it does).

    Each INPUT is a Go template, a Modelfile (verified with its SYSTEM/MESSAGE rule, as
    Ollama's server applies it) or a directory (its templates and Modelfiles). Every
    available engine is used unless --engines says otherwise; stderr names those skipped.
    """
    import json

    from gotmpl2jinja.batch import files
    from gotmpl2jinja.pipeline.checking import planned_cases
    from gotmpl2jinja.pipeline.checking import verify as verified
    from gotmpl2jinja.verify.outcomes import format_divergence

    if not inputs and not example:
        raise click.UsageError("give INPUT… (templates, Modelfiles, directories) or --example")
    total = planned_cases(cases, depth)
    if total < 1:
        raise click.UsageError("--cases 0 without --exhaustive checks nothing; give --cases N "
                               "(N ≥ 1) or --exhaustive DEPTH")
    paths = files.template_inputs(inputs) + ([EXAMPLE] if example else [])
    if not paths:
        raise Gotmpl2JinjaError(
            f"no templates (*.gotmpl, *.tmpl) or Modelfiles found in {', '.join(inputs)}")
    if jinja_file is not None and len(paths) != 1:
        raise click.UsageError("--jinja takes exactly one INPUT (a template or a Modelfile)")
    tokens = token_level(gguf)
    selection = choose_engines(engines, require_all_engines, timeout, quiet=as_json)
    verdicts = []
    with _verify_progress() as progress:
        for path in paths:
            task = progress.add_task(path.name, total=total) if progress else None
            verdict = verified(
                path, jinja=Path(jinja_file) if jinja_file else None, cases=cases,
                exhaustive=depth, engines=selection.used, seed=seed, kind=kind,
                progress=_task_progress(progress, task) if progress else None, tokens=tokens,
                family=family,
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
                    click.echo(files.summary_line(verdict.result, str(path)))
                    for line in token_lines(verdict.result):
                        click.echo(line)
                    for divergence in verdict.result.divergences:
                        click.echo(format_divergence(divergence))
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


@click.command()
@click.argument("src")
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["jinja", "hf", "lmstudio", "gguf"]),
              default="jinja", show_default=True, callback=gguf_writer_needed,
              help="What to write for each verified item (gguf: a copy of the model's GGUF — "
              "an installed model's, or a Modelfile's FROM file — with the template set, and "
              "per model whether Ollama's own Jinja path gives its Go path's bytes).")
@store_option("Given, every model installed there is migrated too.")
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
@gguf_option
@friendly_errors
def migrate(src: str, out: str, fmt: str, store: str | None, cases: int,
            engines: str | None, require_all_engines: bool, timeout: float, seed: int,
            report: str | None, force: bool, as_json: bool, gguf: str | None) -> None:
    """Convert and verify every template and Modelfile under SRC into OUT, with a report.

    Exit 0 only if every item was converted and verified; 1 if any item was not (the report
    says why) or the run could not start (nothing is written then); 2 usage error.
    """
    import json

    from gotmpl2jinja.batch import migrate as batch

    tokens = token_level(gguf)
    selection = choose_engines(engines, require_all_engines, timeout, quiet=as_json)
    with batch.rich_progress() as progress:
        result = batch.migrate(src, out, fmt=fmt, cases=cases, seed=seed, force=force,
                               store=store, report=report, progress=progress,
                               engines=selection.used, skipped=selection.skipped,
                               tokens=tokens)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=1))
    else:
        click.echo(batch.summary(result))
        click.echo(f"report: {batch.report_paths(Path(out), Path(report) if report else None)[0]}")
    if not result.ok:
        sys.exit(1)


@click.command()
@click.argument("folders", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the table (or JSON) to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite an existing -o file.")
@click.option("--cases", type=click.IntRange(min=0), default=2000, show_default=True,
              help="Random conversations per template (after the exhaustive pass).")
@click.option("--exhaustive", type=click.IntRange(min=0), default=1, show_default=True,
              help="Depth of the bounded-exhaustive pass (messages per conversation).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the random conversations (the same seed draws the same ones).")
@engine_options
@timeout_option
@click.option("--json", "as_json", is_flag=True, help="JSON rows instead of the Markdown table.")
@gguf_option
@friendly_errors
def sweep(folders: tuple[str, ...], output: str | None, force: bool, cases: int,
          exhaustive: int, seed: int, engines: str | None, require_all_engines: bool,
          timeout: float, as_json: bool, gguf: str | None) -> None:
    """Translate and verify every Go template under FOLDERS (folders or files): one row each,
    progress on stderr."""
    import json

    from gotmpl2jinja.batch import sweep as sweeping

    chosen = list(folders)
    missing = [f for f in chosen if not Path(f).exists()]
    if missing:
        from gotmpl2jinja.ollama.source import no_such_file

        raise Gotmpl2JinjaError(no_such_file(missing[0]))
    target = check_output_target(output, force) if output else None
    tokens = token_level(gguf)
    selection = choose_engines(engines, require_all_engines, timeout, quiet=as_json)
    rows = sweeping.sweep(
        chosen, cases=cases, exhaustive=exhaustive, seed=seed,
        engines=selection.used, tokens=tokens,
        progress=lambda n, total, row: click.echo(sweeping.progress_line(n, total, row),
                                                  err=True),
    )
    command = " ".join(["gotmpl2jinja sweep", *chosen, *(["-o", output] if output else []),
                        f"--cases {cases}", f"--exhaustive {exhaustive}", f"--seed {seed}",
                        *([f"--engines {engines}"] if engines else []),
                        *([f"--gguf {gguf}"] if gguf else [])])
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


def raw_engines(require_all: bool) -> Any:
    """The raw engines (those that render the contract's variables themselves) available here,
    the others skipped and named on stderr in one line, as `verify` skips them; with
    `require_all` a skipped one is an error."""
    from gotmpl2jinja.engines.registry import (
        EngineError,
        EngineSelection,
        raw_engine_names,
        select_engines,
    )

    every = select_engines()
    raw = raw_engine_names()
    selection = EngineSelection([n for n in every.used if n in raw],
                                {n: why for n, why in every.skipped.items() if n in raw})
    if selection.skipped and require_all:
        listing = "; ".join(f"{n}: {why}" for n, why in selection.skipped.items())
        raise EngineError(f"engine(s) unavailable — {listing} "
                          "(`gotmpl2jinja engines` lists every engine and its state)")
    if not selection.used:
        raise EngineError("no Jinja engine is available (`gotmpl2jinja engines` says why)")
    click.echo(selection.describe(), err=True)
    return selection


@click.command()
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
    type, translated and verified (or refused, and why); docs/coverage.md is its output.

    Every raw engine available is used (those unavailable are named on stderr and skipped)
    unless --engines names them."""
    from gotmpl2jinja.batch import coverage as covering

    target = check_output_target(output, force) if output else None
    selection = (choose_engines(engines, require_all_engines, None) if engines is not None
                 else raw_engines(require_all_engines))
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

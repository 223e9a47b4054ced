"""The commands that translate or show one input: parse, render, modelfile, convert, runtime.

Registered on the group in `cli.main`. Imports inside the commands are deferred for start-up
time: a command imports its stage when it runs.

Each is a thin caller of the pipeline (`pipeline`: read, convert, render), which the
playground shares.

May depend on: cli.common (and, when a command runs, emit, formats, ollama, pipeline, syntax,
verify: the conversation reader).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from gotmpl2jinja.cli.common import (
    ExistingPath,
    _positive_seconds,
    as_option,
    convert_target,
    echo_note,
    family_option,
    friendly_errors,
    gguf_writer_needed,
    load_input,
    store_dir,
    store_option,
    timeout_option,
)


@click.command()
@click.argument("input_spec", metavar="INPUT")
@click.option("--json", "as_json", is_flag=True, help="Print the AST as JSON.")
@as_option
@store_option()
@friendly_errors
def parse(input_spec: str, as_json: bool, kind: str, store: str | None) -> None:
    """Parse a Go template (a Modelfile's TEMPLATE) and print its AST (and Ollama's parse-time
    facts)."""
    from gotmpl2jinja.formats.show import ast_to_json, ast_to_text
    from gotmpl2jinja.pipeline.reading import placed_in
    from gotmpl2jinja.syntax.parser import parse as parse_template

    source = load_input(input_spec, kind, store)
    with placed_in(source):  # columns in characters, as every other message counts
        template = parse_template(source.template, name=source.name)
    click.echo(ast_to_json(template) if as_json else ast_to_text(template))


@click.command()
@click.argument("input_spec", metavar="INPUT")
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
@as_option
@store_option()
@family_option
@friendly_errors
def render(input_spec: str, conversation: str, now: str | None,
           go_struct_function: bool, template_only: bool, timeout: float, kind: str,
           store: str | None, family: str | None) -> None:
    """Print exactly what Ollama renders for INPUT and CONVERSATION.json (no added newline).

    Its server's steps for the template (an absent think is true on a thinking template; a
    request it refuses for a capability is an error), then Execute. INPUT is read as `convert`
    reads it: a Go template, or a Modelfile (its TEMPLATE, with its SYSTEM/MESSAGE rule), with
    the model's family steps (its config, a PARSER, --family)."""
    from gotmpl2jinja.pipeline.reading import with_family
    from gotmpl2jinja.pipeline.rendering import ollama_prompt
    from gotmpl2jinja.verify.request import checked_by_go, read_chat_request_file

    if input_spec == "-" and conversation == "-":
        raise click.UsageError("INPUT and CONVERSATION cannot both be standard input")
    source = load_input(input_spec, kind, store)
    with_family(source, family, echo_note)
    # read as Ollama's server reads /api/chat, the reading checked by Go; Go renders
    # the text itself (-0 and escapes kept)
    request = checked_by_go(read_chat_request_file(conversation))
    note = request.note()
    if note:
        click.echo(note, err=True)
    output = ollama_prompt(source, request.text, now=now,
                           go_struct_function=go_struct_function,
                           template_only=template_only, timeout=timeout)
    click.echo(output.encode("utf-8", "surrogateescape"), nl=False)  # Go's exact bytes


@click.command()
@click.argument("source")
@store_option()
@click.option("--store", "store_flag", is_flag=True, hidden=True)  # old: SOURCE is a model name
@click.option("--json", "as_json", is_flag=True, help="Print every field as JSON.")
@friendly_errors
def modelfile(source: str, store: str | None, store_flag: bool, as_json: bool) -> None:
    """Print the TEMPLATE Ollama would use from a Modelfile (or an installed model).

    SOURCE is a Modelfile, `-` for standard input, or an installed model `ollama:NAME`."""
    import json

    from gotmpl2jinja.ollama.modelfile import parse_modelfile
    from gotmpl2jinja.ollama.source import OLLAMA_PREFIX
    from gotmpl2jinja.ollama.store import load_model

    fields: dict[str, Any]  # the JSON printed by --json
    if store_flag or source.startswith(OLLAMA_PREFIX):
        model = load_model(source.removeprefix(OLLAMA_PREFIX), store_dir(store))
        fields = {"template": model.template, "system": model.system,
                  "messages": model.messages, "parameters": model.params,
                  "renderer": model.renderer, "parser": model.parser, "warnings": []}
    else:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
        parsed = parse_modelfile(data, name="<stdin>" if source == "-" else source)
        fields = {"template": parsed.template, "system": parsed.system,
                  "messages": parsed.messages, "parameters": parsed.parameters,
                  "renderer": parsed.renderer, "parser": parsed.parser,
                  "warnings": list(parsed.warnings)}
    if fields["renderer"]:
        fields["warnings"].append(
            f"RENDERER {fields['renderer']!r}: Ollama renders this model with that built-in Go "
            "renderer, not with this template (convert, verify and render refuse it)")
    for warning in fields["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(fields, indent=2, ensure_ascii=False))
    elif fields["template"] is not None:
        click.echo(fields["template"], nl=False)


@click.command()
@click.argument("input_spec", metavar="INPUT")
@click.option("-o", "--output", "output", default=None,
              help="Write here (a file, or a directory for jinja/hf/gguf; `-` for stdout, the "
              "default).")
@click.option("--format", "fmt", type=click.Choice(["jinja", "hf", "lmstudio", "gguf"]),
              default="jinja", show_default=True, callback=gguf_writer_needed,
              help="jinja: chat_template.jinja; hf: chat_template in tokenizer_config.json; "
              "lmstudio: an LM Studio model config; gguf: a copy of --gguf with the template set.")
@click.option("--gguf", "gguf_source", type=ExistingPath(dir_okay=False),
              default=None, help="The model's GGUF: its tokenizer decides BOS (every format); "
              "with --format gguf, the file to copy.")
@click.option("--tokenizer-config", "tokenizer_config",
              type=ExistingPath(dir_okay=False), default=None,
              help="The model's tokenizer_config.json: its add_bos_token decides BOS.")
@click.option("--bos/--no-bos", "bos", default=None,
              help="Ollama's tokenizer adds BOS (the Jinja writes bos_token first) or not; "
              "overrides what the files say.")
@store_option()
@click.option("--models", "models_alias", default=None, hidden=True)  # its old name
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("--no-check", "no_check", is_flag=True,
              help="Skip checking the Jinja against Ollama's Go rendering before writing it.")
@click.option("--generation-blocks", "generation_blocks", is_flag=True,
              help="Put the assistant's own content, thinking and tool calls inside "
              "{% generation %} blocks (transformers' return_assistant_tokens_mask, TRL's "
              "assistant_only_loss); refused (exit 1) where the template does not show them. "
              "Rendered by transformers, @huggingface/jinja, llama.cpp and minja; plain jinja2 "
              "and minijinja refuse the tag (the check skips them).")
@family_option
@timeout_option
@as_option
@friendly_errors
def convert(input_spec: str, output: str | None, fmt: str, gguf_source: str | None,
            tokenizer_config: str | None, bos: bool | None, store: str | None,
            models_alias: str | None, force: bool, no_check: bool, generation_blocks: bool,
            timeout: float, kind: str, family: str | None) -> None:
    """Translate INPUT into equivalent Jinja.

    INPUT is a Go template file, a Modelfile (its SYSTEM and MESSAGE lines become a preamble,
    as Ollama's server applies them), `-` for standard input, or an installed Ollama model
    `ollama:NAME`. Without -o the Jinja goes to stdout (jinja format only); files are written
    atomically and never overwritten without --force, and an output that cannot be written is
    said before any work. Warnings go to stderr.

    The Jinja is checked against Ollama's own rendering (Go's text/template) on generated
    conversations and every engine available before anything is printed or written; a
    divergence is an error (exit 1) with its minimal conversation. --no-check skips that.

    BOS: when the model's tokenizer adds BOS (llama.cpp's rule, read from --gguf, the installed
    model's GGUF, the .gguf a Modelfile's FROM names, or --tokenizer-config; --bos/--no-bos
    overrides), the Jinja writes bos_token first, as transformers and vLLM need; --format hf
    also writes the BOS facts.
    """
    from gotmpl2jinja.formats.writers import write_output
    from gotmpl2jinja.pipeline.converting import convert as converted

    if gguf_source is not None and tokenizer_config is not None:
        raise click.UsageError("give --gguf or --tokenizer-config, not both")
    target = convert_target(output, fmt, force, gguf_source)  # before any work
    source = load_input(input_spec, kind, store if models_alias is None else models_alias)
    result = converted(
        source, gguf=Path(gguf_source) if gguf_source else None, bos=bos, family=family,
        tokenizer_config=Path(tokenizer_config) if tokenizer_config else None,
        generation_blocks=generation_blocks, check=not no_check, timeout=timeout,
        on_note=echo_note)
    if target is None:
        click.echo(result.jinja, nl=False)  # the exact bytes the -o file would hold
        return
    written = write_output(result.jinja, fmt, target, force=force, stop=result.stop,
                           gguf_source=Path(gguf_source) if gguf_source else None,
                           bos=result.bos)
    click.echo(f"wrote {written}", err=True)


@click.command()
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

"""The check `convert` and `translate()` run before handing a translation out: the
bounded-exhaustive shapes plus random conversations on every available raw engine.

May depend on: `engines`, `errors`, `ollama.vocab`, `verify.harness`, `verify.outcomes`,
`verify.tokens`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gotmpl2jinja.engines.registry import (
    ENGINES,
    select_engines,
)
from gotmpl2jinja.errors import (
    TranslationError,
)
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.outcomes import GoRenderer, VerifyResult, format_divergence
from gotmpl2jinja.verify.tokens import HostTokens, TokenLevel

if TYPE_CHECKING:
    from gotmpl2jinja.ollama.vocab import BosFacts

#: The BOS text the check gives the Jinja when the facts have none (`--bos` alone): any text
#: shows that the Jinja writes bos_token first and nothing else.
PLACEHOLDER_BOS = "<|bos of the check|>"


# ---------------------------------------------------------------------------------------------
# The check `convert` and `translate()` run before handing a translation out

#: Depth of the bounded-exhaustive pass of the check (every message shape up to this many
#: messages: 238 conversations) and the random conversations after it.
CHECK_EXHAUSTIVE = 1
CHECK_CASES = 200


#: The engines that parse `{% generation %}` blocks (measured; docs/jinja-portability.md):
#: transformers' own environment (its AssistantTracker extension), @huggingface/jinja (cuts
#: the tags out first), llama.cpp's engine and minja (render the body); jinja2 without that
#: extension and minijinja refuse the unknown tag.
GENERATION_ENGINES = frozenset({"transformers", "hfjinja", "llamacpp", "llamacpp-server",
                                "minja", "minja-server", "ollama-jinja"})


def check_engines(*, generation_blocks: bool = False) -> list[str]:
    """The engines a translation is checked on: every available engine that renders the
    contract's variables (the registry's `select_engines`: jinja2 and minijinja with the
    package's dependencies, the others once set up by `gotmpl2jinja engines install`).
    llama-server's contexts are left to `verify`: they cost tens of milliseconds a case, and
    what they add is the runtime's reshaping of requests, not the translation's correctness.
    `generation_blocks`: only those of them that parse `{% generation %}`."""
    return [name for name in select_engines().used if "server" not in ENGINES[name].tags
            and (not generation_blocks or name in GENERATION_ENGINES)]


class TranslationDiverged(TranslationError):
    """The translator's own Jinja renders other bytes than Ollama: a bug of gotmpl2jinja,
    caught before the Jinja was handed out. `result` holds the minimal counterexamples."""

    def __init__(self, result: VerifyResult, name: str) -> None:
        first = result.divergences[0]
        engines = ", ".join(sorted({d.engine for d in result.divergences}))
        super().__init__(
            f"the translation renders other bytes than Ollama on {engines} (checked on "
            f"{result.cases} conversations), so it was not written; this is a bug of "
            "gotmpl2jinja: please report it with the template and this minimal conversation "
            "(--no-check writes the unchecked translation anyway)\n"
            + format_divergence(first), name=name)
        self.result = result


def bos_rule(facts: BosFacts | None) -> TokenLevel | None:
    """The BOS rule of the facts a translation was made with, as text (the raw engines get
    `bos_token` and must render BOS text + Ollama's prompt when its tokenizer adds BOS); None
    when BOS was not decided (the strings themselves are compared)."""
    if facts is None or facts.adds_bos is None:
        return None
    host = HostTokens(bos_token=facts.bos_token or PLACEHOLDER_BOS,
                      eos_token=facts.eos_token or "", add_bos=facts.adds_bos,
                      strips=facts.strips, source=facts.source, facts=facts)
    return TokenLevel(host)


def check_translation(go_source: str, jinja_source: str, *, name: str = "template",
                      render: GoRenderer | None = None,
                      engines: list[str] | None = None,
                      bos: BosFacts | None = None) -> VerifyResult:
    """Verify a translation against Go (the exhaustive shapes plus CHECK_CASES random
    conversations, on `engines`, default `check_engines()`); raise TranslationDiverged on any
    divergence. Returns the result (its `.engines` and `.cases` say what was checked). `bos`:
    the tokenizer facts the translation was made with (`bos_rule`)."""
    result = verify_template(go_source, jinja_source, cases=CHECK_CASES,
                             exhaustive=CHECK_EXHAUSTIVE,
                             engines=check_engines() if engines is None else engines,
                             name=name, render=render, tokens=bos_rule(bos))
    if not result.ok:
        raise TranslationDiverged(result, name)
    return result


def check_line(result: VerifyResult) -> str:
    """The one line `convert` prints on stderr after a successful check."""
    return (f"checked: renders what Ollama renders on {result.cases} conversations on "
            f"{', '.join(result.engines)}"
            + (f"; compared as {result.compared_on}" if result.compared_on else ""))

"""Generated Go templates, translated and verified against Go on every engine available.

Each template from `template_generator.go_templates` is translated (the internal, unchecked
translate: this test verifies on its own); a refusal must be one line with its line and column;
a translation must render what Go renders, byte for byte, on every conversation shape of one
message plus random conversations, on every engine `verify.check_engines()` finds. A divergence
fails the test, and hypothesis shrinks it to a minimal template (the conversation printed is the
minimal one `verify_template` found). CI runs a few hundred templates; the slow-marked run at
least 10,000 (its figures are in docs/template-generator.md).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, given, seed, settings
from template_generator import go_templates

from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.base import set_render_timeout
from gotmpl2jinja.engines.registry import raw_engine_names
from gotmpl2jinja.errors import TemplateSyntaxError, TranslationError
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.ollama.reference import shared_renderer
from gotmpl2jinja.syntax import nodes
from gotmpl2jinja.syntax.parser import parse
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.outcomes import format_divergence

#: Random conversations per generated template (after the 238 one-message shapes).
CASES = 20
#: `path:LINE:COL: message`, one line: what every refusal must look like.
REFUSAL = re.compile(r"^template:\d+:\d+: [^\n]+$")
#: The seed and size of the slow run documented in docs/template-generator.md.
#: (GOTMPL2JINJA_GENERATOR_SEED / _EXAMPLES change them, to split a run over several cores.)
SLOW_SEED = int(os.environ.get("GOTMPL2JINJA_GENERATOR_SEED", "12"))
SLOW_EXAMPLES = int(os.environ.get("GOTMPL2JINJA_GENERATOR_EXAMPLES", "12000"))  # a few repeat
#: The slow run's time limit per render (GOTMPL2JINJA_GENERATOR_TIMEOUT seconds; the engines'
#: 5 s otherwise): a shard that shares its cores with other work (run under `nice`) can wait
#: longer than that for a render of a few milliseconds, and a limit hit is a failure.
SLOW_TIMEOUT = float(os.environ.get("GOTMPL2JINJA_GENERATOR_TIMEOUT", "0")) or None

#: Every raw engine (llama-server's contexts: tests/test_cppengines.py), or the ones
#: GOTMPL2JINJA_GENERATOR_ENGINES=a,b names (to split a run over cores by engine). minja was
#: left out for a while: after a few hundred templates it seemed to hang; it was blocked writing
#: its log to a pipe nobody read (tests/test_cppengines.py, ..._never_blocks_on_its_stderr).
ENGINES = (os.environ["GOTMPL2JINJA_GENERATOR_ENGINES"].split(",")
           if os.environ.get("GOTMPL2JINJA_GENERATOR_ENGINES") else raw_engine_names())


def check_generated(source: str, tally: Counter[str]) -> None:
    """Translate `source` and verify it; fail on a divergence or a malformed refusal."""
    try:
        jinja = translate(source)
    except TemplateSyntaxError as exc:
        verdict = reference.check_parse(source)
        assert not verdict.ok, f"our parser rejects what Go accepts: {exc}"
        tally["rejected by Go's parser too (not well-formed)"] += 1
        return
    except TranslationError as exc:
        assert REFUSAL.match(str(exc)), f"a refusal must be one line with LINE:COL: {exc!s}"
        tally["refused"] += 1
        tally["refused: " + re.sub(r"^template:\d+:\d+: ", "", str(exc))[:60]] += 1
        return
    result = verify_template(source, jinja, cases=CASES, exhaustive=1, engines=ENGINES,
                             seed=len(source))
    tally["translated"] += 1
    tally["cases"] += result.cases
    assert result.ok, "\n".join(
        ["the translation diverges from Go:", source, *map(format_divergence,
                                                             result.divergences)])


def _write_report(tally: Counter[str], examples: int) -> None:
    target = os.environ.get("GOTMPL2JINJA_GENERATOR_REPORT")
    if target:
        Path(target).write_text(json.dumps(
            {"seed": SLOW_SEED, "max_examples": examples, "engines": ENGINES,
             "elapsed_s": round(time.monotonic() - STARTED, 1),
             "cases_per_template": f"238 exhaustive (depth 1) + {CASES} random",
             **dict(tally.most_common())}, ensure_ascii=False, indent=1) + "\n",
            encoding="utf-8")


CI_TALLY: Counter[str] = Counter()
STARTED = time.monotonic()


#: Templates per CI run (GENERATOR_EXAMPLES overrides it for a quick local look).
CI_EXAMPLES = int(os.environ.get("GENERATOR_EXAMPLES", "200"))


@settings(max_examples=CI_EXAMPLES, suppress_health_check=list(HealthCheck))
@given(go_templates())
def test_generated_templates_translate_exactly_or_are_refused(source: str) -> None:
    check_generated(source, CI_TALLY)


def _range_else_reads_its_variable(source: str) -> bool:
    for node in parse(source).root.walk():
        if isinstance(node, nodes.RangeNode) and node.pipe.decl and node.else_list:
            names = {v.ident[0] for v in node.pipe.decl}
            if any(isinstance(n, nodes.VariableNode) and n.ident[0] in names
                   for n in node.else_list.walk()):
                return True
    return False


@pytest.mark.parametrize("what", [
    # Go binds a range's variables to the ranged value before it iterates: its else sees them
    # (seed 20 of the slow run reached one only through an outer variable of the same name)
    _range_else_reads_its_variable,
    lambda source: re.search(r"range \$\w+(, \$\w+)? = ", source) is not None,
], ids=["a range's else reads the range's variable", "a range assigns earlier variables"])
def test_the_generator_reaches(what: Callable[[str], bool]) -> None:
    assert what(find(go_templates(), what, settings=settings(
        max_examples=5000, database=None, suppress_health_check=list(HealthCheck))))


SLOW_TALLY: Counter[str] = Counter()
SLOW_SEEN: set[str] = set()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("GOTMPL2JINJA_GENERATOR_SLOW") != "1",
                    reason="the 12,000-template run (about two hours on two cores): "
                    "set GOTMPL2JINJA_GENERATOR_SLOW=1")
@seed(SLOW_SEED)
@settings(max_examples=SLOW_EXAMPLES, derandomize=False, suppress_health_check=list(HealthCheck))
@given(go_templates())
def test_generated_templates_slow_run(source: str) -> None:
    SLOW_TALLY["templates"] += 1
    SLOW_SEEN.add(source)
    SLOW_TALLY["distinct templates"] = len(SLOW_SEEN)
    if SLOW_TIMEOUT is not None:  # (conftest restores both limits after the test)
        set_render_timeout(SLOW_TIMEOUT)
        shared_renderer().timeout = SLOW_TIMEOUT
    try:
        check_generated(source, SLOW_TALLY)
    except AssertionError:
        SLOW_TALLY["diverged (the run stops here and shrinks it)"] += 1
        _write_report(SLOW_TALLY, SLOW_EXAMPLES)
        raise
    if SLOW_TALLY["templates"] % 100 == 0 or SLOW_TALLY["templates"] == SLOW_EXAMPLES:
        _write_report(SLOW_TALLY, SLOW_EXAMPLES)

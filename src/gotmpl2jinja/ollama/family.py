"""The steps Ollama's server takes by the model rather than by its template (Ollama v0.33.0-rc2,
server/routes.go, server/images.go, model/parsers, harmony; ollama-semantics.md §8 "By family").

Why: Ollama grants capabilities and rewrites requests by the model's family, its PARSER and its
config, whatever its template says: gpt-oss thinks (with levels) even when its template cannot,
a harmony model's "max" level is "high" and its tools are renamed, qwen3 and deepseek-r1 have
the thinking taken out of earlier assistant messages. A translation judged from the template
alone would be wrong for such a model, so the rules live here, once, for the reference renderer
(which applies them in Go) and the translator (which writes them into the Jinja).

A model with a RENDERER is not here at all: Ollama renders it with built-in Go code and its
template is not what the model sees (`ollama.source` refuses it).

May depend on: `errors`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: Families whose config makes Ollama grant thinking whatever the template (modelFamilyCapabilities)
#: and, with harmony's markers in the template, use harmony (shouldUseHarmony).
GPT_OSS_FAMILIES = ("gptoss", "gpt-oss")
#: The markers shouldUseHarmony looks for in the template's text (both must be there).
HARMONY_MARKERS = ("<|start|>", "<|end|>")
#: Text a harmony template has that a plain template of another model would not.
HARMONY_HINTS = ("<|channel|>", "<|start|>", "<|end|>")
#: filterThinkTags: the family `qwen3`, or a model whose name (its model part) is deepseek-r1.
STRIP_THINK_FAMILY = "qwen3"
STRIP_THINK_MODEL = "deepseek-r1"

#: What each built-in parser Ollama knows (model/parsers ParserForName) grants: (tools, thinking).
#: A PARSER Ollama does not know grants nothing (and still makes Ollama render the template).
PARSER_CAPABILITIES: dict[str, tuple[bool, bool]] = {
    "qwen3": (True, False), "qwen3-thinking": (True, True), "qwen3.5": (True, True),
    "ornith": (True, True), "qwen3-coder": (True, False), "qwen3-vl-instruct": (True, False),
    "qwen3-vl-thinking": (True, True), "ministral": (True, False),
    "passthrough": (False, False), "harmony": (True, True), "cogito": (True, True),
    "deepseek3": (True, True), "olmo3": (True, False), "olmo3-think": (False, True),
    "nemotron-3-nano": (True, True), "nemotron-3.5-nano": (True, True),
    "functiongemma": (True, False), "glm-4.7": (True, True), "gemma4": (True, True),
    "gemma4-no-thinking": (True, False), "glm-ocr": (True, False), "lfm2": (True, False),
    "lfm2-thinking": (True, True), "laguna": (True, True), "poolside-v1": (True, True),
    "cohere": (True, True), "glimmer": (True, True),
}
#: The capabilities a model's config can list that change what the template is given.
_CONFIG_CAPABILITIES = ("thinking", "tools", "insert")


class FamilyError(ValueError):
    """A --family the rules do not know."""


@dataclass(frozen=True)
class ModelFacts:
    """What Ollama knows of a model besides its template: the config layer's `model_family`,
    `model_families`, `parser` and `capabilities`, and the model's name (its model part,
    `deepseek-r1` for `deepseek-r1:8b`)."""

    family: str = ""
    families: tuple[str, ...] = ()
    parser: str = ""
    capabilities: tuple[str, ...] = ()
    model: str = ""


@dataclass(frozen=True)
class FamilySteps:
    """The family's rules that hold for one template (what the reference renderer is sent)."""

    capabilities: frozenset[str] = field(default_factory=frozenset)
    harmony_levels: bool = False  # a think level "max" is "high"
    harmony_tools: bool = False  # the harmony parser renames the request's tools
    strip_think: bool = False  # earlier assistant messages lose their <think>…</think>
    reasons: tuple[str, ...] = ()  # one sentence per rule, for a reader

    def __bool__(self) -> bool:
        return bool(self.capabilities or self.harmony_levels or self.harmony_tools
                    or self.strip_think)

    def payload(self) -> dict[str, Any]:
        """The reference renderer's `family` field."""
        return {"capabilities": sorted(self.capabilities), "harmony_levels": self.harmony_levels,
                "harmony_tools": self.harmony_tools, "strip_think": self.strip_think}


NO_STEPS = FamilySteps()


def family_steps(template: str, facts: ModelFacts) -> FamilySteps:
    """Ollama's rules for a model with these facts and this template text, in ChatHandler's
    terms: capabilities from the config, the parser and the gpt-oss family; harmony when the
    family is gpt-oss and the template has both markers (the parser then defaults to harmony);
    think stripping for qwen3 and deepseek-r1."""
    caps: set[str] = {c for c in facts.capabilities if c in _CONFIG_CAPABILITIES}
    reasons: list[str] = []
    if caps:
        reasons.append(f"the model's config lists {', '.join(sorted(caps))}")
    gpt_oss = facts.family in GPT_OSS_FAMILIES
    harmony = gpt_oss and all(marker in template for marker in HARMONY_MARKERS)
    # Capabilities come from the configured PARSER: ChatHandler sets harmony's default parser
    # only after it has asked for them.
    tools, thinking = PARSER_CAPABILITIES.get(facts.parser, (False, False))
    granted = [name for name, on in (("tools", tools), ("thinking", thinking)) if on]
    if granted:
        caps |= set(granted)
        reasons.append(f"its PARSER {facts.parser!r} grants {' and '.join(granted)}")
    parser = facts.parser or ("harmony" if harmony else "")
    if gpt_oss:
        caps.add("thinking")
        reasons.append(f"family {facts.family!r} thinks, with levels, whatever its template says")
    if harmony:
        reasons.append("harmony (gpt-oss with <|start|> and <|end|> in its template): a "
                       "think level 'max' is 'high'")
    if parser == "harmony":
        reasons.append("the harmony parser renames tools to its own names")
    strip = facts.family == STRIP_THINK_FAMILY or facts.model == STRIP_THINK_MODEL
    if strip:
        reasons.append("earlier assistant messages lose their <think>…</think> block")
    return FamilySteps(capabilities=frozenset(caps), harmony_levels=harmony,
                       harmony_tools=parser == "harmony", strip_think=strip,
                       reasons=tuple(reasons))


#: What `--family NAME` may name: a config family, or the model name whose rule is by name.
KNOWN_FAMILIES = (*GPT_OSS_FAMILIES, STRIP_THINK_FAMILY, STRIP_THINK_MODEL)


def facts_for_family(name: str) -> ModelFacts:
    """The facts `--family NAME` stands for: the config's model_family NAME (deepseek-r1, whose
    rule goes by the model's name, as that name). Any other family has no rule in Ollama, so
    saying it changes nothing; a name the rules do not know is refused to catch a typo."""
    if name not in KNOWN_FAMILIES:
        raise FamilyError(f"unknown family {name!r}: Ollama has rules for "
                          f"{', '.join(KNOWN_FAMILIES)} (any other family renders by its "
                          "template alone: leave --family out)")
    if name == STRIP_THINK_MODEL:
        return ModelFacts(model=name)
    return ModelFacts(family=name)


def facts_from_config(config: dict[str, Any], model: str = "") -> ModelFacts:
    """The facts in a model's config layer (its JSON object) and name."""
    def text(key: str) -> str:
        value = config.get(key)
        return value if isinstance(value, str) else ""

    def texts(key: str) -> tuple[str, ...]:
        value = config.get(key)
        return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()

    return ModelFacts(family=text("model_family"), families=texts("model_families"),
                      parser=text("parser"), capabilities=texts("capabilities"), model=model)


def family_hint(template: str) -> str | None:
    """The family Ollama would treat a template with this text by, when its text is a
    family's (harmony's markers: gpt-oss), for a one-line notice; None otherwise."""
    if any(hint in template for hint in HARMONY_HINTS):
        return "gpt-oss"
    return None


def describe(steps: FamilySteps) -> Iterable[str]:
    """The rules in force, one sentence each."""
    return steps.reasons

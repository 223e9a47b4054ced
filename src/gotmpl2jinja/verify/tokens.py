"""Token-level equivalence: the token IDs each host feeds the model, against Ollama's.

A model sees token IDs, and the hosts make them from a template's output differently
(docs/equivalence-contract.md, "Token level"):

- **Ollama** tokenizes Go's prompt with `add_special` and `parse_special` (llama.cpp's
  `llama_tokenize`): BOS first when the vocabulary adds it, special-token text as the token —
  after its server removed the BOS text it strips from a prompt's start (`HostTokens.strips`);
- **transformers / vLLM** (the raw engines: jinja2, transformers, hfjinja, minijinja, llamacpp,
  minja) render with `bos_token`/`eos_token` and tokenize with no added special tokens: the
  template must write BOS itself;
- **llama-server** (the `-server` contexts) renders with `bos_token`, strips one leading BOS
  text when the vocabulary adds BOS (and one trailing EOS text when it adds EOS:
  `common_chat_template_direct_apply` in llama.cpp's common/chat.cpp), then tokenizes with
  `add_special` and `parse_special`.

With a vocabulary (`Vocabulary`, llama.cpp's own tokenizer) the harness compares token IDs;
without one, the same rules are applied as text (BOS text + Go's prompt against the raw engines'
output). A divergence shows the first differing tokens with their text.

May depend on: `engines` (the registry's tags, the tokenizer), `ollama.vocab`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gotmpl2jinja.engines.registry import ENGINES
from gotmpl2jinja.engines.tokenizer import Vocabulary
from gotmpl2jinja.ollama.vocab import BosFacts

#: The host conventions, as a divergence names them.
OLLAMA, TRANSFORMERS, SERVER = "Ollama", "transformers/vLLM", "llama-server"


@dataclass(frozen=True)
class HostTokens:
    """The model's BOS/EOS facts the hosts act on: the texts the Jinja gets as `bos_token` /
    `eos_token`, whether the tokenizer adds BOS/EOS, and the text Ollama's server strips from
    the start of a prompt before tokenizing it (None: none)."""

    bos_token: str
    eos_token: str
    add_bos: bool
    add_eos: bool = False
    strips: str | None = None
    source: str = ""
    #: the facts the translation is made with (`translate(bos=…)`), when they are known
    facts: BosFacts | None = None

    @classmethod
    def of_vocabulary(cls, vocab: Vocabulary, facts: BosFacts | None = None) -> HostTokens:
        """The facts llama.cpp's own vocabulary code gives (`VocabFacts`); `facts`, the same
        GGUF's as `ollama.vocab` reads them, add what Ollama's server strips."""
        found = vocab.facts
        return cls(bos_token=found.bos_text, eos_token=found.eos_text, add_bos=found.add_bos,
                   add_eos=found.add_eos, strips=facts.strips if facts else None,
                   source=vocab.path.name, facts=facts)

    def context(self) -> dict[str, Any]:
        """The Jinja variables every host passes besides the contract's."""
        return {"bos_token": self.bos_token, "eos_token": self.eos_token}

    def ollama_text(self, prompt: str) -> str:
        """Go's prompt as Ollama's server hands it to the tokenizer."""
        if self.strips and prompt.startswith(self.strips):
            return prompt[len(self.strips):]
        return prompt

    def server_text(self, output: str) -> str:
        """A template's output as llama-server hands it to the tokenizer."""
        if self.add_bos and output.startswith(self.bos_token):
            output = output[len(self.bos_token):]
        if self.add_eos and output.endswith(self.eos_token):
            output = output[:len(output) - len(self.eos_token)]
        return output

    def expected_text(self, prompt: str) -> str:
        """What a raw engine must render for Go's `prompt` (the string-level rule): BOS text
        first when the tokenizer adds BOS, EOS text last when it adds EOS."""
        return ((self.bos_token if self.add_bos else "") + self.ollama_text(prompt)
                + (self.eos_token if self.add_eos else ""))


def convention(engine: str) -> str:
    """The host convention of an engine of the registry."""
    spec = ENGINES.get(engine)
    return SERVER if spec is not None and "server" in spec.tags else TRANSFORMERS


class TokenLevel:
    """Compares one engine's output with Go's under the engine's host convention: on token IDs
    with a vocabulary, as text (the BOS rule applied) without one."""

    def __init__(self, host: HostTokens, vocab: Vocabulary | None = None) -> None:
        self.host = host
        self.vocab = vocab
        self._ids: dict[tuple[str, bool], tuple[int, ...]] = {}

    @property
    def describe(self) -> str:
        """How the comparison is made, for the result."""
        if self.vocab is None:
            where = f" ({self.host.source})" if self.host.source else ""
            if self.host.add_bos:
                return (f"text with the BOS rule: bos_token {self.host.bos_token!r} first, as "
                        f"Ollama's tokenizer adds BOS{where}")
            return f"text with the BOS rule: Ollama's tokenizer adds no BOS{where}"
        return f"token IDs of {self.vocab.path.name} (llama.cpp's tokenizer)"

    def texts(self, engine: str, prompt: str, output: str) -> tuple[str, bool, str, bool]:
        """(Ollama's text, its add_special, the engine's text, its add_special)."""
        ollama = self.host.ollama_text(prompt)
        if convention(engine) == SERVER:
            return ollama, True, self.host.server_text(output), True
        return ollama, True, output, False

    def prefetch(self, items: list[tuple[str, str, str]]) -> None:
        """Tokenize (engine, Go's prompt, engine's output) items in two driver requests."""
        if self.vocab is None:
            return
        if len(self._ids) > 20_000:
            self._ids.clear()
        wanted: dict[bool, set[str]] = {True: set(), False: set()}
        for engine, prompt, output in items:
            a, a_special, b, b_special = self.texts(engine, prompt, output)
            wanted[a_special].add(a)
            wanted[b_special].add(b)
        for special, texts in wanted.items():
            todo = sorted(t for t in texts if (t, special) not in self._ids)
            for text, ids in zip(todo, self.vocab.tokenize(todo, add_special=special),
                                 strict=True):
                self._ids[(text, special)] = tuple(ids)

    def ids(self, text: str, add_special: bool) -> tuple[int, ...]:
        assert self.vocab is not None
        if (text, add_special) not in self._ids:
            self._ids[(text, add_special)] = tuple(
                self.vocab.tokenize([text], add_special=add_special)[0])
        return self._ids[(text, add_special)]

    def agree(self, engine: str, prompt: str, output: str) -> bool:
        """Go's `prompt` and the engine's `output` feed the model the same tokens."""
        a, a_special, b, b_special = self.texts(engine, prompt, output)
        if self.vocab is None:
            expected = self.host.expected_text(prompt) if not b_special else a
            return expected == b
        return self.ids(a, a_special) == self.ids(b, b_special)

    def diff(self, engine: str, prompt: str, output: str, context: int = 3) -> str:
        """The first differing tokens, with their text, around the first difference."""
        a, a_special, b, b_special = self.texts(engine, prompt, output)
        if self.vocab is None:
            expected = self.host.expected_text(prompt) if not b_special else a
            return (f"as text, {convention(engine)}'s prompt differs from Ollama's "
                    f"(expected {len(expected)} characters, got {len(b)}): "
                    f"expected starts {expected[:60]!r}, got {b[:60]!r}")
        ours, theirs = list(self.ids(a, a_special)), list(self.ids(b, b_special))
        index = next((i for i, (x, y) in enumerate(zip(ours, theirs, strict=False)) if x != y),
                     min(len(ours), len(theirs)))
        start = max(0, index - context)

        def shown(ids: list[int]) -> str:
            window = ids[start:index + context + 1]
            if not window:
                return "(end)"
            pieces = self.vocab.pieces(window)  # type: ignore[union-attr]
            return " ".join(f"{i}:{p!r}" for i, p in zip(window, pieces, strict=True)) + (
                " …" if index + context + 1 < len(ids) else "")

        width = max(len(OLLAMA), len(convention(engine))) + 2
        return "\n".join([
            f"first differing token at index {index}; tokens: {OLLAMA} {len(ours)}, "
            f"{engine} ({convention(engine)}) {len(theirs)}",
            f"{OLLAMA + ':':<{width}}" + ("… " if start else "") + shown(ours),
            f"{convention(engine) + ':':<{width}}" + ("… " if start else "") + shown(theirs),
        ])


#: Text that looks like a chat format's special token: <|…|>, <｜…｜>, <word>, </word>,
#: [WORD], [/WORD].
_SPECIAL_LOOKING = re.compile(
    r"<\|[^<>|\s]{1,48}\|>|<｜[^<>｜]{1,48}｜>|</?[A-Za-z][A-Za-z0-9_]{0,31}>"
    r"|\[/?[A-Z][A-Z_]{1,31}\]")


def template_specials(source: str) -> list[str]:
    """The special-token-looking texts of a template's source, in order of first use."""
    return list(dict.fromkeys(_SPECIAL_LOOKING.findall(source)))


def unknown_specials(vocab: Vocabulary, source: str) -> list[str]:
    """The special-token texts of the template that are no special token of `vocab` (a family
    that does not fit the template: tokens are tokens, but the count is worth saying)."""
    found = template_specials(source)
    return [text for text, known in zip(found, vocab.known_special(found), strict=True)
            if not known]

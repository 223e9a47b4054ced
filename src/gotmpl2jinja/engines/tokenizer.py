"""llama.cpp's own tokenizer on a GGUF's vocabulary: the token IDs a model is fed.

A model never sees the prompt string: Ollama's llama runner turns it into token IDs with
llama.cpp's `llama_tokenize` (`add_special` and `parse_special` on), transformers and vLLM with
no added special tokens, llama-server after its own BOS rule (docs/equivalence-contract.md,
"Token level"). This module runs that tokenizer: llama.cpp's `llama-vocab` compiled from the
same llama-cpp-python sdist as the C++ engines (`cpp/tokenizer_driver.cpp`, built by
`gotmpl2jinja engines install`), in one driver process kept for the run and spoken to in JSON
lines through the C++ engines' process machinery (`cpp_engines.CppEngine`).

The vocabulary-only GGUFs that sdist ships (`vendor/llama.cpp/models/ggml-vocab-*.gguf`) are
copied beside the driver when it is built: `shipped_vocabularies()` lists them.

May depend on: errors, engines.base, engines.cpp.build, engines.cpp_engines.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gotmpl2jinja.engines.base import EngineError, EngineTimeout
from gotmpl2jinja.engines.cpp import build
from gotmpl2jinja.engines.cpp_engines import CppEngine
from gotmpl2jinja.errors import Gotmpl2JinjaError, RenderError

#: The recipe of `cpp.build` that builds the tokenizer.
RECIPE = "tokenizer"

#: Seconds a tokenizer request may take (a vocabulary's first load, a batch of long prompts).
TOKENIZER_TIMEOUT = 120.0


class VocabularyError(Gotmpl2JinjaError):
    """A GGUF that llama.cpp cannot load a vocabulary from (one sentence naming the file)."""


@dataclass(frozen=True)
class VocabFacts:
    """What llama.cpp's own vocabulary code says of a GGUF (`llama_vocab` after `load`)."""

    type: str  # "SPM", "BPE", "WPM", "UGM", "RWKV", "PLaMo2"
    model: str  # tokenizer.ggml.model
    pre: str  # the pre-tokenizer (tokenizer.ggml.pre, or llama.cpp's default)
    add_bos: bool  # llama_vocab_get_add_bos: tokenize(add_special=true) puts BOS first
    add_eos: bool
    bos: int  # -1 when the vocabulary has none
    eos: int
    bos_text: str  # the token's text (common_token_to_piece with special=true), "" if none
    eos_text: str
    n_tokens: int


def tokenizer_state() -> str | None:
    """None when the tokenizer is built, else the one-line reason it is not."""
    return build.state(RECIPE)


def shipped_vocabularies() -> dict[str, Path]:
    """The sdist's vocabulary-only GGUFs by name (`llama-bpe`, `qwen2`, …); empty when the
    tokenizer is not built (`gotmpl2jinja engines install` copies them)."""
    folder = build.data_dir(RECIPE)
    if folder is None:
        return {}
    prefix, suffix = "ggml-vocab-", ".gguf"
    return {path.name[len(prefix):-len(suffix)]: path
            for path in sorted(folder.glob(f"{prefix}*{suffix}"))}


class _Driver(CppEngine):
    """The tokenizer's driver process: the C++ engines' process handling (started on first
    use, restarted after a crash or a timeout, stopped at exit) with the tokenizer's requests."""

    def __init__(self) -> None:
        super().__init__(RECIPE, server=False)
        self.name = "llama.cpp tokenizer"

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request; loading a 262k-token vocabulary takes seconds on a busy machine, so the
        limit is TOKENIZER_TIMEOUT, not the render limit (a hung driver still ends)."""
        with self._lock:
            self._next_id += 1
            return self._exchange({"id": self._next_id, **request}, limit=TOKENIZER_TIMEOUT)


_DRIVER: _Driver | None = None
_DRIVER_LOCK = threading.Lock()


def _driver() -> _Driver:
    global _DRIVER
    with _DRIVER_LOCK:
        if _DRIVER is None:
            if tokenizer_state() is not None:
                raise EngineError(f"llama.cpp's tokenizer is {tokenizer_state()}")
            _DRIVER = _Driver()
        return _DRIVER


class Vocabulary:
    """One GGUF's vocabulary, tokenized by llama.cpp's own code."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise VocabularyError(f"{self.path}: no such file")
        self._key = str(self.path.resolve())
        answer = self._ask({"op": "facts"})
        self.facts = VocabFacts(**answer["facts"])
        if self.facts.n_tokens == 0:
            raise VocabularyError(f"{self.path}: the GGUF has no tokenizer (no vocabulary)")
        self._pieces: dict[int, str] = {}

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = _driver().ask({"gguf": self._key, **request})
        except EngineTimeout:
            raise VocabularyError(f"{self.path}: llama.cpp's tokenizer did not answer within "
                                  f"{TOKENIZER_TIMEOUT:g} s") from None
        except RenderError as exc:  # the driver died on this file
            raise VocabularyError(f"{self.path}: llama.cpp could not read a vocabulary from "
                                  f"it ({exc})") from None
        if "error" in answer:
            why = (str(answer["error"]).strip().splitlines()[-1:] or ["no reason given"])[0]
            if why.endswith(": tokenizer.ggml.model"):
                raise VocabularyError(f"{self.path}: the GGUF has no tokenizer (llama.cpp: "
                                      f"{why})")
            raise VocabularyError(f"{self.path}: not a GGUF llama.cpp can load a vocabulary "
                                  f"from ({why})")
        return answer

    def tokenize(self, texts: list[str], *, add_special: bool, parse_special: bool = True
                 ) -> list[list[int]]:
        """llama_tokenize on each text (Ollama: add_special and parse_special both true)."""
        if not texts:
            return []
        answer = self._ask({"op": "tokenize", "texts": texts, "add_special": add_special,
                            "parse_special": parse_special})
        return [list(ids) for ids in answer["ids"]]

    def pieces(self, ids: list[int]) -> list[str]:
        """Each token's text (special tokens as their text; a byte token that is not UTF-8 on
        its own shows U+FFFD)."""
        missing = sorted({i for i in ids if i not in self._pieces})
        if missing:
            answer = self._ask({"op": "pieces", "ids": missing})
            self._pieces.update(zip(missing, answer["pieces"], strict=True))
        return [self._pieces[i] for i in ids]

    def known_special(self, texts: list[str]) -> list[bool]:
        """Whether each text is the text of one special (control or user-defined) token."""
        if not texts:
            return []
        return [bool(k) for k in self._ask({"op": "known", "texts": texts})["known"]]


_OPEN: dict[str, Vocabulary] = {}


def vocabulary(path: str | Path) -> Vocabulary:
    """The Vocabulary of `path`, loaded once per run."""
    key = str(Path(path).resolve())
    if key not in _OPEN:
        _OPEN[key] = Vocabulary(path)
    return _OPEN[key]

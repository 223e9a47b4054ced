"""A model's tokenizer facts that decide the prompt's first token: does Ollama's tokenizer add
BOS, and what are the BOS and EOS texts.

Why: Ollama tokenizes its rendered prompt with `add_special` (llama-server's /completion), so
the model sees BOS first whenever the vocabulary says so, while transformers and vLLM tokenize a
chat template's output without added specials: the template itself must write `bos_token`. The
translation writes it exactly when Ollama's tokenizer adds it (`emit.translator`).

The rule for "adds BOS" is llama.cpp's (`src/llama-vocab.cpp`, llama-cpp-python 0.3.36's
vendored copy): the metadata key `tokenizer.ggml.add_bos_token` when present, else a default by
vocabulary type (`tokenizer.ggml.model`) and, for BPE vocabularies, by pre-tokenizer
(`tokenizer.ggml.pre`); WordPiece (`bert`) always adds its first token, RWKV, PLaMo-2 and the
test vocabulary never do, and a Gemma 4 pre-tokenizer always does, whatever the key says.

The GGUF is read with a small reader of the metadata section (the format's value types, below):
`gguf.GGUFReader` builds every array element of a 262k-token vocabulary as numpy views, tens of
seconds a file; here only the keys are decoded and the token list is walked to the two ids. So
reading facts needs neither the `gguf` package nor numpy (the `gguf` extra is for writing one).

May depend on: `errors`, `ollama.reference.driver` (the cache directory).
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import tarfile
import tempfile
from dataclasses import dataclass, replace
from enum import IntEnum
from pathlib import Path
from typing import Any

from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.ollama.reference.driver import cache_dir

#: The first four bytes of a GGUF file, "GGUF", read as a little-endian uint32.
GGUF_MAGIC = 0x46554747


class GGUFValueType(IntEnum):
    """The value types of GGUF metadata (the format's numbering; `gguf.GGUFValueType` too)."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


class VocabError(Gotmpl2JinjaError):
    """A file that is not a GGUF or tokenizer_config.json with a tokenizer we can read."""


@dataclass(frozen=True)
class BosFacts:
    """What the translation needs to know about the model's tokenizer.

    `adds_bos`: Ollama's tokenizer puts BOS before the prompt (None: not known). `bos_token`,
    `eos_token`: their texts (None: not known). `source`: where the facts came from, for the
    header comment and messages. `rule`: how `adds_bos` was decided. `strips`: the literal
    text Ollama's server removes from the start of a prompt before tokenizing it (its
    `completionPrompt`: `<bos>` when it judges that the tokenizer adds BOS), None when none."""

    adds_bos: bool | None
    bos_token: str | None
    eos_token: str | None
    source: str
    rule: str = ""
    strips: str | None = None


#: BPE pre-tokenizers whose vocabularies add BOS by default (llama-vocab.cpp, llama_vocab::load).
BPE_PRE_ADDING_BOS = frozenset({
    "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
    "jina-v5-nano", "tekken", "chameleon"})
#: Pre-tokenizers llama.cpp forces to add BOS, whatever `add_bos_token` says (Gemma 4).
PRE_FORCING_BOS = frozenset({"gemma4", "granite-embed-multi-311m"})
#: Vocabulary type (tokenizer.ggml.model) → (adds BOS by default, default BOS id, default EOS id).
MODEL_DEFAULTS: dict[str, tuple[bool, int | None, int | None]] = {
    "llama": (True, 1, 2),          # SentencePiece
    "bert": (True, 101, None),      # WordPiece: always adds its first token
    "gpt2": (False, 11, 11),        # BPE: by pre-tokenizer
    "hybriddna": (False, 11, 11),
    "whitespace": (False, 11, 11),
    "t5": (False, None, 1),         # Unigram (adds EOS instead)
    "rwkv": (False, None, None),
    "test": (False, None, None),
    "plamo2": (False, 1, 2),
    "gemma4": (True, None, None),   # BPE with the gemma4 pre-tokenizer (forced)
}
#: Vocabulary types whose tokenizer ignores add_bos_token: bert always adds, these never do.
_ALWAYS = {"bert": True, "rwkv": False, "test": False, "plamo2": False}
#: Pre-tokenizers whose BOS id llama.cpp clears (GLM): no BOS unless the id key sets one.
_PRE_WITHOUT_BOS = frozenset({"chatglm-bpe", "glm4", "glm5"})

_BPE = frozenset({"gpt2", "hybriddna", "whitespace", "gemma4"})
_SCALARS = {
    GGUFValueType.UINT8: "B", GGUFValueType.INT8: "b", GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h", GGUFValueType.UINT32: "I", GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f", GGUFValueType.BOOL: "?", GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q", GGUFValueType.FLOAT64: "d",
}
_TOKENS_KEY = "tokenizer.ggml.tokens"


def llama_cpp_adds_bos(model: str, pre: str, key: bool | None) -> tuple[bool, str]:
    """llama.cpp's add_bos for a vocabulary, and the reason in words."""
    if model in _ALWAYS:
        return _ALWAYS[model], (f"llama.cpp's {model} tokenizer "
                                f"{'always adds' if _ALWAYS[model] else 'never adds'} BOS")
    bpe_pre = "gemma4" if model == "gemma4" else pre
    if model in _BPE and bpe_pre in PRE_FORCING_BOS:
        return True, f"llama.cpp forces BOS on for the {bpe_pre} pre-tokenizer"
    if key is not None:
        return key, f"tokenizer.ggml.add_bos_token = {'true' if key else 'false'}"
    if model in _BPE:
        adds = pre in BPE_PRE_ADDING_BOS
        return adds, (f"tokenizer.ggml.add_bos_token absent: llama.cpp's default for the BPE "
                      f"pre-tokenizer {pre or 'default'!r}")
    return MODEL_DEFAULTS[model][0], (f"tokenizer.ggml.add_bos_token absent: llama.cpp's "
                                      f"default for a {model!r} vocabulary")


def ollama_strips(model: str, pre: str, key: bool | None) -> str | None:
    """What Ollama's server (llm/llama_server.go completionPrompt, tokenizerAddsBOS) strips
    from the start of a Go template's prompt: `<bos>` when the pre-tokenizer is lfm2 or gemma4,
    the model gemma4, or add_bos_token is true (its own test, not llama.cpp's)."""
    if pre in ("lfm2", "gemma4") or model == "gemma4" or key is True:
        return "<bos>"
    return None


def facts_from_gguf(path: str | os.PathLike[str]) -> BosFacts:
    """The BOS facts of a GGUF model or vocabulary file (raises VocabError: one sentence)."""
    path = Path(path)
    name = str(path)
    metadata = _read_metadata(path)
    model = metadata.get("tokenizer.ggml.model")
    if not isinstance(model, str) or model in ("no_vocab", "none"):
        raise VocabError(f"{name} has no tokenizer (tokenizer.ggml.model is "
                         f"{'absent' if model is None else repr(model)})")
    if model not in MODEL_DEFAULTS:
        raise VocabError(f"{name} has a tokenizer llama.cpp does not know "
                         f"(tokenizer.ggml.model {model!r})")
    pre = metadata.get("tokenizer.ggml.pre", "")
    pre = pre if isinstance(pre, str) else ""
    key = metadata.get("tokenizer.ggml.add_bos_token")
    key = bool(key) if isinstance(key, bool) else None
    adds, rule = llama_cpp_adds_bos(model, pre, key)
    _, bos_id, eos_id = MODEL_DEFAULTS[model]
    if model in _BPE and pre in _PRE_WITHOUT_BOS:
        bos_id = None
    bos_id = _id(metadata, "tokenizer.ggml.bos_token_id", bos_id)
    eos_id = _id(metadata, "tokenizer.ggml.eos_token_id", eos_id)
    tokens = metadata.get(_TOKENS_KEY)
    if not isinstance(tokens, _TokenList):
        raise VocabError(f"{name} has no tokenizer (no {_TOKENS_KEY} list)")
    bos, eos = tokens.texts(bos_id, eos_id)
    if adds and bos is None:
        raise VocabError(f"{name}: its tokenizer adds BOS but has no BOS token "
                         f"(tokenizer.ggml.bos_token_id {bos_id})")
    return BosFacts(adds_bos=adds, bos_token=bos, eos_token=eos, source=path.name, rule=rule,
                    strips=ollama_strips(model, pre, key))


def facts_from_tokenizer_config(path: str | os.PathLike[str]) -> BosFacts:
    """The BOS facts a Hugging Face tokenizer_config.json states: `add_bos_token` (what
    llama.cpp's converter writes as tokenizer.ggml.add_bos_token; absent: not known here),
    `bos_token` and `eos_token` (a string or an AddedToken object)."""
    path = Path(path)
    try:
        config = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise VocabError(f"{path}: no such file") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise VocabError(f"{path} is not a readable tokenizer_config.json ({exc})") from None
    if not isinstance(config, dict):
        raise VocabError(f"{path} is not a tokenizer_config.json (not a JSON object)")
    adds = config.get("add_bos_token")
    adds = adds if isinstance(adds, bool) else None
    rule = (f"add_bos_token = {'true' if adds else 'false'}" if adds is not None
            else "add_bos_token absent")
    return BosFacts(adds_bos=adds, bos_token=_token_text(config.get("bos_token")),
                    eos_token=_token_text(config.get("eos_token")), source=path.name,
                    rule=rule)


def explicit_facts(adds_bos: bool, base: BosFacts | None = None) -> BosFacts:
    """--bos/--no-bos: the user's word on adds_bos, texts kept from `base` when given."""
    flag = "--bos" if adds_bos else "--no-bos"
    if base is None:
        return BosFacts(adds_bos=adds_bos, bos_token=None, eos_token=None, source=flag,
                        rule=flag)
    return BosFacts(adds_bos=adds_bos, bos_token=base.bos_token, eos_token=base.eos_token,
                    source=f"{base.source} and {flag}", rule=flag, strips=base.strips)


def resolve_facts(*, gguf: Path | None = None, model_path: Path | None = None,
                  tokenizer_config: Path | None = None, bos: bool | None = None,
                  warnings: list[str] | None = None, model: str = "the installed model"
                  ) -> BosFacts | None:
    """The facts `convert` uses: from `gguf` (--gguf), else the installed model's GGUF layer
    (`model_path`, ollama:NAME), else `tokenizer_config`; `bos` (--bos/--no-bos) has the last
    word on adds_bos. A model layer that is not a readable GGUF (an MLX model…) adds a warning
    to `warnings` instead of failing: the flags can still decide. `model` names the model
    whose layer it is (a store blob's name says nothing); a Modelfile's FROM file is named."""
    found: BosFacts | None = None
    if gguf is not None:
        found = facts_from_gguf(gguf)
    elif model_path is not None:
        try:
            found = facts_from_gguf(model_path)
            if model_path.name.startswith("sha256-"):  # a store blob: name the model instead
                found = replace(found, source=f"{model}'s GGUF")
        except VocabError as exc:
            if warnings is not None:
                warnings.append(f"the installed model's tokenizer facts are not readable: {exc}")
    elif tokenizer_config is not None:
        found = facts_from_tokenizer_config(tokenizer_config)
    if bos is not None:
        return explicit_facts(bos, found)
    return found


def undecided_line(facts: BosFacts | None) -> str | None:
    """The one line saying BOS was not decided (None when it was)."""
    if facts is not None and facts.adds_bos is not None:
        return None
    known = f" ({facts.source}: {facts.rule})" if facts is not None else ""
    return (f"BOS not decided{known}: the Jinja does not write bos_token; --gguf MODEL.gguf, "
            "--tokenizer-config FILE or --bos/--no-bos decides whether Ollama's tokenizer adds "
            "it")


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _id(metadata: dict[str, Any], key: str, default: int | None) -> int | None:
    value = metadata.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


# ---------------------------------------------------------------------------------------------
# Reading a GGUF's metadata


class _TokenList:
    """tokenizer.ggml.tokens, left in the file: texts are decoded only for the ids asked."""

    def __init__(self, data: mmap.mmap, offset: int, count: int, order: str) -> None:
        self.data, self.offset, self.count, self.order = data, offset, count, order

    def texts(self, *ids: int | None) -> list[str | None]:
        wanted = {i for i in ids if i is not None and 0 <= i < self.count}
        found: dict[int, str] = {}
        at = self.offset
        for index in range(max(wanted, default=-1) + 1):
            (size,) = struct.unpack_from(self.order + "Q", self.data, at)
            if index in wanted:
                found[index] = self.data[at + 8:at + 8 + size].decode("utf-8", "replace")
            at += 8 + size
        return [found.get(i) if i is not None else None for i in ids]


def _read_metadata(path: Path) -> dict[str, Any]:
    """The key/value section of a GGUF file (arrays other than the token list are skipped)."""
    try:
        with path.open("rb") as handle:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise VocabError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: an empty file cannot be mapped
        raise VocabError(f"{path} is not a GGUF file ({exc})") from None
    try:
        return _parse(data)
    except (struct.error, IndexError):
        raise VocabError(f"{path} is not a readable GGUF file (it ends inside its "
                         "metadata)") from None
    except (ValueError, KeyError) as exc:
        raise VocabError(f"{path} is not a readable GGUF file ({exc})") from None


def _parse(data: mmap.mmap) -> dict[str, Any]:
    if len(data) < 4 or struct.unpack_from("<I", data, 0)[0] != GGUF_MAGIC:
        raise ValueError("it does not start with GGUF")
    order = "<"
    version = struct.unpack_from("<I", data, 4)[0]
    if version & 0xFFFF == 0:  # written big-endian
        order, version = ">", struct.unpack_from(">I", data, 4)[0]
    if version < 2:
        raise ValueError(f"GGUF version {version} is too old")
    kv_count = struct.unpack_from(order + "Q", data, 16)[0]
    at = 24
    metadata: dict[str, Any] = {}

    def string(at: int) -> tuple[str, int]:
        (size,) = struct.unpack_from(order + "Q", data, at)
        if at + 8 + size > len(data):
            raise ValueError("a string runs past the end of the file")
        return data[at + 8:at + 8 + size].decode("utf-8", "replace"), at + 8 + size

    def skip(kind: int, at: int) -> int:
        if kind == GGUFValueType.STRING:
            return string(at)[1]
        if kind == GGUFValueType.ARRAY:
            item, count = struct.unpack_from(order + "IQ", data, at)
            at += 12
            if item in _SCALARS:
                return at + count * struct.calcsize(_SCALARS[GGUFValueType(item)])
            for _ in range(count):
                at = skip(item, at)
            return at
        return at + struct.calcsize(_SCALARS[GGUFValueType(kind)])

    for _ in range(kv_count):
        key, at = string(at)
        (kind,) = struct.unpack_from(order + "I", data, at)
        at += 4
        if kind in _SCALARS:
            (metadata[key],) = struct.unpack_from(order + _SCALARS[GGUFValueType(kind)], data, at)
        elif kind == GGUFValueType.STRING:
            metadata[key] = string(at)[0]
        elif kind == GGUFValueType.ARRAY and key == _TOKENS_KEY:
            item, count = struct.unpack_from(order + "IQ", data, at)
            if item == GGUFValueType.STRING:
                metadata[key] = _TokenList(data, at + 12, count, order)
        elif kind != GGUFValueType.ARRAY:
            raise ValueError(f"unknown value type {kind} for {key}")
        if at > len(data):
            raise IndexError(key)
        at = skip(kind, at)
    return metadata


# ---------------------------------------------------------------------------------------------
# The vocabularies llama.cpp ships


#: The llama-cpp-python sdist whose `vendor/llama.cpp/models/ggml-vocab-*.gguf` are used.
SDIST_VERSION = "0.3.36"


def shipped_vocab(name: str) -> Path | None:
    """`ggml-vocab-NAME.gguf` from the cached llama-cpp-python sdist (`engines install` fetches
    it), extracted once into the cache; None when the sdist is not there (never downloaded)."""
    root = cache_dir()
    target = root / "vocab" / SDIST_VERSION / f"ggml-vocab-{name}.gguf"
    if target.is_file():
        return target
    tarball = root / "sdist" / f"llama_cpp_python-{SDIST_VERSION}.tar.gz"
    if not tarball.is_file():
        return None
    member = (f"llama_cpp_python-{SDIST_VERSION}/vendor/llama.cpp/models/"
              f"ggml-vocab-{name}.gguf")
    with tarfile.open(tarball) as archive:
        try:
            source = archive.extractfile(member)
        except KeyError:
            return None
        if source is None:
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(1 << 20):
                out.write(chunk)
    os.replace(tmp, target)
    return target

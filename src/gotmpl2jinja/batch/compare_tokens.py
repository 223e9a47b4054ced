"""The BOS / EOS tokens passed to the Jinja side: from a tokenizer_config.json, a corpus
entry's meta.json, or the entry's family; and the family's vocabulary among those llama.cpp
ships, whose BOS rule says what Ollama's tokenizer puts before the prompt.

May depend on: errors, ollama.vocab.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.ollama.vocab import BosFacts, facts_from_gguf, shipped_vocab

# --------------------------------------------------------------------------------------------
# BOS / EOS tokens


def tokens_from_tokenizer_config(path: Path) -> tuple[str, str]:
    """`bos_token` / `eos_token` of a tokenizer_config.json (string or {"content": …} form)."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise Gotmpl2JinjaError(f"not JSON: {exc.msg}", name=str(path), line=exc.lineno,
                                col=exc.colno) from None
    except ValueError as exc:  # not UTF-8, or an integer of more than 4300 digits
        raise Gotmpl2JinjaError(f"{path}: not JSON this tool can read ({exc})") from None
    except RecursionError:
        raise Gotmpl2JinjaError(f"{path}: the JSON nests too deeply") from None
    if not isinstance(config, dict):
        raise Gotmpl2JinjaError(f"{path}: expected a JSON object")

    def token(key: str) -> str:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        return value if isinstance(value, str) else ""

    return token("bos_token"), token("eos_token")


#: Families by a special token their templates use (or the model name) → (BOS, EOS) of the
#: family's tokenizer. The corpus's meta.json lists no BOS/EOS, so these are the families'
#: published tokenizer_config.json values as we know them — assumed, not checkable offline —
#: stated here and shown per entry in docs/compare.md rather than guessed silently.
#: First match wins; no match → no BOS/EOS ("").
FAMILY_TOKENS: tuple[tuple[str, str, str], ...] = (
    # models whose special tokens do not tell their tokenizer apart, by name
    ("library/hermes3:", "<|begin_of_text|>", "<|im_end|>"),
    ("library/nous-hermes2-mixtral:", "<s>", "<|im_end|>"),
    ("library/internlm2:", "<s>", "</s>"),
    ("library/olmo2:", "<|endoftext|>", "<|endoftext|>"),
    ("library/tulu3:", "<|begin_of_text|>", "<|end_of_text|>"),
    ("<|EOT|>", "<｜begin▁of▁sentence｜>", "<|EOT|>"),
    ("<|end_of_turn|>", "<s>", "<|end_of_turn|>"),
    ("<｜end▁of▁sentence｜>", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("<|header_start|>", "<|begin_of_text|>", "<|eot|>"),
    ("<|start_header_id|>", "<|begin_of_text|>", "<|eot_id|>"),
    ("<|start_of_role|>", "<|end_of_text|>", "<|end_of_text|>"),
    ("<|START_OF_TURN_TOKEN|>", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    ("<start_of_turn>", "<bos>", "<eos>"),
    ("[INST]", "<s>", "</s>"),
    ("<|end|>", "<s>", "<|endoftext|>"),
    ("<|user|>", "<s>", "</s>"),
    ("<|im_start|>", "", "<|im_end|>"),
)


def tokens_for_entry(meta: dict[str, Any], ollama_template: str, jinja: str) -> tuple[str, str]:
    """BOS/EOS for a corpus entry: meta.json's own when present, else `FAMILY_TOKENS`."""
    bos, eos = meta.get("bos_token"), meta.get("eos_token")
    if isinstance(bos, str) or isinstance(eos, str):
        return (bos if isinstance(bos, str) else "", eos if isinstance(eos, str) else "")
    evidence = "\n".join([str(meta.get("model", "")), *(meta.get("tokens") or []),
                          ollama_template, jinja])
    for marker, family_bos, family_eos in FAMILY_TOKENS:
        if marker in evidence:
            return family_bos, family_eos
    return "", ""


#: Families → the vocabulary-only GGUF llama.cpp ships for them (`ggml-vocab-NAME.gguf` in the
#: llama-cpp-python sdist): its BOS text and llama.cpp's "adds BOS" rule are used (its EOS is
#: the base tokenizer's, so the family's EOS above stays). Keyed by the `FAMILY_TOKENS` marker
#: that chose the entry's family, so both tables agree; ChatML models by name (Qwen's only).
FAMILY_VOCABS: dict[str, str] = {
    "library/hermes3:": "llama-bpe",
    "library/tulu3:": "llama-bpe",
    "library/nous-hermes2-mixtral:": "llama-spm",
    "<|EOT|>": "deepseek-coder",
    "<|end_of_turn|>": "llama-spm",
    "<｜end▁of▁sentence｜>": "deepseek-llm",
    "<|start_header_id|>": "llama-bpe",
    "<|START_OF_TURN_TOKEN|>": "command-r",
    "<start_of_turn>": "gemma-4",
    "[INST]": "llama-spm",
    "<|end|>": "phi-3",
}
#: ChatML models (marker `<|im_start|>`) whose vocabulary is shipped, by model name.
CHATML_VOCABS: tuple[tuple[str, str], ...] = (("library/qwen", "qwen2"), ("library/qwq:", "qwen2"))


def vocab_for_entry(meta: dict[str, Any], ollama_template: str, jinja: str) -> str | None:
    """The shipped vocabulary of a corpus entry's family, None if none (or meta.json names
    its own tokens: then no family is assumed)."""
    if isinstance(meta.get("bos_token"), str) or isinstance(meta.get("eos_token"), str):
        return None
    evidence = "\n".join([str(meta.get("model", "")), *(meta.get("tokens") or []),
                          ollama_template, jinja])
    marker = next((m for m, _, _ in FAMILY_TOKENS if m in evidence), None)
    if marker == "<|im_start|>":
        model = str(meta.get("model", ""))
        return next((v for prefix, v in CHATML_VOCABS if model.startswith(prefix)), None)
    return FAMILY_VOCABS.get(marker) if marker is not None else None


def vocab_facts(name: str | None) -> BosFacts | None:
    """The BOS facts of shipped vocabulary `name`, None when it is not cached (the sdist)."""
    path = shipped_vocab(name) if name else None
    return facts_from_gguf(path) if path is not None else None

"""The BOS / EOS tokens passed to the Jinja side: from a tokenizer_config.json, a corpus
entry's meta.json, or the entry's family.

May depend on: errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gotmpl2jinja.errors import Gotmpl2JinjaError

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

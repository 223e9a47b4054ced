"""Output writers on real files: a GGUF made with the gguf package, an HF tokenizer_config.json,
LM Studio's config shape (seed 000), plain .jinja; never overwriting without force."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFReader, GGUFValueType, GGUFWriter

from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.formats.writers import lmstudio_config, write_output

JINJA = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}  é ✓\n"
)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_gguf(
    path: Path, *, chat_template: str | None = None, alignment: int | None = None,
) -> None:
    writer = GGUFWriter(path, "llama")
    if alignment is not None:
        writer.add_custom_alignment(alignment)
    writer.add_name("tiny")
    writer.add_uint32("llama.context_length", 128)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    writer.add_array("tokenizer.ggml.tokens", ["<s>", "</s>", "hi"])
    writer.add_float32("llama.rope.freq_base", 10000.0)
    writer.add_tensor("token_embd.weight", np.arange(24, dtype=np.float32).reshape(3, 8))
    writer.add_tensor("output.weight", np.arange(5, dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def kv_values(reader: GGUFReader) -> dict[str, object]:
    values: dict[str, object] = {}
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue
        values[field.name] = field.contents()
    return values


def tensors(reader: GGUFReader) -> dict[str, tuple[int, bytes]]:
    return {t.name: (int(t.tensor_type), bytes(t.data.tobytes())) for t in reader.tensors}


@pytest.mark.parametrize("existing", [None, "{{ old }}"])
@pytest.mark.parametrize("alignment", [None, 64])
def test_gguf_copy_sets_chat_template_and_keeps_everything_else(
    tmp_path: Path, existing: str | None, alignment: int | None,
) -> None:
    source = tmp_path / "tiny.gguf"
    make_gguf(source, chat_template=existing, alignment=alignment)
    before = sha(source)
    out = write_output(JINJA, "gguf", tmp_path / "out.gguf", gguf_source=source)

    assert sha(source) == before  # the input is never changed
    old, new = GGUFReader(source), GGUFReader(out)
    assert new.fields["tokenizer.chat_template"].contents() == JINJA
    old_kv, new_kv = kv_values(old), kv_values(new)
    old_kv.pop("tokenizer.chat_template", None)
    new_kv.pop("tokenizer.chat_template")
    assert new_kv == old_kv
    old_keys = [k for k in old.fields if not k.startswith("GGUF.")]
    new_keys = [k for k in new.fields if not k.startswith("GGUF.")]
    if existing is None:
        assert new_keys == [*old_keys, "tokenizer.chat_template"]
    else:
        assert new_keys == old_keys  # replaced where it was
    assert tensors(new) == tensors(old)
    assert new.data_offset % (alignment or 32) == 0
    assert new_kv["llama.context_length"] == 128
    assert new_kv["tokenizer.ggml.tokens"] == ["<s>", "</s>", "hi"]


def test_gguf_never_overwrites_without_force_nor_the_source(tmp_path: Path) -> None:
    source = tmp_path / "tiny.gguf"
    make_gguf(source)
    before = sha(source)
    out = tmp_path / "out.gguf"
    out.write_bytes(b"keep me")
    with pytest.raises(Gotmpl2JinjaError, match="already exists"):
        write_output(JINJA, "gguf", out, gguf_source=source)
    assert out.read_bytes() == b"keep me"
    write_output(JINJA, "gguf", out, gguf_source=source, force=True)
    assert GGUFReader(out).fields["tokenizer.chat_template"].contents() == JINJA
    with pytest.raises(Gotmpl2JinjaError, match="refusing to write over the GGUF source"):
        write_output(JINJA, "gguf", source, gguf_source=source, force=True)
    assert sha(source) == before


def test_gguf_errors_are_sentences(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf at all, sorry")
    with pytest.raises(Gotmpl2JinjaError, match="not a readable GGUF file"):
        write_output(JINJA, "gguf", tmp_path / "o.gguf", gguf_source=bogus)
    with pytest.raises(Gotmpl2JinjaError, match="needs the GGUF file"):
        write_output(JINJA, "gguf", tmp_path / "o.gguf")
    assert list(tmp_path.glob(".*tmp")) == []


def test_hf_existing_config_keeps_other_keys_and_order(tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    original = {
        "add_bos_token": False,
        "added_tokens_decoder": {"151643": {"content": "<|endoftext|>", "special": True}},
        "chat_template": "{{ old }}",
        "eos_token": "<|im_end|>",
        "model_max_length": 131072,
        "clean_up_tokenization_spaces": False,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
        "note": "ünïcödé",
    }
    config.write_text(json.dumps(original, indent=2))
    with pytest.raises(Gotmpl2JinjaError, match="already exists"):
        write_output(JINJA, "hf", config)
    assert json.loads(config.read_text()) == original

    write_output(JINJA, "hf", tmp_path, force=True)  # a directory means its tokenizer_config
    text = config.read_text(encoding="utf-8")
    updated = json.loads(text)
    assert list(updated) == list(original)
    assert updated == {**original, "chat_template": JINJA}
    assert text.endswith("}\n") and '"note": "ünïcödé"' in text and '\n  "eos_token"' in text


def test_hf_new_config_and_named_templates(tmp_path: Path) -> None:
    out = write_output(JINJA, "hf", tmp_path / "new.json")
    assert json.loads(out.read_text()) == {"chat_template": JINJA}
    named = tmp_path / "named.json"
    named.write_text(json.dumps({"chat_template": [
        {"name": "default", "template": "x"}, {"name": "tool_use", "template": "y"}]}))
    write_output(JINJA, "hf", named, force=True)
    assert json.loads(named.read_text())["chat_template"] == [
        {"name": "default", "template": JINJA}, {"name": "tool_use", "template": "y"}]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(Gotmpl2JinjaError, match="not valid JSON"):
        write_output(JINJA, "hf", broken, force=True)
    assert broken.read_text() == "{not json"


SEED_000 = {  # keys and nesting of /work/shared/seeds/000 (an LM Studio model config)
    "type": "manual",
    "jinjaPromptTemplate": {"template": "…"},
    "stopStrings": [],
}


def shape(value: object) -> object:
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    return type(value).__name__


def test_lmstudio_config_has_the_seed_shape(tmp_path: Path) -> None:
    out = write_output(JINJA, "lmstudio", tmp_path / "qwen.json", stop=["<|im_end|>", "</s>"])
    text = out.read_text(encoding="utf-8")
    config = json.loads(text)
    assert shape(config) == shape(SEED_000)
    assert list(config) == ["type", "jinjaPromptTemplate", "stopStrings"]
    assert config["type"] == "manual"
    assert config["jinjaPromptTemplate"]["template"] == JINJA
    assert config["stopStrings"] == ["<|im_end|>", "</s>"]
    assert text.startswith('{\n  "type": "manual",\n  "jinjaPromptTemplate": {\n    "template": ')
    assert json.loads(lmstudio_config("t", []))["stopStrings"] == []


def test_jinja_is_written_byte_for_byte(tmp_path: Path) -> None:
    out = write_output(JINJA, "jinja", tmp_path)
    assert out == tmp_path / "chat_template.jinja"
    assert out.read_bytes() == JINJA.encode("utf-8")
    with pytest.raises(Gotmpl2JinjaError, match="already exists"):
        write_output("other", "jinja", out)
    write_output("other", "jinja", out, force=True)
    assert out.read_bytes() == b"other"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat_template.jinja"]


def test_unknown_format_and_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(Gotmpl2JinjaError, match="unknown output format"):
        write_output(JINJA, "yaml", tmp_path / "x")
    with pytest.raises(Gotmpl2JinjaError, match="does not exist"):
        write_output(JINJA, "jinja", tmp_path / "no" / "such" / "x.jinja")


def test_gguf_string_array_types_survive(tmp_path: Path) -> None:
    source = tmp_path / "tiny.gguf"
    make_gguf(source)
    out = write_output(JINJA, "gguf", tmp_path / "o.gguf", gguf_source=source)
    field = GGUFReader(out).fields["tokenizer.ggml.tokens"]
    assert field.types == [GGUFValueType.ARRAY, GGUFValueType.STRING]

"""BOS facts: llama.cpp's rule for "adds BOS" read from a GGUF (small files written here with
the gguf package, and the vocabularies llama.cpp ships, from the cached llama-cpp-python sdist),
the translation writing `bos_token` first exactly when Ollama's tokenizer adds it, and convert's
options and outputs.

Expected values are written by hand: llama.cpp's rule from `src/llama-vocab.cpp` (0.3.36's
vendored copy, `llama_vocab::impl::load`), the Go prompts from reading the templates (and Go's
renderer agreeing), the BOS texts from the vocabularies' token lists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from gguf import GGUFWriter

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit.translator import translate
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.ollama.vocab import (
    BosFacts,
    VocabError,
    facts_from_gguf,
    facts_from_tokenizer_config,
    resolve_facts,
    shipped_vocab,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SEED = FIXTURES / "seeds" / "002_qwen-style.gotmpl"
GOLDEN = FIXTURES / "golden" / "002_qwen-style.jinja"
ENTRIES = FIXTURES / "corpus" / "huggingface__huggingface.js" / "entries"
CHATML = FIXTURES / "corpus" / "ollama" / "template" / "chatml.gotmpl"

TOKENS = ["<unk>", "<s>", "</s>", "hi", "<bos>"]


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def make_vocab(path: Path, model: str | None, *, pre: str | None = None,
               add_bos: bool | None = None, bos_id: int | None = None) -> Path:
    """A vocabulary-only GGUF, as llama.cpp's `ggml-vocab-*.gguf` are."""
    writer = GGUFWriter(path, "llama")
    if model is not None:
        writer.add_tokenizer_model(model)
    if pre is not None:
        writer.add_tokenizer_pre(pre)
    writer.add_token_list(TOKENS)
    if bos_id is not None:
        writer.add_bos_token_id(bos_id)
    writer.add_eos_token_id(2)
    if add_bos is not None:
        writer.add_add_bos_token(add_bos)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


# ---------------------------------------------------------------------------------------------
# llama.cpp's rule


@pytest.mark.parametrize(("model", "pre", "key", "adds"), [
    ("llama", None, None, True),           # SentencePiece: adds by default
    ("llama", None, False, False),         # … unless the key says not
    ("gpt2", "qwen2", None, False),        # BPE: by pre-tokenizer; qwen2 does not
    ("gpt2", "llama-bpe", None, True),     # Llama 3 does
    ("gpt2", "tekken", None, True),        # Mistral's Tekken does
    ("gpt2", None, None, False),           # no pre-tokenizer: 'default', does not
    ("gpt2", "qwen2", True, True),         # the key wins over the default
    ("gpt2", "gemma4", False, True),       # Gemma 4: forced on whatever the key says
    ("gemma4", None, False, True),         # the gemma4 tokenizer model is that pre-tokenizer
    ("bert", None, False, True),           # WordPiece always adds its first token
    ("t5", None, None, False),             # Unigram: no BOS by default
    ("rwkv", None, True, False),           # RWKV never adds one
])
def test_adds_bos_follows_llama_cpp(tmp_path: Path, model: str, pre: str | None,
                                    key: bool | None, adds: bool) -> None:
    facts = facts_from_gguf(make_vocab(tmp_path / "v.gguf", model, pre=pre, add_bos=key,
                                       bos_id=1))
    assert facts.adds_bos is adds
    assert facts.source == "v.gguf"


def test_token_texts_come_from_the_ids_or_llama_cpps_defaults(tmp_path: Path) -> None:
    explicit = facts_from_gguf(make_vocab(tmp_path / "a.gguf", "llama", bos_id=4))
    assert (explicit.bos_token, explicit.eos_token) == ("<bos>", "</s>")
    default = facts_from_gguf(make_vocab(tmp_path / "b.gguf", "llama"))  # SPM: BOS id 1
    assert default.bos_token == "<s>"


@pytest.mark.parametrize(("data", "says"), [
    (b"", r"is not a GGUF file \(cannot mmap an empty file\)$"),
    (b"PK\x03\x04 a zip file, not a model", r"is not a readable GGUF file \(it does not start "
                                             r"with GGUF\)$"),
    (b"GGUF\x03\x00\x00\x00fake weights", r"is not a readable GGUF file \(it ends inside its "
                                         r"metadata\)$"),
])
def test_a_file_that_is_not_a_gguf_is_one_sentence(tmp_path: Path, data: bytes,
                                                   says: str) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(data)
    with pytest.raises(VocabError, match=f"^{path} {says}"):
        facts_from_gguf(path)


def test_a_gguf_without_a_tokenizer_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(VocabError, match=r"v.gguf has no tokenizer \(tokenizer.ggml.model is "
                                         r"absent\)$"):
        facts_from_gguf(make_vocab(tmp_path / "v.gguf", None))


def test_tokenizer_config_gives_what_it_states(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps({"add_bos_token": True, "eos_token": "</s>",
                                "bos_token": {"content": "<s>", "lstrip": False}}))
    facts = facts_from_tokenizer_config(path)
    assert (facts.adds_bos, facts.bos_token, facts.eos_token) == (True, "<s>", "</s>")
    path.write_text(json.dumps({"bos_token": "<s>"}))
    assert facts_from_tokenizer_config(path).adds_bos is None  # not stated: not decided


def test_explicit_flag_has_the_last_word(tmp_path: Path) -> None:
    vocab = make_vocab(tmp_path / "v.gguf", "llama", bos_id=1)
    facts = resolve_facts(gguf=vocab, bos=False)
    assert facts is not None
    assert (facts.adds_bos, facts.bos_token) == (False, "<s>")


# The vocabularies llama.cpp ships (read from the cached sdist, never downloaded by a test).
SHIPPED = [
    ("llama-bpe", True, "<|begin_of_text|>", "<|end_of_text|>"),
    ("llama-spm", True, "<s>", "</s>"),
    ("gemma-4", True, "<bos>", "<eos>"),
    ("phi-3", True, "<s>", "<|endoftext|>"),
    ("qwen2", False, "<|endoftext|>", "<|endoftext|>"),
    ("deepseek-llm", True, "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("command-r", True, "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
]


def vocab_or_skip(name: str) -> Path:
    path = shipped_vocab(name)
    if path is None:
        pytest.skip("the llama-cpp-python sdist is not cached (gotmpl2jinja engines install)")
    return path


@pytest.mark.parametrize(("name", "adds", "bos", "eos"), SHIPPED, ids=[s[0] for s in SHIPPED])
def test_shipped_vocabularies(name: str, adds: bool, bos: str, eos: str) -> None:
    facts = facts_from_gguf(vocab_or_skip(name))
    assert (facts.adds_bos, facts.bos_token, facts.eos_token) == (adds, bos, eos)


# ---------------------------------------------------------------------------------------------
# The translation


ADDS = BosFacts(adds_bos=True, bos_token="<s>", eos_token="</s>", source="m.gguf",
                rule="tokenizer.ggml.add_bos_token = true")


def test_bos_token_is_written_first_and_nothing_else_changes() -> None:
    source = CHATML.read_text()
    plain = translate(source, name="chatml.gotmpl")
    with_bos = translate(source, name="chatml.gotmpl", bos=ADDS)
    header_end = plain.index("#}")
    head = plain[:header_end].rstrip(" ")
    assert with_bos.startswith(head + "\n    BOS: ")
    note, rest = with_bos[len(head):].split("#}", 1)
    assert " ".join(note.split()) == (
        "BOS: bos_token is written first, as Ollama's tokenizer adds <s> before the prompt "
        "(tokenizer.ggml.add_bos_token = true; from m.gguf).")
    assert rest == "\n{{- bos_token }}" + plain[header_end + 2:]


def test_no_bos_changes_nothing() -> None:
    source = CHATML.read_text()
    facts = BosFacts(adds_bos=False, bos_token="<s>", eos_token=None, source="m.gguf")
    assert translate(source, bos=facts) == translate(source)


def test_the_seed_is_byte_for_byte_the_same_with_qwen2s_vocabulary() -> None:
    facts = facts_from_gguf(vocab_or_skip("qwen2"))
    jinja = translate(SEED.read_text(), name=SEED.name, bos=facts)
    assert jinja == translate(SEED.read_text(), name=SEED.name)
    assert jinja.encode() == GOLDEN.read_bytes()


def test_a_template_that_writes_the_bos_text_keeps_it_after_bos_token() -> None:
    from jinja2 import Environment

    jinja = translate("<s>{{ range .Messages }}{{ .Content }}{{ end }}", bos=ADDS)
    rendered = Environment().from_string(jinja).render(
        messages=[{"role": "user", "content": "hi"}], bos_token="<s>")
    assert rendered == "<s><s>hi"  # Ollama: BOS added, then the template's own <s>: two


def test_a_leading_bos_text_ollama_strips_is_refused() -> None:
    facts = BosFacts(adds_bos=True, bos_token="<bos>", eos_token=None, source="g.gguf",
                     strips="<bos>")
    with pytest.raises(TranslationError, match="Ollama's server cuts off") as info:
        translate("<bos>{{ .Prompt }}", name="t", bos=facts)
    assert (info.value.line, info.value.col) == (1, 1)


FAMILIES = [  # entry, its vocabulary, Ollama's prompt for CONVERSATION (read off the template)
    ("047__library_llama3.1_8b", "llama-bpe", "<|begin_of_text|>",
     "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\n"),
    ("028__library_gemma3_1b", "gemma-4", "<bos>",
     "<start_of_turn>user\nBe brief.<end_of_turn>\n"
     "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"),
    ("058__library_mistral_7b-instruct-fp16", "llama-spm", "<s>", "[INST] Be brief. Hi [/INST]\n"),
    ("069__library_phi3_3.8b", "phi-3", "<s>",
     "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n"),
    ("078__library_qwen2.5_0.5b", "qwen2", "",  # Qwen's vocabulary adds no BOS
     "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
     "<|im_start|>assistant\n"),
]
CONVERSATION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]


@pytest.mark.parametrize(("entry", "vocab", "bos", "prompt"), FAMILIES,
                         ids=[f[1] for f in FAMILIES])
def test_family_renders_bos_then_ollamas_prompt_as_transformers_renders_it(
        entry: str, vocab: str, bos: str, prompt: str) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    from gotmpl2jinja.ollama.reference import render

    facts = facts_from_gguf(vocab_or_skip(vocab))
    source = (ENTRIES / entry / "template.gotmpl").read_text()
    assert render(source, {"messages": CONVERSATION}) == prompt  # Go agrees with the reading
    jinja = translate(source, name="template.gotmpl", bos=facts)
    rendered, _ = render_jinja_template([CONVERSATION], chat_template=jinja,
                                        add_generation_prompt=True,
                                        bos_token=facts.bos_token, eos_token=facts.eos_token)
    assert rendered[0] == bos + prompt  # BOS is what Ollama's tokenizer adds before its prompt
    assert (jinja == translate(source, name="template.gotmpl")) is (bos == "")


# ---------------------------------------------------------------------------------------------
# convert


def test_convert_without_facts_says_bos_was_not_decided() -> None:
    result = run("convert", str(CHATML), "--no-check")
    assert result.exit_code == 0
    notes = [line for line in result.stderr.splitlines() if "BOS" in line]
    assert notes == [
        "note: BOS not decided: the Jinja does not write bos_token; --gguf MODEL.gguf, "
        "--tokenizer-config FILE or --bos/--no-bos decides whether Ollama's tokenizer adds it"]
    assert "bos_token" not in result.stdout


def test_convert_gguf_decides_bos_for_every_format(tmp_path: Path) -> None:
    vocab = make_vocab(tmp_path / "v.gguf", "llama", bos_id=1)
    result = run("convert", str(CHATML), "--gguf", str(vocab), "--no-check")
    assert result.exit_code == 0
    assert "\n{{- bos_token }}\n" in result.stdout
    assert "BOS not decided" not in result.stderr
    assert "{{- bos_token }}" not in run("convert", str(CHATML), "--gguf", str(vocab), "--no-bos",
                                         "--no-check").stdout


def test_convert_refuses_a_gguf_that_is_not_one(tmp_path: Path) -> None:
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"GGUF\x03\x00\x00\x00fake weights")
    result = run("convert", str(CHATML), "--gguf", str(fake), "--no-check")
    assert result.exit_code == 1
    assert result.stderr == (f"{fake} is not a readable GGUF file (it ends inside its "
                             "metadata)\n")


def test_convert_hf_writes_the_bos_facts_and_keeps_other_keys(tmp_path: Path) -> None:
    vocab = make_vocab(tmp_path / "v.gguf", "llama", bos_id=1)
    out = tmp_path / "tokenizer_config.json"
    out.write_text(json.dumps({"model_max_length": 8192,
                               "bos_token": {"content": "old", "special": True}}))
    result = run("convert", str(CHATML), "--gguf", str(vocab), "--format", "hf", "-o",
                 str(out), "--force", "--no-check")
    assert result.exit_code == 0, result.output
    config = json.loads(out.read_text())
    assert list(config) == ["model_max_length", "bos_token", "chat_template", "eos_token",
                            "add_bos_token"]
    assert config["bos_token"] == {"content": "<s>", "special": True}
    assert (config["eos_token"], config["add_bos_token"]) == ("</s>", True)
    assert config["chat_template"].startswith("{#- Translated")


def test_convert_reads_the_installed_models_gguf(tmp_path: Path) -> None:
    from test_store import install, layer, manifest_bytes

    root = tmp_path / "models"
    vocab = make_vocab(tmp_path / "v.gguf", "gpt2", pre="llama-bpe", bos_id=1)
    layers = [layer(root, "model", vocab.read_bytes()),
              layer(root, "template", CHATML.read_bytes())]
    install(root, "manifests/registry.ollama.ai/library/tiny/latest",
            manifest_bytes(root, layers, {"model_format": "gguf"}))
    result = run("convert", "ollama:tiny", "--models", str(root), "--no-check")
    assert result.exit_code == 0, result.output
    assert "\n{{- bos_token }}\n" in result.stdout
    assert "adds <s> before the prompt" in result.stdout
    assert "from ollama:tiny's GGUF)" in " ".join(result.stdout.split())


def test_migrate_reports_bos_per_item(tmp_path: Path) -> None:
    from test_store import install, layer, manifest_bytes

    from gotmpl2jinja.batch.migrate import migrate

    root = tmp_path / "models"
    vocab = make_vocab(tmp_path / "v.gguf", "llama", bos_id=1)
    for name, weights in (("spm", vocab.read_bytes()), ("opaque", b"GGUF\x03\x00\x00\x00w")):
        layers = [layer(root, "model", weights), layer(root, "template", CHATML.read_bytes())]
        install(root, f"manifests/registry.ollama.ai/library/{name}/1b",
                manifest_bytes(root, layers, {"model_format": "gguf"}))
    src = tmp_path / "src"
    src.mkdir()
    out = tmp_path / "out"
    report = migrate(src, out, cases=5, store=str(root))
    items = {item.input: item for item in report.items}
    assert items["ollama:spm:1b"].bos == (
        "bos_token written first (ollama:spm:1b's GGUF: tokenizer.ggml.add_bos_token absent: "
        "llama.cpp's default for a 'llama' vocabulary)")
    assert "{{- bos_token }}" in (out / items["ollama:spm:1b"].output).read_text()
    assert items["ollama:opaque:1b"].bos == (
        "not decided (no tokenizer facts: an installed model's GGUF, or the .gguf a Modelfile's "
        "FROM names, gives them here)")
    assert any("tokenizer facts are not readable" in w for w in items["ollama:opaque:1b"].warnings)
    md = (out / "report.md").read_text()
    assert "- `ollama:opaque:1b`: not decided (no tokenizer facts" in md


def test_the_check_holds_the_translation_to_the_bos_rule() -> None:
    from gotmpl2jinja.verify.check import TranslationDiverged, check_translation

    source = CHATML.read_text()
    engines = ["jinja2"]
    checked = check_translation(source, translate(source, bos=ADDS), engines=engines, bos=ADDS)
    assert checked.ok and checked.compared_on == (
        "text with the BOS rule: bos_token '<s>' first, as Ollama's tokenizer adds BOS (m.gguf)")
    with pytest.raises(TranslationDiverged) as info:  # the Jinja without BOS, facts that add it
        check_translation(source, translate(source), engines=engines, bos=ADDS)
    first = info.value.result.divergences[0]
    assert first.go_output is not None
    assert first.jinja_output == first.go_output  # Go's bare prompt: the rule wants <s> first


def test_a_modelfile_from_a_gguf_gives_its_facts(tmp_path: Path) -> None:
    from gotmpl2jinja.batch.migrate import migrate

    src = tmp_path / "src"
    src.mkdir()
    make_vocab(src / "v.gguf", "llama", bos_id=1)
    template = CHATML.read_text().replace('"""', "")
    (src / "Modelfile").write_text(f'FROM ./v.gguf\nTEMPLATE """{template}"""\n')
    result = run("convert", str(src / "Modelfile"), "--no-check")
    assert result.exit_code == 0, result.output
    assert "\n{{- bos_token }}\n" in result.stdout
    assert "from v.gguf)" in " ".join(result.stdout.split())
    report = migrate(src, tmp_path / "out", cases=5)
    (item,) = report.items
    assert item.bos == ("bos_token written first (v.gguf: tokenizer.ggml.add_bos_token absent: "
                        "llama.cpp's default for a 'llama' vocabulary)")


def test_convert_format_gguf_writes_the_jinja_made_with_that_ggufs_facts(tmp_path: Path) -> None:
    from gguf import GGUFReader

    vocab = make_vocab(tmp_path / "v.gguf", "gpt2", pre="llama-bpe", bos_id=1)
    out = tmp_path / "out.gguf"
    result = run("convert", str(CHATML), "--format", "gguf", "--gguf", str(vocab), "-o", str(out),
                 "--no-check")
    assert result.exit_code == 0, result.output
    template = GGUFReader(out).fields["tokenizer.chat_template"].contents()
    assert "\n{{- bos_token }}\n" in template


def test_bos_flag_alone_says_so_in_the_header() -> None:
    result = run("convert", str(CHATML), "--bos", "--no-check")
    assert result.exit_code == 0
    assert " ".join(result.stdout.split("#}")[0].split()).endswith(
        "BOS: bos_token is written first, as Ollama's tokenizer adds the model's BOS before the "
        "prompt (--bos).")
    assert "BOS not decided" not in result.stderr

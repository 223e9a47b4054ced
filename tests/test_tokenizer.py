"""llama.cpp's own tokenizer (engines/tokenizer.py, built from the llama-cpp-python sdist) on
the vocabulary-only GGUFs that sdist ships: llama.cpp's own test vectors, each family's facts,
Ollama's tokenization (add_special and parse_special on), and the one sentence a bad GGUF gets.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest
from conftest import shipped_vocab

from gotmpl2jinja.engines.cpp import build
from gotmpl2jinja.engines.tokenizer import Vocabulary, VocabularyError, vocabulary
from gotmpl2jinja.ollama.vocab import facts_from_gguf

#: The families of issue 38 (the shipped vocabulary of each).
FAMILIES = ["llama-bpe", "llama-spm", "gemma-4", "phi-3", "qwen2", "deepseek-llm", "command-r"]

#: Every shipped vocabulary that comes with llama.cpp's tokenizer test texts (test-tokenizer-0:
#: texts in .inp, the ids Hugging Face's tokenizer gives them in .out).
WITH_VECTORS = ["bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4",
                "gpt-2", "llama-bpe", "llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact",
                "starcoder"]

_SEPARATOR = "\n__ggml_vocab_test__\n"

#: Every vocabulary-only GGUF of the sdist (llama-cpp-python 0.3.36).
ALL_SHIPPED = ["aquila", "baichuan", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm",
               "falcon", "gemma-4", "gpt-2", "gpt-neox", "llama-bpe", "llama-spm", "mpt",
               "nomic-bert-moe", "phi-3", "qwen2", "qwen35", "refact", "starcoder"]


@pytest.mark.parametrize("name", WITH_VECTORS)
def test_reproduces_llama_cpps_own_test_vectors(name: str) -> None:
    """The build is llama.cpp's tokenizer: every text of its test gives the recorded ids
    (test-tokenizer-0 tokenizes with no added and no parsed special tokens)."""
    path = shipped_vocab(name)
    texts = Path(f"{path}.inp").read_text(encoding="utf-8").split(_SEPARATOR)
    texts = texts[:-1] if texts[-1] == "" else texts
    lines = Path(f"{path}.out").read_text(encoding="utf-8").split("\n")
    expected = [[int(token) for token in line.split()] for line in lines[:len(texts)]]
    assert len(texts) >= 40
    got = vocabulary(path).tokenize(texts, add_special=False, parse_special=False)
    assert got == expected


#: (type, add_bos, BOS id and text, EOS text) of each family's vocabulary, as the published
#: tokenizers have them (Qwen's adds no BOS; the others do).
FACTS = {
    "llama-bpe": ("BPE", True, 128000, "<|begin_of_text|>", "<|end_of_text|>"),
    "llama-spm": ("SPM", True, 1, "<s>", "</s>"),
    "gemma-4": ("BPE", True, 2, "<bos>", "<eos>"),
    "phi-3": ("SPM", True, 1, "<s>", "<|endoftext|>"),
    "qwen2": ("BPE", False, 151643, "<|endoftext|>", "<|endoftext|>"),
    "deepseek-llm": ("BPE", True, 100000, "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    "command-r": ("BPE", True, 5, "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
}


@pytest.mark.parametrize("name", FAMILIES)
def test_family_facts(name: str) -> None:
    facts = vocabulary(shipped_vocab(name)).facts
    assert (facts.type, facts.add_bos, facts.bos, facts.bos_text, facts.eos_text) == FACTS[name]
    assert facts.add_eos is False


def test_ollamas_tokenization_adds_bos_and_parses_special_text() -> None:
    """Llama 3's vocabulary adds BOS; BOS text in the prompt is a second BOS token; special-token
    text is the special token, and with parse_special off it is plain text."""
    vocab = vocabulary(shipped_vocab("llama-bpe"))
    text = "<|begin_of_text|>Hi <|eot_id|>"
    assert vocab.tokenize([text], add_special=True) == [[128000, 128000, 13347, 220, 128009]]
    assert vocab.tokenize([text], add_special=False) == [[128000, 13347, 220, 128009]]
    plain = vocab.tokenize([text], add_special=False, parse_special=False)[0]
    assert 128000 not in plain and 128009 not in plain
    assert vocab.pieces([128000, 13347, 220, 128009]) == ["<|begin_of_text|>", "Hi", " ",
                                                          "<|eot_id|>"]
    assert vocab.known_special(["<|eot_id|>", "<|im_start|>", "Hi"]) == [True, False, False]


def test_qwen_adds_no_bos() -> None:
    vocab = vocabulary(shipped_vocab("qwen2"))
    ids = vocab.tokenize(["<|im_start|>user\nHi<|im_end|>"], add_special=True)[0]
    assert ids[0] == 151644 and vocab.pieces(ids[:1]) == ["<|im_start|>"]


def test_not_a_gguf_is_one_sentence_naming_the_file(tmp_path: Path) -> None:
    shipped_vocab("llama-bpe")  # (the tokenizer must be built)
    bogus = tmp_path / "model.gguf"
    bogus.write_text("not a gguf at all\n", encoding="utf-8")
    with pytest.raises(VocabularyError) as info:
        Vocabulary(bogus)
    message = str(info.value)
    assert message.startswith(f"{bogus}: not a GGUF") and "\n" not in message
    with pytest.raises(VocabularyError, match="no such file"):
        Vocabulary(tmp_path / "missing.gguf")


def test_gguf_without_tokenizer_is_one_sentence_naming_the_file(tmp_path: Path) -> None:
    shipped_vocab("llama-bpe")
    path = tmp_path / "weights-only.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(VocabularyError) as info:
        Vocabulary(path)
    assert str(info.value).startswith(f"{path}: the GGUF has no tokenizer")
    # the driver survives a bad file: the next vocabulary still loads
    assert vocabulary(shipped_vocab("llama-spm")).facts.bos_text == "<s>"


@pytest.mark.parametrize("name", ALL_SHIPPED)
def test_the_python_bos_rule_agrees_with_llama_cpps_own(name: str) -> None:
    """ollama.vocab's reading of a GGUF (pure Python, llama.cpp's rule written out) and
    llama.cpp's own vocabulary code agree on adds-BOS and the BOS/EOS texts, on every
    vocabulary the sdist ships: either side being wrong fails here."""
    path = shipped_vocab(name)
    ours = facts_from_gguf(path)
    theirs = vocabulary(path).facts
    assert ours.adds_bos == theirs.add_bos, ours.rule
    assert (ours.bos_token or "") == theirs.bos_text
    assert (ours.eos_token or "") == theirs.eos_text


def test_vocabularies_are_copied_from_the_sdist_beside_the_driver() -> None:
    path = shipped_vocab("llama-bpe")
    assert path.parent == build.engine_dir("tokenizer")
    for name in FAMILIES:
        assert shipped_vocab(name).is_file()


def test_engines_lists_and_installs_the_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """`engines` lists it; `engines install tokenizer` builds it (here: finds it built), and
    `engines install` with no names runs its setup too."""
    from click.testing import CliRunner

    from gotmpl2jinja.cli.main import cli
    from gotmpl2jinja.engines import registry

    shipped_vocab("llama-bpe")
    runner = CliRunner()
    listing = runner.invoke(cli, ["engines"])
    assert any(line.startswith("tokenizer") and "available" in line
               for line in listing.output.splitlines())
    installed = runner.invoke(cli, ["engines", "install", "tokenizer"])
    assert installed.exit_code == 0 and "tokenizer: available" in installed.output
    ran: list[str] = []
    for name, spec in registry.ENGINES.items():  # every other setup step: not run here
        if spec.setup is not None:
            monkeypatch.setitem(registry.ENGINES, name, registry.EngineSpec(
                name, spec.factory, spec.probe, lambda _p, n=name: ran.append(n),
                spec.description, spec.tags))
    tool = registry.TOOLS["tokenizer"]
    monkeypatch.setitem(registry.TOOLS, "tokenizer", registry.ToolSpec(
        "tokenizer", tool.probe, lambda _p: ran.append("tokenizer"), tool.description))
    states, failed = registry.setup_engines(None, lambda _line: None)
    assert "tokenizer" in ran and states["tokenizer"] is None and not failed

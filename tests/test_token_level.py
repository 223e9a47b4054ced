"""Token-level equivalence (verify/tokens.py): for each vocabulary the llama-cpp-python sdist
ships, the corpus templates of its family give Ollama's token IDs under the transformers/vLLM
convention (every raw engine) and on llama-server (its -server contexts), over generated
conversations; the text-level BOS rule without a vocabulary; the verify --gguf command.

The Jinja under test is the translation made with the vocabulary's BOS facts
(`ollama.vocab.facts_from_gguf`): it writes `bos_token` first where Ollama's tokenizer adds BOS.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CORPUS, shipped_vocab

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import get_engine, select_engines
from gotmpl2jinja.engines.tokenizer import vocabulary
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.ollama.vocab import facts_from_gguf
from gotmpl2jinja.verify.conversation import jinja_context
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.tokens import (
    HostTokens,
    TokenLevel,
    convention,
    template_specials,
    unknown_specials,
)

ENTRIES = CORPUS / "huggingface__huggingface.js" / "entries"

#: (corpus entry, shipped vocabulary): the families of issue 38. deepseek-v2.5's template
#: writes the BOS text itself (Ollama then feeds two BOS tokens).
FAMILIES = [
    ("047__library_llama3.1_8b", "llama-bpe"),
    ("050__library_llama3.2_3b", "llama-bpe"),
    ("045__library_llama2_7b", "llama-spm"),
    ("058__library_mistral_7b-instruct-fp16", "llama-spm"),
    ("028__library_gemma3_1b", "gemma-4"),
    ("069__library_phi3_3.8b", "phi-3"),
    ("078__library_qwen2.5_0.5b", "qwen2"),
    ("013__library_deepseek-r1_8b", "deepseek-llm"),
    ("015__library_deepseek-v2.5_236b", "deepseek-llm"),
    ("006__library_command-r_35b", "command-r"),
]

NOW = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.timezone.utc)


def go_source(entry: str) -> str:
    return (ENTRIES / entry / "template.gotmpl").read_text(encoding="utf-8")


def with_bos(go: str, tokens: TokenLevel, name: str) -> str:
    """The translation with the vocabulary's BOS facts."""
    return translate(go, name=name, bos=tokens.host.facts)


def token_level(vocab_name: str) -> TokenLevel:
    path = shipped_vocab(vocab_name)
    vocab = vocabulary(path)
    return TokenLevel(HostTokens.of_vocabulary(vocab, facts_from_gguf(path)), vocab)


@pytest.mark.parametrize(("entry", "vocab_name"), FAMILIES)
def test_family_gives_ollamas_tokens_on_every_host(entry: str, vocab_name: str) -> None:
    tokens = token_level(vocab_name)
    go = go_source(entry)
    result = verify_template(go, with_bos(go, tokens, entry), cases=60, seed=38, name=entry,
                             tokens=tokens, now=NOW)
    assert result.compared_on is not None and "token IDs" in result.compared_on
    assert any(convention(name) == "llama-server" for name in result.engines)
    assert result.ok, [d.diff for d in result.divergences]
    compared = {name: t.equal + t.refused for name, t in result.counts.items()}
    assert all(n > 0 for n in compared.values()), compared


def test_without_bos_the_raw_hosts_diverge_on_the_first_token() -> None:
    """The string-level translation feeds transformers/vLLM no BOS: caught on token IDs, with
    the first differing token shown with its text; llama-server adds BOS itself."""
    tokens = token_level("llama-bpe")
    go = go_source("047__library_llama3.1_8b")
    result = verify_template(go, translate(go), cases=20, engines=["jinja2", "llamacpp-server"],
                             tokens=tokens, now=NOW)
    assert [d.engine for d in result.divergences] == ["jinja2"]
    diff = result.divergences[0].diff
    assert "first differing token at index 0" in diff
    assert "128000:'<|begin_of_text|>'" in diff


def test_two_bos_when_the_template_writes_the_bos_text() -> None:
    """A Go template that writes the BOS text: Ollama feeds BOS twice (its tokenizer adds one);
    the Jinja keeps the text after bos_token, and llama-server strips only one."""
    tokens = token_level("llama-bpe")
    go = ("<|begin_of_text|>{{ range .Messages }}<|start_header_id|>{{ .Role }}"
          "<|end_header_id|>\n\n{{ .Content }}<|eot_id|>{{ end }}")
    conv = {"messages": [{"role": "user", "content": "Hi <|eot_id|> there <|begin_of_text|>"}]}
    prompt = reference.render(go, conv)
    ollama = tokens.ids(tokens.host.ollama_text(prompt), True)
    assert ollama[:2] == (128000, 128000)
    assert ollama.count(128009) == 2 and ollama.count(128000) == 3  # content's specials parsed
    jinja = with_bos(go, tokens, "bos-text")
    for name in ["jinja2", "llamacpp-server"]:
        output = get_engine(name).render(jinja, {**jinja_context(conv), **tokens.host.context()})
        assert tokens.agree(name, prompt, output), tokens.diff(name, prompt, output)
    # and the translation alone (one BOS text) is one BOS short on transformers
    bare = get_engine("jinja2").render(translate(go), {**jinja_context(conv),
                                                       **tokens.host.context()})
    assert not tokens.agree("jinja2", prompt, bare)


def test_qwen_needs_no_bos() -> None:
    """qwen2's vocabulary adds no BOS: the translation as it is gives Ollama's tokens."""
    tokens = token_level("qwen2")
    assert tokens.host.add_bos is False
    go = go_source("078__library_qwen2.5_0.5b")
    result = verify_template(go, translate(go), cases=30, engines=["jinja2", "llamacpp-server"],
                             tokens=tokens, now=NOW)
    assert result.ok


def test_text_level_bos_rule_without_a_vocabulary() -> None:
    """Without a vocabulary the check stays on strings, with the BOS rule applied as text."""
    host = HostTokens(bos_token="<s>", eos_token="</s>", add_bos=True)
    tokens = TokenLevel(host)
    assert tokens.agree("jinja2", "[INST] hi [/INST]", "<s>[INST] hi [/INST]")
    assert not tokens.agree("jinja2", "[INST] hi [/INST]", "[INST] hi [/INST]")
    assert tokens.agree("llamacpp-server", "[INST] hi [/INST]", "<s>[INST] hi [/INST]")
    assert tokens.agree("llamacpp-server", "[INST] hi [/INST]", "[INST] hi [/INST]")
    go = go_source("058__library_mistral_7b-instruct-fp16")
    jinja = "{{- bos_token }}" + translate(go)
    result = verify_template(go, jinja, cases=20, engines=["jinja2", "llamacpp-server"],
                             tokens=tokens, now=NOW)
    assert result.ok and result.compared_on is not None and "text" in result.compared_on
    result = verify_template(go, translate(go), cases=20, engines=["jinja2"], tokens=tokens,
                             now=NOW)
    assert not result.ok


def test_llama_server_strips_one_bos_and_eos_text() -> None:
    host = HostTokens(bos_token="<s>", eos_token="</s>", add_bos=True, add_eos=True)
    assert host.server_text("<s><s>x</s></s>") == "<s>x</s>"
    assert HostTokens("<s>", "</s>", add_bos=False).server_text("<s>x</s>") == "<s>x</s>"
    assert host.expected_text("x") == "<s>x</s>"
    assert HostTokens("<bos>", "<eos>", add_bos=True, strips="<bos>").ollama_text(
        "<bos>x") == "x"


def test_a_vocabulary_of_another_family_counts_the_unknown_special_tokens() -> None:
    """Llama 3's vocabulary for a ChatML template is no error; the count is said."""
    go = go_source("078__library_qwen2.5_0.5b")
    assert "<|im_start|>" in template_specials(go)
    vocab = vocabulary(shipped_vocab("llama-bpe"))
    assert "<|im_start|>" in unknown_specials(vocab, go)
    qwen = unknown_specials(vocabulary(shipped_vocab("qwen2")), go)
    assert "<|im_start|>" not in qwen and "<|im_end|>" not in qwen


def test_verify_gguf_command(tmp_path: Path) -> None:
    path = shipped_vocab("llama-bpe")
    entry = ENTRIES / "047__library_llama3.1_8b" / "template.gotmpl"
    tokens = token_level("llama-bpe")
    jinja = tmp_path / "chat_template.jinja"
    jinja.write_text(with_bos(entry.read_text(encoding="utf-8"), tokens, "t"), encoding="utf-8")
    runner = CliRunner()
    ok = runner.invoke(cli, ["verify", str(entry), "--jinja", str(jinja), "--gguf", str(path),
                             "--cases", "20", "--engines", "jinja2,llamacpp-server"])
    assert ok.exit_code == 0, ok.output
    assert "compared on token IDs of ggml-vocab-llama-bpe.gguf" in ok.output
    qwen = ENTRIES / "078__library_qwen2.5_0.5b" / "template.gotmpl"
    other = runner.invoke(cli, ["verify", str(qwen), "--gguf", str(path), "--cases", "5",
                                "--engines", "jinja2"])
    assert "special token(s) of the template are not special tokens of this vocabulary" in (
        other.output)
    bogus = tmp_path / "x.gguf"
    bogus.write_bytes(b"GGUF but not really")
    bad = runner.invoke(cli, ["verify", str(entry), "--gguf", str(bogus), "--cases", "5"])
    assert bad.exit_code == 1
    assert bad.output.strip().startswith(str(bogus)) and len(bad.output.strip().splitlines()) == 1


def test_every_selected_engine_has_a_host_convention() -> None:
    for name in select_engines().used:
        assert convention(name) in ("transformers/vLLM", "llama-server")
    assert convention("llamacpp-server") == convention("minja-server") == "llama-server"
    assert convention("jinja2") == convention("llamacpp") == "transformers/vLLM"


def test_sweep_and_migrate_take_gguf(tmp_path: Path) -> None:
    """sweep --gguf and migrate --gguf translate with the GGUF's facts and compare tokens."""
    path = shipped_vocab("llama-bpe")
    folder = tmp_path / "templates"
    folder.mkdir()
    go = (ENTRIES / "047__library_llama3.1_8b" / "template.gotmpl").read_text(encoding="utf-8")
    (folder / "llama31.gotmpl").write_text(go, encoding="utf-8")
    runner = CliRunner()
    swept = runner.invoke(cli, ["sweep", str(folder), "--cases", "10", "--exhaustive", "0",
                                "--engines", "jinja2,llamacpp-server", "--gguf", str(path),
                                "--json"])
    assert swept.exit_code == 0, swept.output
    assert '"equivalent"' in swept.output
    out = tmp_path / "out"
    migrated = runner.invoke(cli, ["migrate", str(folder), str(out), "--cases", "10",
                                   "--engines", "jinja2,llamacpp-server", "--gguf", str(path)])
    assert migrated.exit_code == 0, migrated.output
    written = next(out.rglob("*.jinja")).read_text(encoding="utf-8")
    assert "\n{{- bos_token }}" in written

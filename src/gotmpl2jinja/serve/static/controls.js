// The playground's controls: verify with progress, downloads, uploads, and the wiring of the
// page's buttons (app.js holds the views they update).
"use strict";

// ------------------------------------------------------------------------------------------
// Verify: N generated conversations, progress, each divergence loadable into the editor

async function verify() {
  if (currentJinja() === null) {
    showError({message: "translate first: there is no Jinja to verify"});
    return;
  }
  clearError();
  const cases = Number($("cases").value);
  const result = $("verify-result");
  result.replaceChildren();
  delete result.dataset.divergences;
  const bar = $("verify-progress");
  bar.max = cases;
  bar.value = 0;
  bar.hidden = false;
  $("verify").disabled = true;
  try {
    const {job} = await api("/api/verify", {...inputRequest(), jinja: currentJinja(), cases});
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const run = await api(`/api/verify/${job}`);
      bar.value = run.done;
      $("verify-count").textContent = `${run.done} / ${cases} cases`;
      if (!run.finished) continue;
      if (run.error) throw run.error;
      showVerifyResult(run.result);
      break;
    }
  } catch (err) {
    showError(err);
  } finally {
    $("verify").disabled = false;
  }
}

function showVerifyResult(run) {
  const box = $("verify-result");
  box.dataset.divergences = run.divergences.length;
  box.dataset.cases = run.cases;
  const head = document.createElement("div");
  head.className = run.ok ? "ok" : "bad";
  head.textContent = `${run.cases} cases on ${run.engines.length} engines: ` +
    `${run.divergences.length} divergence(s)` + (run.refused ? `; ${run.refused} refused by Ollama` : "");
  const list = document.createElement("div");
  for (const [engine, verdict] of Object.entries(run.verdict)) {
    const item = document.createElement("span");
    item.className = "badge " + (verdict.startsWith("equivalent") ? "ok" : "bad");
    item.textContent = `${engine}: ${verdict}`;
    list.append(item);
  }
  box.replaceChildren(head, list);
  run.divergences.forEach((div, i) => {
    const card = document.createElement("div");
    card.className = "divergence";
    card.dataset.testid = `divergence-${i}`;
    card.setAttribute("data-testid", `divergence-${i}`);
    const title = document.createElement("h3");
    title.textContent = `${div.engine} (found by the ${div.found_by} search; minimal conversation)`;
    const conv = document.createElement("pre");
    conv.textContent = JSON.stringify(div.conversation, null, 2);
    const diff = document.createElement("pre");
    diff.className = "diff-text";
    diff.textContent = div.diff;
    const load = document.createElement("button");
    load.textContent = "load into the conversation editor";
    load.setAttribute("data-testid", `load-divergence-${i}`);
    load.addEventListener("click", () => {
      $("conversation").value = JSON.stringify(div.conversation, null, 2);
      $("think").value = "";
      $("agp").value = "";
      $("cfm").checked = false;
      render();
      $("conversation").scrollIntoView({behavior: "smooth"});
    });
    card.append(title, load, conv, diff);
    box.append(card);
  });
}

// ------------------------------------------------------------------------------------------
// Downloads: the files `convert --format` writes

async function download(format) {
  if (currentJinja() === null) {
    showError({message: "translate first: there is no Jinja to download"});
    return;
  }
  clearError();
  try {
    const file = await api("/api/download", {...inputRequest(), jinja: currentJinja(), format});
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([file.text], {type: "application/octet-stream"}));
    link.download = file.filename;
    document.body.append(link);
    link.click();
    link.remove();
  } catch (err) {
    showError(err);
  }
}

// ------------------------------------------------------------------------------------------
// Uploads: a template or Modelfile (read here), a GGUF or tokenizer_config.json (sent)

const MAX_FACTS_UPLOAD = 64 * 1024 * 1024;  // a GGUF's header and vocabulary come first

async function uploadInput(file) {
  if (!file) return;
  $("template").value = await file.text();
  $("name").value = file.name;
  $("model").value = "";
  updateGutter();
  translate();
}

async function uploadFacts(file) {
  if (!file) return;
  clearError();
  const kind = file.name.toLowerCase().endsWith(".json") ? "tokenizer_config" : "gguf";
  try {
    const response = await fetch(`/api/upload?kind=${kind}&name=${encodeURIComponent(file.name)}`,
      {method: "POST", body: file.slice(0, MAX_FACTS_UPLOAD)});
    const data = await response.json();
    if (!response.ok || data.error) throw data.error || {message: `HTTP ${response.status}`};
    if (kind === "gguf") {
      const option = new Option(`uploaded: ${file.name}`, data.id);
      $("vocab").append(option);
      $("vocab").value = data.id;
      state.vocab = data.id;
      state.tokenizerConfig = "";
    } else {
      state.tokenizerConfig = data.id;
      state.vocab = "";
      $("vocab").value = "";
    }
    showFacts(data.facts);
  } catch (err) {
    showError(err);
  }
}

function showFacts(facts) {
  $("facts").textContent = !facts ? "" :
    `${facts.source}: ` + (facts.adds_bos === null ? "BOS not decided" :
      facts.adds_bos ? `Ollama's tokenizer adds BOS ${JSON.stringify(facts.bos_token)}` :
      "Ollama's tokenizer adds no BOS") + (facts.rule ? ` (${facts.rule})` : "");
}

// ------------------------------------------------------------------------------------------
// Wiring

async function start() {
  $("template").addEventListener("input", updateGutter);
  $("template").addEventListener("scroll", updateGutter);
  $("translate").addEventListener("click", () => translate());
  $("render").addEventListener("click", () => render());
  $("verify").addEventListener("click", () => verify());
  $("check-jinja").addEventListener("click", () => translate($("jinja-editor").value));
  $("edit-jinja").addEventListener("change", () => {
    const editing = $("edit-jinja").checked;
    if (editing && !$("jinja-editor").value && state.jinja) $("jinja-editor").value = state.jinja;
    $("jinja-editor").hidden = !editing;
    $("jinja").hidden = editing;
    $("check-jinja").hidden = !editing;
  });
  for (const button of document.querySelectorAll("[data-preset]")) {
    button.addEventListener("click", () => loadPreset(button.dataset.preset));
  }
  for (const button of document.querySelectorAll("[data-format]")) {
    button.addEventListener("click", () => download(button.dataset.format));
  }
  $("conversation").addEventListener("input", checkConversationSoon);
  $("jinja-editor").addEventListener("input", () => {
    const box = $("verdict");
    if (box.dataset.verdict === "edited") return;
    box.dataset.verdict = "edited";
    const stale = document.createElement("div");
    stale.className = "bad";
    stale.textContent = "the Jinja was edited: this verdict is the translation's; " +
      "\"Check this Jinja\" checks yours";
    box.prepend(stale);
  });
  $("upload").addEventListener("change", (e) => uploadInput(e.target.files[0]));
  $("facts-upload").addEventListener("change", (e) => uploadFacts(e.target.files[0]));
  $("vocab").addEventListener("change", () => {
    state.vocab = $("vocab").value;
    state.tokenizerConfig = "";
    $("facts").textContent = "";
  });
  $("model").addEventListener("change", () => { if ($("model").value) translate(); });
  $("conversation").value = JSON.stringify(PRESETS["simple-chat"].conversation, null, 2);
  updateGutter();
  status("starting the engines…");
  try {
    const choices = await api("/api/choices");
    for (const model of choices.models) $("model").append(new Option(model, model));
    for (const vocab of choices.vocabularies) $("vocab").append(new Option(vocab, `shipped:${vocab}`));
    status(`engines: ${choices.engines.join(", ")}` +
      (Object.keys(choices.skipped).length ? ` (skipped: ${Object.keys(choices.skipped).join(", ")})` : ""));
    document.body.dataset.ready = "true";
  } catch (err) {
    showError(err);
  }
}

start();

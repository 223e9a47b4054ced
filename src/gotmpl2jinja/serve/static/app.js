// The playground page: plain JS, no build step, no network but its own server.
// Every request goes to the server's JSON API; every failure shows in #error (with the line
// and column when it has them), never as an exception.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {jinja: null, runtime: null, vocab: "", tokenizerConfig: "", verifyTimer: null};
const VISIBLE = {" ": "·", "\t": "⇥", "\r": "␍", "\u00a0": "⍽"};

// ------------------------------------------------------------------------------------------
// Talking to the server

async function api(path, body) {
  let response;
  try {
    response = await fetch(path, body === undefined ? {} : {
      method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  } catch (exc) {
    throw {message: `error: the server did not answer (${exc})`};
  }
  let data;
  try {
    data = await response.json();
  } catch (exc) {
    throw {message: `error: the server answered ${response.status} without JSON`};
  }
  if (!response.ok || data.error) throw data.error || {message: `error: HTTP ${response.status}`};
  return data;
}

function status(text) { $("status").textContent = text; }

function showError(err) {
  const box = $("error");
  box.dataset.generation = Number(box.dataset.generation || 0) + 1;
  box.textContent = err.message || String(err);
  box.dataset.line = err.line ?? "";
  box.dataset.col = err.col ?? "";
  box.dataset.where = err.where ?? "";
  box.hidden = false;
  if (err.where === "conversation") {
    $("conversation-error").textContent = err.message;
    $("conversation-error").hidden = false;
  } else if (err.line) {
    markTemplate(err.line, err.col);
  }
  status("");
}

function clearError() {
  $("error").hidden = true;
  $("error").textContent = "";
  $("conversation-error").hidden = true;
  markTemplate(null);
}

function inputRequest() {
  const model = $("model").value;
  const request = model ? {model} : {text: $("template").value, name: $("name").value,
    kind: $("kind").value};
  if (state.vocab) request.vocab = state.vocab;
  if (state.tokenizerConfig) request.tokenizer_config = state.tokenizerConfig;
  if ($("bos").value) request.bos = $("bos").value;
  return request;
}

function currentJinja() {
  return $("edit-jinja").checked ? $("jinja-editor").value : state.jinja;
}

// ------------------------------------------------------------------------------------------
// The template editor: line numbers, the error's line marked, the caret put at its column

function updateGutter() {
  const lines = $("template").value.split("\n").length;
  const gutter = $("template-gutter");
  if (gutter.childElementCount !== lines) {
    gutter.replaceChildren(...Array.from({length: lines}, (_, i) => {
      const div = document.createElement("div");
      div.textContent = i + 1;
      return div;
    }));
  }
  gutter.scrollTop = $("template").scrollTop;
}

function markTemplate(line, col) {
  const gutter = $("template-gutter");
  for (const div of gutter.querySelectorAll(".marked")) div.classList.remove("marked");
  if (!line || $("model").value) return;
  const div = gutter.children[line - 1];
  if (div) {
    div.classList.add("marked");
    div.title = $("error").textContent;
  }
  const text = $("template").value;
  let offset = 0;
  for (let i = 1; i < line && offset >= 0; i++) offset = text.indexOf("\n", offset) + 1;
  offset += Math.max((col || 1) - 1, 0);
  $("template").setSelectionRange(offset, offset + 1);
}

// ------------------------------------------------------------------------------------------
// The Jinja: highlighted, the runtime macros folded under their name

function escapeHtml(text) {
  return text.replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
}

function highlight(text) {
  return escapeHtml(text).replace(/(\{#[\s\S]*?#\})|(\{%[\s\S]*?%\})|(\{\{[\s\S]*?\}\})/g,
    (m, comment, tag) => `<span class="${comment ? "j-comment" : tag ? "j-tag" : "j-expr"}">${m}</span>`);
}

function showJinja(text, runtime) {
  const pane = $("jinja");
  pane.replaceChildren();
  const lines = text.split("\n");
  const add = (part) => {
    const pre = document.createElement("pre");
    pre.innerHTML = highlight(part);
    return pre;
  };
  if (runtime) {
    const [first, last] = runtime;
    pane.append(add(lines.slice(0, first - 1).join("\n")));
    const fold = document.createElement("details");
    fold.className = "runtime";
    const summary = document.createElement("summary");
    summary.textContent = `runtime macros: Go's JSON and printing rules (${last - first + 1} lines, generated)`;
    fold.append(summary, add(lines.slice(first - 1, last).join("\n")));
    pane.append(fold, add(lines.slice(last).join("\n")));
  } else {
    pane.append(add(text));
  }
  pane.dataset.text = text;
}

function showVerdict(result) {
  const box = $("verdict");
  box.replaceChildren();
  box.dataset.generation = Number(box.dataset.generation || 0) + 1;
  const entries = Object.entries(result.verdict || {});
  const equivalent = entries.length > 0 && entries.every(([, v]) => v.startsWith("equivalent"));
  box.dataset.verdict = entries.length === 0 ? "unchecked" : equivalent ? "equivalent" : "diverges";
  const head = document.createElement("div");
  head.className = equivalent ? "ok" : "bad";
  head.textContent = entries.length === 0 ? "not checked"
    : (equivalent ? "equivalent: " : "DIVERGES: ") + (result.check || "");
  box.append(head);
  for (const [engine, verdict] of entries) {
    const item = document.createElement("span");
    item.className = "badge " + (verdict.startsWith("equivalent") ? "ok" : "bad");
    item.dataset.engine = engine;
    item.textContent = `${engine}: ${verdict}`;
    box.append(item);
  }
  $("notes").replaceChildren(...(result.notes || []).map((note) => {
    const div = document.createElement("div");
    div.textContent = note;
    return div;
  }));
}

async function translate(jinja) {
  clearError();
  status(jinja === undefined ? "translating and checking against Go…" : "checking this Jinja against Go…");
  try {
    const request = inputRequest();
    if (jinja !== undefined) request.jinja = jinja;
    const result = await api("/api/convert", request);
    if (jinja === undefined) {
      state.jinja = result.jinja;
      state.runtime = result.runtime;
      showJinja(result.jinja, result.runtime);
      $("jinja-editor").value = result.jinja;
    }
    showVerdict(result);
    status(result.system ? `Modelfile SYSTEM: ${result.system}` : "");
    await render();
  } catch (err) {
    showError(err);
  }
}

// ------------------------------------------------------------------------------------------
// The conversation

function loadPreset(name) {
  const preset = PRESETS[name];
  $("conversation").value = JSON.stringify(preset.conversation, null, 2);
  const flags = preset.flags;
  $("think").value = flags.think === undefined ? "" : String(flags.think);
  $("agp").value = flags.add_generation_prompt === undefined ? "" : String(flags.add_generation_prompt);
  $("cfm").checked = Boolean(flags.continue_final_message);
  if (state.jinja !== null) render();
}

function hostFlags() {
  const think = $("think").value;
  const flags = {};
  if (think) flags.think = think === "true" ? true : think === "false" ? false : think;
  if ($("agp").value) flags.add_generation_prompt = $("agp").value === "true";
  if ($("cfm").checked) flags.continue_final_message = true;
  return flags;
}

let checkTimer = null;
function checkConversationSoon() {
  clearTimeout(checkTimer);
  checkTimer = setTimeout(async () => {
    try {
      await api("/api/conversation", {conversation: $("conversation").value, flags: hostFlags()});
      $("conversation-error").hidden = true;
    } catch (err) {
      $("conversation-error").textContent = err.message;
      $("conversation-error").hidden = false;
    }
  }, 400);
}

// ------------------------------------------------------------------------------------------
// Renders: visible whitespace, special tokens marked, the first difference marked

function rangesOf(text, specials) {
  const marks = new Array(text.length).fill(false);
  for (const special of specials) {
    const tokens = Array.from(special);
    for (let i = 0; i + tokens.length <= text.length; i++) {
      if (tokens.every((c, k) => text[i + k] === c)) {
        for (let k = 0; k < tokens.length; k++) marks[i + k] = true;
      }
    }
  }
  return marks;
}

function visibleText(text, specials, diffAt) {
  const chars = Array.from(text);  // code points, as the server counts offsets
  const special = rangesOf(chars, specials);
  const pre = document.createElement("pre");
  let run = null;
  let kind = null;
  const flush = () => { if (run) pre.append(run); run = null; };
  chars.forEach((c, i) => {
    const k = i === diffAt ? "diff" : special[i] ? "special" : /[ \t\r\u00a0\n]/.test(c) ? "ws" : "";
    if (k !== kind || k === "diff") { flush(); kind = k; }
    if (!run) { run = document.createElement("span"); if (k) run.className = k; }
    if (c === "\n") run.append("⏎\n");
    else run.append(VISIBLE[c] ?? c);
    if (k === "diff") { flush(); kind = null; }
  });
  flush();
  if (diffAt !== null && diffAt !== undefined && diffAt >= chars.length) {
    const end = document.createElement("span");
    end.className = "diff";
    end.textContent = "∎";
    end.title = "the output ends here; the other goes on";
    pre.append(end);
  }
  return pre;
}

function renderCard(name, testid, outcome, badge, badgeClass, specials, diffAt) {
  const card = document.createElement("div");
  card.className = "card";
  const head = document.createElement("h3");
  head.textContent = name + " ";
  const tag = document.createElement("span");
  tag.className = "badge " + badgeClass;
  tag.textContent = badge;
  head.append(tag);
  const body = document.createElement("div");
  body.className = "render";
  body.dataset.testid = testid;
  body.setAttribute("data-testid", testid);
  if (outcome.text !== null && outcome.text !== undefined) {
    body.dataset.text = outcome.text;
    body.append(visibleText(outcome.text, specials, diffAt));
  } else {
    body.dataset.text = "";
    body.dataset.error = outcome.error || outcome.out_of_scope || "";
    const pre = document.createElement("pre");
    pre.className = "failed";
    pre.textContent = outcome.out_of_scope ? `out of scope on this runtime: ${outcome.out_of_scope}`
      : `error: ${outcome.error}`;
    body.append(pre);
  }
  card.append(head, body);
  return card;
}

function byteOffset(text, at) {
  return new TextEncoder().encode(Array.from(text).slice(0, at).join("")).length;
}

function lineCol(text, at) {
  const before = Array.from(text).slice(0, at).join("");
  const line = before.split("\n").length;
  return [line, Array.from(before.slice(before.lastIndexOf("\n") + 1)).length + 1];
}

function showRenders(result) {
  const specials = result.specials || [];
  const go = result.go;
  const differing = result.engines.filter((row) => !row.agrees && !row.out_of_scope);
  const first = differing[0];
  let goAt = null;
  if (first && first.diff_at !== null && go.text !== null) {
    const shift = (first.expected || "").length - go.text.length;  // BOS text put first
    goAt = Math.max(first.diff_at - Math.max(shift, 0), 0);
  }
  const cards = [renderCard("Go (Ollama)", "render-go", go, go.refused ? `refused: ${go.refused}` : "reference",
    "ref", specials, goAt)];
  for (const row of result.engines) {
    const [badge, cls] = row.out_of_scope ? ["out of scope", "muted"] : row.agrees ? ["= Go", "ok"]
      : ["differs", "bad"];
    cards.push(renderCard(row.engine, `render-${row.engine}`, row, badge, cls, specials,
      row.agrees ? null : row.diff_at));
  }
  $("renders").replaceChildren(...cards);
  $("renders").dataset.generation = Number($("renders").dataset.generation || 0) + 1;
  const diff = $("diff");
  diff.replaceChildren();
  if (!first) {
    diff.dataset.engine = "";
    diff.dataset.offset = "";
    diff.textContent = go.error ? `Go failed: ${go.error}` : "every engine renders Go's bytes" +
      (result.compared_on ? ` (compared as ${result.compared_on})` : "");
    diff.className = "diff ok";
  } else {
    diff.className = "diff bad";
    diff.dataset.engine = first.engine;
    if (first.diff_at === null || first.text === null) {
      diff.dataset.offset = "";
      diff.textContent = `${first.engine}: ${first.error || "differs from Go"}`;
    } else {
      const [line, col] = lineCol(first.text, first.diff_at);
      diff.dataset.offset = first.diff_at;
      diff.dataset.byte = byteOffset(first.text, first.diff_at);
      diff.dataset.line = line;
      diff.dataset.col = col;
      diff.textContent = `${first.engine} differs from Go at byte ${diff.dataset.byte} ` +
        `(line ${line}, column ${col}); ${differing.length} engine(s) differ: ` +
        differing.map((r) => r.engine).join(", ");
    }
  }
  showTokens(result.engines.find((row) => row.tokens && !row.agrees) ||
    result.engines.find((row) => row.tokens));
}

function showTokens(row) {
  const box = $("tokens");
  box.replaceChildren();
  if (!row) return;
  const {ollama, engine, first_difference: at} = row.tokens;
  const title = document.createElement("h3");
  title.textContent = `Tokens: Ollama against ${row.engine}` +
    (at === null ? " (the same ids)" : ` (first differing token at index ${at})`);
  const table = document.createElement("table");
  table.innerHTML = "<tr><th>#</th><th>Ollama id</th><th>piece</th><th>engine id</th><th>piece</th></tr>";
  for (let i = 0; i < Math.max(ollama.length, engine.length); i++) {
    const tr = document.createElement("tr");
    if (i === at) tr.className = "diff";
    const cells = [i, ...(ollama[i] || ["", ""]), ...(engine[i] || ["", ""])];
    for (const cell of cells) {
      const td = document.createElement("td");
      td.textContent = typeof cell === "string" ? Array.from(cell).map((c) => c === "\n" ? "⏎" : VISIBLE[c] ?? c).join("") : cell;
      tr.append(td);
    }
    table.append(tr);
  }
  box.append(title, table);
}

async function render() {
  if (state.jinja === null && !$("edit-jinja").checked) {
    showError({message: "translate first: there is no Jinja to render"});
    return;
  }
  clearError();
  status("rendering on Go and every engine…");
  try {
    const result = await api("/api/render", {...inputRequest(), jinja: currentJinja(),
      conversation: $("conversation").value, flags: hostFlags()});
    showRenders(result);
    status("");
  } catch (err) {
    showError(err);
  }
}

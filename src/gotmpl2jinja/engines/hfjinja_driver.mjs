// Renders chat templates with @huggingface/jinja for gotmpl2jinja's differential harness.
//
// Why a driver: the harness renders thousands of cases; one long-lived node process that reads
// JSON lines on stdin and answers JSON lines on stdout avoids a node start-up per render.
// Compiled templates are cached by a key the Python side chooses (a hash of the source); the
// source itself is sent only the first time.
//
// Request:  {"id": n, "key": "…", "template"?: "…", "context": {…}, "now": [Y, M, D, h, m, s, ms]}
// Response: {"id": n, "ok": true, "output": "…"}
//        or {"id": n, "ok": false, "raised": true|false, "error": "…"}
// Batch:    "contexts": [{…}, …] instead of "context" renders each in turn (one line for many
//           cases: the harness's bulk mode) and answers {"id": n, "ok": true, "results": [r, …]}
//           with one single-render response (without id) per context, or a template error.
//
// Fidelity notes:
// - JSON has one number type, so an integral Python float (1.0, 1e21, -0.0) would arrive as a JS
//   integer and print as `1`, not `1.0`. The Python side tags such floats as
//   {"\u0000float": "<repr>"}; here they become the library's own FloatValue again.
// - `strftime_now` is the library's built-in; only the clock is pinned (global `Date` is replaced
//   by a subclass whose no-argument constructor returns the pinned local time, during a render).
// - `raise_exception` is replaced by one that throws a marked error, so that a template's own
//   raise can be told apart from an engine error; the message is the template's argument.

import { createInterface } from "node:readline";

// The Python side passes the package's ESM entry (found under the repo's node_modules or
// $GOTMPL2JINJA_NODE_MODULES); plain resolution is the fallback when the driver runs by hand.
const { Environment, Template } = await import(
  process.env.GOTMPL2JINJA_HFJINJA_ENTRY || "@huggingface/jinja"
);

const FLOAT_TAG = "\u0000float";
const RealDate = globalThis.Date;

// The library does not export its value classes; take them from values it builds itself.
const probe = new Environment();
probe.set("p", { f: 0.5, a: [], o: {} });
const probed = probe.variables.get("p").value;
const FloatValue = probed.get("f").constructor;
const ArrayValue = probed.get("a").constructor;
const ObjectValue = probed.get("o").constructor;

class TemplateRaised extends Error {}

/** Replace tagged floats (see above) by FloatValues, in place; returns the (maybe new) value. */
function restoreFloats(value) {
  if (value instanceof ArrayValue) {
    value.value = value.value.map(restoreFloats);
    return value;
  }
  if (value instanceof ObjectValue) {
    const map = value.value;
    if (map.size === 1 && map.has(FLOAT_TAG)) {
      return new FloatValue(Number(map.get(FLOAT_TAG).value));
    }
    for (const [k, v] of map) {
      map.set(k, restoreFloats(v));
    }
    return value;
  }
  return value;
}

// Template.render declares the globals, then each context item, through Environment.set.
// Hook it to restore floats and to let `raise_exception` replace the built-in one.
const OVERRIDABLE = new Set(["raise_exception"]);
const originalSet = Environment.prototype.set;
Environment.prototype.set = function set(name, value) {
  if (OVERRIDABLE.has(name) && this.variables.has(name)) {
    this.variables.delete(name);
  }
  const runtime = originalSet.call(this, name, value);
  const fixed = restoreFloats(runtime);
  if (fixed !== runtime) {
    this.variables.set(name, fixed);
  }
  return fixed;
};

function raiseException(message) {
  throw new TemplateRaised(message === undefined ? "" : String(message));
}

function pinnedDate(ms) {
  return class PinnedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) {
        super(ms);
      } else {
        super(...args);
      }
    }
    static now() {
      return ms;
    }
  };
}

const compiled = new Map();

function handle(request) {
  let template = compiled.get(request.key);
  if (template === undefined) {
    if (typeof request.template !== "string") {
      return { ok: false, raised: false, error: "driver: unknown template key " + request.key };
    }
    try {
      template = new Template(request.template);
    } catch (err) {
      return { ok: false, raised: false, compile: true, error: "template does not compile: " + describe(err) };
    }
    compiled.set(request.key, template);
  }
  const [y, mo, d, h, mi, s, ms] = request.now;
  globalThis.Date = pinnedDate(new RealDate(y, mo - 1, d, h, mi, s, ms).getTime());
  try {
    if (Array.isArray(request.contexts)) {
      return { ok: true, results: request.contexts.map((c) => renderOne(template, c)) };
    }
    return renderOne(template, request.context);
  } finally {
    globalThis.Date = RealDate;
  }
}

function renderOne(template, given) {
  const context = { ...given, raise_exception: raiseException };
  try {
    return { ok: true, output: template.render(context) };
  } catch (err) {
    return { ok: false, raised: err instanceof TemplateRaised, error: describe(err) };
  }
}

function describe(err) {
  if (err instanceof Error) {
    return err.name === "Error" || err instanceof TemplateRaised
      ? err.message
      : `${err.name}: ${err.message}`;
  }
  return String(err);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === "") {
    continue;
  }
  let request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    process.stdout.write(JSON.stringify({ id: null, ok: false, raised: false,
      error: "driver: bad request: " + describe(err) }) + "\n");
    continue;
  }
  const response = handle(request);
  response.id = request.id;
  process.stdout.write(JSON.stringify(response) + "\n");
}

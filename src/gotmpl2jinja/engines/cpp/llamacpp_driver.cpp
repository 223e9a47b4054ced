// Renders chat templates with llama.cpp's own Jinja engine (common/jinja) for gotmpl2jinja.
//
// Built by gotmpl2jinja.cpp.build against the llama.cpp sources vendored in the PyPI sdist of
// llama-cpp-python (0.3.36); nothing of llama.cpp is copied here: this file only calls its API.
//
// One request per line on stdin, one answer per line on stdout (JSON):
//   {"id": n, "key": "...", "template"?: "...", "mode": "raw"|"server", "now": epoch_seconds,
//    "contexts": [{...}, ...]}
//   -> {"id": n, "compile": true, "error": "..."}        the template does not compile
//   -> {"id": n, "results": [{"ok": true, "output": "..."}
//                            | {"ok": false, "raised": bool, "error": "..."}, ...]}
// mode "raw":    each context is the Jinja variables themselves (global_from_json, as chat.cpp
//                passes them, strings marked as input).
// mode "server": each context is an OpenAI-style /chat/completions body; the prompt is the one
//                llama-server builds from it (oaicompat_chat_params_parse with llama-server's
//                default chat parameters: --jinja, prefill of a trailing assistant message,
//                enable_thinking defaulting to true unless the template says otherwise).
// mode "caps":   answers {"id": n, "caps": {...}}, what llama.cpp's capability probe finds
//                (common_chat_templates_get_caps), which drives its message workarounds.
// mode "kept":   answers {"id": n, "kept": k, "reused": r}, how many template analyses the driver
//                keeps, and how many renders it did not repeat (see kept_render below).
// The clock: `time()` is answered from the request's "now" (strftime_now reads the clock
// through std::time), and TZ is UTC, so renders are reproducible.
// llama-server's template analysis is kept per template and clock (see kept_analysis below),
// and a request's render is not repeated for its generation prompt (kept_render);
// G2J_FRESH_ANALYSIS=1 in the environment runs both on every request, as llama-server does.

#include "jinja/lexer.h"
#include "jinja/parser.h"
#include "jinja/runtime.h"
#include "jinja/value.h"
#include "json.h"

#ifdef G2J_WITH_SERVER
#include "chat-auto-parser.h"
#include "chat.h"
#include "server-common.h"
#endif

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>

using ojson = nlohmann::ordered_json;

static time_t g_now = 0;
static bool g_now_pinned = false;

// The process-wide clock, answered from the request (libc's time() is interposed by this
// executable's own definition, which the engine's std::time(nullptr) resolves to).
extern "C" time_t time(time_t * out) {
    time_t value = g_now;
    if (!g_now_pinned) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        value = ts.tv_sec;
    }
    if (out) {
        *out = value;
    }
    return value;
}

#ifdef G2J_WITH_SERVER
// llama-server analyses the template on every request: common_chat_templates_apply runs
// autoparser::analyze_template, which renders the template on probe inputs to find its
// markers (about half of a request's instructions under callgrind). What it finds depends on
// the template (its source and special tokens) and the clock alone, and it feeds the output
// parser and a prefill's generation prompt. The harness sends thousands of requests per
// template, so the link wraps that call (-Wl,--wrap, cpp/build.py) and each analysis is run
// once per template and pinned clock, its result (or its failure) copied into every later
// request's autoparser. Keyed by the template's text, not its address: a template that fails
// to load is freed, and the next one allocated may land at the same address. The
// prompt is still built by llama.cpp's own code; tests/test_cppengines.py checks that the
// prompts are the same bytes with G2J_FRESH_ANALYSIS=1.
extern "C" void __real__ZN10autoparser10autoparser16analyze_templateERK20common_chat_template(
    autoparser::autoparser * self, const common_chat_template & tmpl);

struct kept_analysis {
    autoparser::autoparser result;
    bool failed = false;
    std::string error;
};

static std::map<std::pair<std::string, time_t>, kept_analysis> g_analyses;

extern "C" void __wrap__ZN10autoparser10autoparser16analyze_templateERK20common_chat_template(
    autoparser::autoparser * self, const common_chat_template & tmpl) {
    static const bool fresh = std::getenv("G2J_FRESH_ANALYSIS") != nullptr;
    if (fresh || !g_now_pinned) {
        __real__ZN10autoparser10autoparser16analyze_templateERK20common_chat_template(self, tmpl);
        return;
    }
    auto key = std::make_pair(
        tmpl.source() + '\0' + tmpl.bos_token() + '\0' + tmpl.eos_token(), g_now);
    auto it = g_analyses.find(key);
    if (it == g_analyses.end()) {
        kept_analysis kept;
        try {
            __real__ZN10autoparser10autoparser16analyze_templateERK20common_chat_template(
                &kept.result, tmpl);
        } catch (const std::exception & e) {
            kept.failed = true;
            kept.error = e.what();
        }
        it = g_analyses.emplace(std::move(key), std::move(kept)).first;
    }
    if (it->second.failed) {
        throw std::runtime_error(it->second.error);
    }
    *self = it->second.result;
}

// llama-server then renders the template three times a request, all in
// peg_generator::generate_parser: the prompt (common_chat_template_direct_apply with the
// request's add_generation_prompt), and for the generation prompt, the suffix by which a render
// with add_generation_prompt outgrows one without (common_chat_template_generation_prompt,
// two renders). One of those two has the prompt's own inputs, and a render is a function of its
// inputs (the clock is pinned), so it is not rendered again: the prompt's render is kept from
// the direct_apply call just before, and only the other one runs (through direct_apply, the
// same code the generation prompt's renders run). The kept render is used only when the inputs
// direct_apply_impl reads are equal; G2J_FRESH_ANALYSIS=1 turns this off too, and
// tests/test_cppengines.py checks that the prompts are the same bytes either way.
extern "C" std::string __real__Z33common_chat_template_direct_applyB5cxx11RK20common_chat_templateRKN10autoparser17generation_paramsE(
    const common_chat_template & tmpl, const autoparser::generation_params & inputs);
extern "C" std::string __real__Z38common_chat_template_generation_promptB5cxx11RK20common_chat_templateRKN10autoparser17generation_paramsE(
    const common_chat_template & tmpl, const autoparser::generation_params & inputs);

struct kept_render {
    size_t request = 0;  // kept for the request being served only (g_request)
    const common_chat_template * tmpl = nullptr;
    autoparser::generation_params inputs;
    std::string output;
};

static std::unique_ptr<kept_render> g_last_render;
static size_t g_request = 0;
static size_t g_renders_reused = 0;

// What common_chat_template_direct_apply_impl reads of its inputs (llama.cpp 0c1e57098),
// besides add_generation_prompt.
static bool same_render_inputs(const autoparser::generation_params & a,
                               const autoparser::generation_params & b) {
    return a.messages == b.messages && a.tools == b.tools && a.extra_context == b.extra_context
        && a.enable_thinking == b.enable_thinking && a.add_bos == b.add_bos
        && a.add_eos == b.add_eos && a.mark_input == b.mark_input;
}

extern "C" std::string __wrap__Z33common_chat_template_direct_applyB5cxx11RK20common_chat_templateRKN10autoparser17generation_paramsE(
    const common_chat_template & tmpl, const autoparser::generation_params & inputs) {
    static const bool fresh = std::getenv("G2J_FRESH_ANALYSIS") != nullptr;
    g_last_render.reset();
    std::string output = __real__Z33common_chat_template_direct_applyB5cxx11RK20common_chat_templateRKN10autoparser17generation_paramsE(tmpl, inputs);
    if (!fresh && g_now_pinned) {
        g_last_render = std::make_unique<kept_render>(kept_render{g_request, &tmpl, inputs, output});
    }
    return output;
}

extern "C" std::string __wrap__Z38common_chat_template_generation_promptB5cxx11RK20common_chat_templateRKN10autoparser17generation_paramsE(
    const common_chat_template & tmpl, const autoparser::generation_params & inputs) {
    std::unique_ptr<kept_render> kept = std::move(g_last_render);
    if (!kept || kept->request != g_request || kept->tmpl != &tmpl
            || !same_render_inputs(kept->inputs, inputs)) {
        return __real__Z38common_chat_template_generation_promptB5cxx11RK20common_chat_templateRKN10autoparser17generation_paramsE(tmpl, inputs);
    }
    autoparser::generation_params other = inputs;
    other.continue_final_message = COMMON_CHAT_CONTINUATION_NONE;
    other.add_generation_prompt = !kept->inputs.add_generation_prompt;
    const std::string rendered = __real__Z33common_chat_template_direct_applyB5cxx11RK20common_chat_templateRKN10autoparser17generation_paramsE(tmpl, other);
    g_renders_reused++;
    const std::string & without = other.add_generation_prompt ? kept->output : rendered;
    const std::string & with = other.add_generation_prompt ? rendered : kept->output;
    size_t common = 0;
    while (common < without.size() && common < with.size() && without[common] == with[common]) {
        common++;
    }
    return with.substr(common);
}
#endif

struct raw_template {
    std::string source;
    jinja::program program;
};

#ifdef G2J_WITH_SERVER
struct server_template {
    server_chat_params params;
};
#endif

struct compiled {
    std::unique_ptr<raw_template> raw;
#ifdef G2J_WITH_SERVER
    std::unique_ptr<server_template> server;
#endif
};

static std::map<std::string, compiled> g_templates;

// A template's own raise_exception('m') reaches us as "... Error: Jinja Exception: m".
static ojson failure(const std::string & what) {
    static const std::string marker = "Jinja Exception: ";
    auto pos = what.find(marker);
    if (pos != std::string::npos) {
        return ojson{{"ok", false}, {"raised", true}, {"error", what.substr(pos + marker.size())}};
    }
    return ojson{{"ok", false}, {"raised", false}, {"error", what}};
}

static std::string render_raw(const raw_template & t, const ojson & context) {
    jinja::context ctx(t.source);
    jinja::global_from_json(ctx, common_json::parse(context.dump()), true);
    jinja::runtime runtime(ctx);
    const jinja::value results = runtime.execute(t.program);
    return jinja::runtime::gather_string_parts(results)->as_string().str();
}

#ifdef G2J_WITH_SERVER
static std::string render_server(const server_template & t, const ojson & body_in) {
    g_request++;
    json body = json::parse(body_in.dump());
    std::vector<raw_buffer> files;
    json params = oaicompat_chat_params_parse(body, t.params, files);
    return params.at("prompt").get<std::string>();
}
#endif

static ojson handle(const ojson & request) {
    const auto id = request.value("id", 0);
    const std::string key = request.at("key").get<std::string>();
    const std::string mode = request.value("mode", std::string("raw"));
    g_now = static_cast<time_t>(request.value("now", 0.0));
    g_now_pinned = request.contains("now");

    if (mode == "caps") {  // what llama.cpp's probe finds the template supports
        ojson caps = ojson::object();
        try {
#ifdef G2J_WITH_SERVER
            auto tmpls = common_chat_templates_init(nullptr, request.at("template").get<std::string>());
            for (const auto & [name, value] : common_chat_templates_get_caps(tmpls.get())) {
                caps[name] = value;
            }
#endif
        } catch (const std::exception & e) {
            return ojson{{"id", id}, {"compile", true}, {"error", std::string(e.what())}};
        }
        return ojson{{"id", id}, {"caps", caps}};
    }

    if (mode == "kept") {
#ifdef G2J_WITH_SERVER
        return ojson{{"id", id}, {"kept", g_analyses.size()}, {"reused", g_renders_reused}};
#else
        return ojson{{"id", id}, {"kept", 0}, {"reused", 0}};
#endif
    }

    auto it = g_templates.find(key + "/" + mode);
    if (it == g_templates.end()) {
        if (!request.contains("template")) {
            return ojson{{"id", id}, {"compile", true}, {"unknown", true},
                         {"error", "unknown template key (send its source)"}};
        }
        const std::string source = request.at("template").get<std::string>();
        compiled c;
        try {
            if (mode == "raw") {
                jinja::lexer lexer;
                auto tokens = lexer.tokenize(source);
                c.raw = std::make_unique<raw_template>();
                c.raw->source = tokens.source;
                c.raw->program = jinja::parse_from_tokens(tokens);
            } else {
#ifdef G2J_WITH_SERVER
                c.server = std::make_unique<server_template>();
                auto & p = c.server->params;
                p.use_jinja = true;
                p.prefill_assistant = true;
                p.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;  // common_params' default
                // llama-server's default kwargs: preserve_reasoning on unless told otherwise
                p.chat_template_kwargs = {{"preserve_reasoning", "true"}};
                p.allow_image = false;
                p.allow_audio = false;
                p.allow_video = false;
                p.tmpls = common_chat_templates_init(nullptr, source);
                // --reasoning auto (-1): thinking on iff the template supports it
                p.enable_thinking = common_chat_templates_support_enable_thinking(p.tmpls.get());
                p.reasoning_budget = -1;
#else
                return ojson{{"id", id}, {"compile", true}, {"error", "server mode not built"}};
#endif
            }
        } catch (const std::exception & e) {
            return ojson{{"id", id}, {"compile", true}, {"error", std::string(e.what())}};
        }
        it = g_templates.emplace(key + "/" + mode, std::move(c)).first;
    }

    ojson results = ojson::array();
    for (const auto & context : request.at("contexts")) {
        try {
            std::string out;
            if (it->second.raw) {
                out = render_raw(*it->second.raw, context);
            }
#ifdef G2J_WITH_SERVER
            else {
                out = render_server(*it->second.server, context);
            }
#endif
            results.push_back(ojson{{"ok", true}, {"output", out}});
        } catch (const std::exception & e) {
            results.push_back(failure(e.what()));
        }
    }
    return ojson{{"id", id}, {"results", results}};
}

int main() {
    setenv("TZ", "UTC", 1);
    tzset();
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        ojson answer;
        try {
            answer = handle(ojson::parse(line));
        } catch (const std::exception & e) {
            answer = ojson{{"id", 0}, {"compile", true}, {"error", std::string("driver: ") + e.what()}};
        }
        std::cout << answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        std::cout.flush();
    }
    return 0;
}

// Renders chat templates with minja, the Jinja engine llama.cpp used before its own (<= b7755),
// as vendored in the PyPI sdist of llama-cpp-python 0.3.16 (llama.cpp 4227c9b, 2025-08).
//
// Built by gotmpl2jinja.cpp.build against that sdist's sources; nothing of minja or llama.cpp is
// copied here: this file only calls their API. The protocol is llamacpp_driver.cpp's:
//   {"id": n, "key": "...", "template"?: "...", "mode": "raw"|"server", "now": epoch_seconds,
//    "contexts": [{...}, ...]}
//   -> {"id": n, "compile": true, "error": "..."}  |  {"id": n, "results": [...]}
// mode "raw":    minja::chat_template::apply with the context's own variables and polyfills off
//                (messages, tools and add_generation_prompt as its inputs, the rest as
//                extra_context), as llama.cpp of that era called it, clock pinned.
// mode "server": the context is an OpenAI-style /chat/completions body; the prompt is the one
//                that era's llama-server built (oaicompat_chat_params_parse of tools/server/
//                utils.hpp with its defaults: --jinja, prefill of a trailing assistant message,
//                reasoning format auto, thinking on), which adds minja's polyfills where its
//                capability probe finds the template lacking.
// mode "caps":   answers {"id": n, "caps": {...}}, what minja's capability probe finds.
// minja's raise_exception throws a plain error carrying only the message, so "raised" is left to
// the Python side (it knows which messages the template raises).

#include "minja/chat-template.hpp"
#include "minja/minja.hpp"

#ifdef G2J_WITH_SERVER
#include "utils.hpp"
#endif

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

using ojson = nlohmann::ordered_json;

static time_t g_now = 0;
static bool g_now_pinned = false;

// The wall clock, answered from the request: the server path takes its `now` from
// std::chrono::system_clock, which reads clock_gettime(CLOCK_REALTIME); this executable's own
// definition of clock_gettime is the one it resolves to. Other clocks are the kernel's.
extern "C" int clock_gettime(clockid_t clock, struct timespec * out) {
    if (clock == CLOCK_REALTIME && g_now_pinned) {
        out->tv_sec = g_now;
        out->tv_nsec = 0;
        return 0;
    }
    return static_cast<int>(syscall(SYS_clock_gettime, clock, out));
}

struct compiled {
    std::unique_ptr<minja::chat_template> raw;
#ifdef G2J_WITH_SERVER
    common_chat_templates_ptr tmpls;
    oaicompat_parser_options options;
#endif
};

static std::map<std::string, compiled> g_templates;

static std::chrono::system_clock::time_point pinned_now() {
    return std::chrono::system_clock::from_time_t(g_now);
}

static std::string render_raw(const minja::chat_template & t, const ojson & context) {
    minja::chat_template_inputs inputs;
    inputs.messages = context.value("messages", ojson::array());
    inputs.tools = context.contains("tools") ? context.at("tools") : ojson();
    inputs.add_generation_prompt = context.value("add_generation_prompt", false);
    ojson extra = ojson::object();
    for (const auto & item : context.items()) {
        if (item.key() != "messages" && item.key() != "tools" && item.key() != "add_generation_prompt") {
            extra[item.key()] = item.value();
        }
    }
    inputs.extra_context = extra;
    inputs.now = pinned_now();
    minja::chat_template_options options;
    options.apply_polyfills = false;
    return t.apply(inputs, options);
}

#ifdef G2J_WITH_SERVER
static std::string render_server(const compiled & t, const ojson & body_in) {
    json body = body_in;
    std::vector<raw_buffer> files;
    json params = oaicompat_chat_params_parse(body, t.options, files);
    return params.at("prompt").get<std::string>();
}
#endif

static ojson handle(const ojson & request) {
    const auto id = request.value("id", 0);
    const std::string key = request.at("key").get<std::string>();
    const std::string mode = request.value("mode", std::string("raw"));
    g_now = static_cast<time_t>(request.value("now", 0.0));
    g_now_pinned = true;

    if (mode == "caps") {  // what minja's probe finds the template supports (drives polyfills)
        try {
            minja::chat_template t(request.at("template").get<std::string>(), "", "");
            const auto & c = t.original_caps();
            return ojson{{"id", id}, {"caps", {
                {"supports_system_role", c.supports_system_role},
                {"supports_tools", c.supports_tools},
                {"supports_tool_calls", c.supports_tool_calls},
                {"supports_tool_responses", c.supports_tool_responses},
                {"requires_object_arguments", c.requires_object_arguments},
            }}};
        } catch (const std::exception & e) {
            return ojson{{"id", id}, {"compile", true}, {"error", std::string(e.what())}};
        }
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
                c.raw = std::make_unique<minja::chat_template>(source, "", "");
            } else {
#ifdef G2J_WITH_SERVER
                c.tmpls = common_chat_templates_init(nullptr, source);
                c.options.use_jinja = true;
                c.options.prefill_assistant = true;
                c.options.reasoning_format = COMMON_REASONING_FORMAT_AUTO;  // that era's default
                c.options.tmpls = c.tmpls.get();
                c.options.allow_image = false;
                c.options.allow_audio = false;
                c.options.enable_thinking = true;  // reasoning_budget -1 != 0
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
                out = render_server(it->second, context);
            }
#endif
            results.push_back(ojson{{"ok", true}, {"output", out}});
        } catch (const std::exception & e) {
            results.push_back(ojson{{"ok", false}, {"error", std::string(e.what())}});
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

// Tokenizes text with llama.cpp's own tokenizer (src/llama-vocab.cpp and its unicode tables),
// the code Ollama's llama runner calls (llama_tokenize), for gotmpl2jinja's token-level checks.
//
// Built by gotmpl2jinja.cpp.build against the llama.cpp sources vendored in the PyPI sdist of
// llama-cpp-python (0.3.36); nothing of llama.cpp is copied here: this file only calls its API.
// A vocabulary is loaded as llama_model_load does with vocab_only: a llama_model_loader on the
// GGUF, the architecture checked, then llama_vocab::load with that architecture's keys; the
// tensors are never read.
//
// One request per line on stdin, one answer per line on stdout (JSON); every request names its
// GGUF ("gguf": path), loaded once and kept:
//   {"id": n, "gguf": p, "op": "facts"}
//     -> {"id": n, "facts": {"type": "SPM"|"BPE"|..., "model": "llama"|"gpt2"|...,
//         "pre": "...", "add_bos": b, "add_eos": b, "bos": id, "eos": id, "bos_text": "...",
//         "eos_text": "...", "n_tokens": n}}      (ids -1 and texts "" when there is none)
//   {"id": n, "gguf": p, "op": "tokenize", "texts": [...], "add_special": b, "parse_special": b}
//     -> {"id": n, "ids": [[...], ...]}             (llama_tokenize on each text)
//   {"id": n, "gguf": p, "op": "pieces", "ids": [...]}
//     -> {"id": n, "pieces": ["...", ...]}          (llama_token_to_piece, special tokens as
//                                                    their text, as common_token_to_piece does)
//   {"id": n, "gguf": p, "op": "known", "texts": [...]}
//     -> {"id": n, "known": [b, ...]}               (each text is one special token's text)
//   any failure -> {"id": n, "error": "..."}       (llama.cpp's own message)

#include "llama-arch.h"
#include "llama-impl.h"
#include "llama-model-loader.h"
#include "llama-vocab.h"
#include "llama.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using ojson = nlohmann::ordered_json;

static std::string g_last_error;

// llama.cpp's log: errors are kept for the answer, the rest (its loading chatter) dropped.
static void on_log(ggml_log_level level, const char * text, void *) {
    if (level == GGML_LOG_LEVEL_ERROR) {
        g_last_error += text;
    }
}

static std::map<std::string, std::unique_ptr<llama_vocab>> g_vocabs;

static const llama_vocab & vocab_of(const std::string & path) {
    auto it = g_vocabs.find(path);
    if (it != g_vocabs.end()) {
        return *it->second;
    }
    g_last_error.clear();
    std::vector<std::string> splits;
    // llama_model_default_params()'s loader settings (llama-model.cpp is not compiled in)
    llama_model_loader ml(nullptr, nullptr, nullptr, path, splits, nullptr, LLAMA_LOAD_MODE_AUTO,
                          /*check_tensors*/ false, /*no_alloc*/ false, /*load_mtp*/ false,
                          /*kv_overrides*/ nullptr, /*tensor_buft_overrides*/ nullptr);
    const llm_arch arch = ml.get_arch();
    if (arch == LLM_ARCH_UNKNOWN) {
        throw std::runtime_error("unknown model architecture: '" + ml.get_arch_name() + "'");
    }
    auto vocab = std::make_unique<llama_vocab>();
    vocab->load(ml, LLM_KV(arch));
    return *g_vocabs.emplace(path, std::move(vocab)).first->second;
}

static std::string piece(const llama_vocab & vocab, llama_token token) {
    std::string out(16, '\0');
    int32_t n = vocab.token_to_piece(token, out.data(), (int32_t) out.size(), 0, true);
    if (n < 0) {
        out.resize(-n);
        n = vocab.token_to_piece(token, out.data(), (int32_t) out.size(), 0, true);
    }
    out.resize(n < 0 ? 0 : n);
    return out;
}

static ojson facts(const llama_vocab & vocab) {
    const llama_token bos = vocab.token_bos();
    const llama_token eos = vocab.token_eos();
    return ojson{
        {"type", vocab.type_name()},
        {"model", vocab.get_tokenizer_model()},
        {"pre", vocab.get_tokenizer_pre()},
        {"add_bos", vocab.get_add_bos()},
        {"add_eos", vocab.get_add_eos()},
        {"bos", bos},
        {"eos", eos},
        {"bos_text", bos == LLAMA_TOKEN_NULL ? std::string() : piece(vocab, bos)},
        {"eos_text", eos == LLAMA_TOKEN_NULL ? std::string() : piece(vocab, eos)},
        {"n_tokens", vocab.n_tokens()},
    };
}

static ojson handle(const ojson & request) {
    const auto id = request.value("id", 0);
    const std::string op = request.at("op").get<std::string>();
    const llama_vocab & vocab = vocab_of(request.at("gguf").get<std::string>());
    if (op == "facts") {
        return ojson{{"id", id}, {"facts", facts(vocab)}};
    }
    if (op == "tokenize") {
        const bool add_special = request.at("add_special").get<bool>();
        const bool parse_special = request.at("parse_special").get<bool>();
        ojson all = ojson::array();
        for (const auto & text : request.at("texts")) {
            all.push_back(vocab.tokenize(text.get<std::string>(), add_special, parse_special));
        }
        return ojson{{"id", id}, {"ids", all}};
    }
    if (op == "pieces") {
        ojson all = ojson::array();
        for (const auto & token : request.at("ids")) {
            all.push_back(piece(vocab, token.get<llama_token>()));
        }
        return ojson{{"id", id}, {"pieces", all}};
    }
    if (op == "known") {
        ojson all = ojson::array();
        for (const auto & text : request.at("texts")) {
            const std::vector<llama_token> ids = vocab.tokenize(text.get<std::string>(), false, true);
            all.push_back(ids.size() == 1 && (vocab.is_control(ids[0]) || vocab.is_user_defined(ids[0])));
        }
        return ojson{{"id", id}, {"known", all}};
    }
    throw std::runtime_error("unknown op " + op);
}

int main() {
    llama_log_set(on_log, nullptr);
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        ojson answer;
        int id = 0;
        try {
            const ojson request = ojson::parse(line);
            id = request.value("id", 0);
            answer = handle(request);
        } catch (const std::exception & e) {
            std::string why = e.what();
            if (!g_last_error.empty() && why.find("failed to load model") != std::string::npos) {
                why = g_last_error;
            }
            while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) {
                why.pop_back();
            }
            answer = ojson{{"id", id}, {"error", why}};
        }
        std::cout << answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        std::cout.flush();
    }
    return 0;
}

"""The conversations of Ollama's own TestTemplate, shared by every test that checks Ollama's
expected outputs (fixtures/corpus/ollama/SOURCE.md describes them)."""

from __future__ import annotations

_USER = {"role": "user", "content": "Hello, how are you?"}
_ASSISTANT = {"role": "assistant", "content": "I'm doing great. How can I help you today?"}
_USER2 = {"role": "user", "content": "I'd like to show off how chat templating works!"}
_SYSTEM = {"role": "system", "content": "You are a helpful assistant."}

#: case name (the file name under testdata/<template>.gotmpl/) → the conversation's messages.
TESTDATA_CASES: dict[str, list[dict[str, str]]] = {
    "user": [_USER],
    "user-assistant-user": [_USER, _ASSISTANT, _USER2],
    "system-user-assistant-user": [_SYSTEM, _USER, _ASSISTANT, _USER2],
}

#: SOURCE.md: through the legacy path these five built-ins end with one extra space.
LEGACY_TRAILING_SPACE = {"chatqa", "llama2-chat", "mistral-instruct", "openchat", "vicuna"}

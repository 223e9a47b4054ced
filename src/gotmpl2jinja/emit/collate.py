"""Ollama's collation of the messages (consecutive same-role messages merged, the
system messages joined) as Jinja, written once in the prelude.

May depend on: `emit.values`, `emit.runtime`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime import item_or
from gotmpl2jinja.emit.values import INDENT


#: A message's content as Ollama's template sees it: llama-server passes an empty content as
#: null (a Hugging Face caller passes the string), and Go's is then "".
def content_of(message: str) -> str:
    """The content of the message `message` as Ollama reads it: a content that is not a
    string (llama-server's null for an empty one) is ''."""
    return f"({message}['content'] if {message}['content'] is string else '')"


MESSAGE_CONTENT = content_of("message")

#: The keys of a request's message that Ollama's struct has and that may be left out, each with
#: the value Go's zero prints like (in the order of api.Message's fields).
MESSAGE_DEFAULTS = {"reasoning_content": "''", "tool_calls": "[]", "name": "''",
                    "tool_call_id": "''"}
OPTIONAL_MESSAGE_KEYS = tuple(MESSAGE_DEFAULTS)


def merges_into_previous(at: str, role: str) -> str:
    """Ollama's collate merges message `at` (its role `role`, lower-cased) into the one before
    when their lower-cased roles are equal, tool messages excepted."""
    return f"{at} > 0 and {role} != 'tool' and messages[{at} - 1]['role']|lower == {role}"


def system_join(collated: bool) -> list[str]:
    """Ollama's .System: the content of every system message, joined by a blank line (each is
    written after one, and the first one cut off). After collate every role is in lower case
    already, so only a prelude without it lower-cases them (a filter call per message is dear
    on llama.cpp)."""
    role = "message['role']" if collated else "message['role']|lower"
    return [
        "{#- Ollama's .System: every system message, joined. #}",
        "{%- set system %}",
        "{%- for message in messages %}",
        f"    {{%- if {role} == 'system' %}}",
        f"        {{{{- '\\n\\n' ~ {MESSAGE_CONTENT} }}}}",
        "    {%- endif %}",
        "{%- endfor %}",
        "{%- endset %}",
        "{%- set system = system[2:] %}",
    ]


class Collating:
    """Emitter method that writes the collation block (a mixin of `Emitter`)."""

    def collate(self, system: bool) -> list[str]:
        """Ollama's collate (roles lower-cased, consecutive messages of one role except tool
        merged) and .System (every system message, joined).

        Most requests need no change: a first pass only marks what collate might change (in
        a block `set`, so no namespace is read), with the roles joined into one string (a
        filter call is dear on llama.cpp, a loop step on jinja2): a role not in lower case, two
        like roles in a row (a substring, for the three roles that merge), and in one loop a
        content that is not a string or a role other than system, user, assistant and tool
        (an unknown role could hide a pair from the substrings, so it takes the long way);
        where it marks nothing the request's own list is used. Otherwise one
        pass copies nothing where nothing changes: the list is cut and joined only around a
        merge or a message that changes (a role to lower-case, a content that is not a
        string), never rebuilt message by message (a Jinja list grows only by copying)."""
        optional = [key for key in OPTIONAL_MESSAGE_KEYS if key in self.message_fields]
        fields = ["'role': role", f"'content': {MESSAGE_CONTENT}",
                  *(f"'{key}': {item_or('message', key, MESSAGE_DEFAULTS[key])}"
                    for key in optional)]
        merged = ["'role': role",
                  f"'content': previous['content'] ~ '\\n\\n' ~ {MESSAGE_CONTENT}",
                  *(f"'{key}': previous['{key}']" for key in optional)]
        changes = "message['content'] is not string or message['role'] != role"
        lines = [
            "{#- Ollama's collate: roles lower-cased, consecutive messages of one role (except"
            " tool) merged. The request's list is kept where that changes nothing, else cut"
            " only around what changes. #}",
            "{%- set collated_roles = '\\n' ~ messages|map(attribute='role')|join('\\n\\n')"
            " ~ '\\n' %}",
            "{%- set collated_marks %}",
            "{%- if collated_roles|lower != collated_roles"
            " or '\\nsystem\\n\\nsystem\\n' in collated_roles"
            " or '\\nuser\\n\\nuser\\n' in collated_roles"
            " or '\\nassistant\\n\\nassistant\\n' in collated_roles %}",
            "    {{- 'x' }}",
            "{%- else %}",
            "    {%- for collated_message in messages %}",
            "        {%- if collated_message['content'] is not string"
            " or collated_message['role'] not in"
            " ['system', 'user', 'assistant', 'tool'] %}",
            "            {{- 'x' }}",
            "        {%- endif %}",
            "    {%- endfor %}",
            "{%- endif %}",
            "{%- endset %}",
            "{%- if collated_marks %}",
            *(INDENT + line for line in [
                "{%- set collated = namespace(messages=[], start=0, group=none) %}",
                "{%- for collated_at in range(messages|length) %}",
                "    {%- set message = messages[collated_at] %}",
                "    {%- set role = message['role']|lower %}",
                f"    {{%- set merges = {merges_into_previous('collated_at', 'role')} %}}",
                "    {%- set merged_next = collated_at + 1 < messages|length and role != 'tool'"
                " and messages[collated_at + 1]['role']|lower == role %}",
                "    {%- if merges %}",
                "        {%- set previous = collated.group %}",
                "        {%- set collated.group = {" + ", ".join(merged) + "} %}",
                f"    {{%- elif merged_next or {changes} %}}",
                "        {%- set collated.messages = collated.messages"
                " + messages[collated.start:collated_at] %}",
                "        {%- set collated.group = {" + ", ".join(fields) + "} %}",
                "    {%- endif %}",
                f"    {{%- if not merged_next and (merges or {changes}) %}}",
                "        {%- set collated.messages = collated.messages + [collated.group] %}",
                "        {%- set collated.start = collated_at + 1 %}",
                "    {%- endif %}",
                "{%- endfor %}",
                "{%- set messages = collated.messages + messages[collated.start:] %}",
            ]),
            "{%- endif %}",
        ]
        if system:
            lines += system_join(collated=True)
        return lines

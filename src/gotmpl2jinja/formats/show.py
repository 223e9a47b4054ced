"""Readable and JSON views of a parsed template, with Ollama's parse-time facts.

People debugging a translation need to see what Go sees: the node tree (with line:col), the
exact text bytes after trimming, and which path Ollama will take. Both forms are derived from
the dataclasses generically, so they stay in step with `nodes.py`.

May depend on: `ollama`, `syntax`.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from gotmpl2jinja.ollama import facts as ollama
from gotmpl2jinja.syntax import nodes as n


def _node_type(node: n.Node) -> str:
    return type(node).__name__.removesuffix("Node") or "Node"


def node_to_dict(node: n.Node) -> dict[str, Any]:
    """One node as JSON-ready data: "type", "line", "col", then its own fields."""
    out: dict[str, Any] = {"type": _node_type(node), "line": node.pos.line, "col": node.pos.col}
    for f in fields(node):
        if f.name == "pos":
            continue
        out[f.name] = _value(getattr(node, f.name))
    return out


def _value(value: Any) -> Any:
    if isinstance(value, n.Node):
        return node_to_dict(value)
    if isinstance(value, list):
        return [_value(v) for v in value]
    if isinstance(value, str):
        # Raw bytes from \x escapes are kept as lone surrogates; show them as \udcXX.
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _facts(template: n.Template) -> dict[str, Any]:
    """Ollama's facts; a template Ollama rejects says why instead."""
    try:
        return {
            "vars": ollama.vars(template),
            "path": ollama.execute_path(template),
            "response_appended": ollama.appends_response(template),
        }
    except ollama.OllamaTemplateError as exc:
        return {"ollama_error": str(exc)}


def ast_to_json(template: n.Template) -> str:
    """A stable JSON form (keys in a fixed order, two-space indent)."""
    doc = {
        "name": template.name,
        "ollama": _facts(template),
        "root": node_to_dict(template.root),
        "defines": {name: node_to_dict(body) for name, body in template.defines.items()},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def ast_to_text(template: n.Template) -> str:
    """An indented tree, one node per line, each with line:col."""
    lines: list[str] = []
    facts = _facts(template)
    if "ollama_error" in facts:
        lines.append(f"ollama: rejected: {facts['ollama_error']}")
    else:
        lines.append(f"ollama: path={facts['path']} response_appended="
                     f"{str(facts['response_appended']).lower()}")
        lines.append(f"ollama: vars={', '.join(facts['vars'])}")
    lines.append(f"template {template.name}")
    _text_tree(template.root, 1, lines)
    for name, body in template.defines.items():
        lines.append(f"define {json.dumps(name)}")
        _text_tree(body, 1, lines)
    return "\n".join(lines)


def _label(node: n.Node) -> str:
    """The node's own data in one line (children are printed below it)."""
    if isinstance(node, n.TextNode):
        return f"Text {json.dumps(_value(node.text), ensure_ascii=False)}"
    if isinstance(node, n.CommentNode):
        return f"Comment {json.dumps(node.text, ensure_ascii=False)}"
    if isinstance(node, (n.FieldNode, n.VariableNode)):
        prefix = "." if isinstance(node, n.FieldNode) else ""
        return f"{_node_type(node)} {prefix}{'.'.join(node.ident)}"
    if isinstance(node, n.ChainNode):
        return f"Chain .{'.'.join(node.field)}"
    if isinstance(node, n.IdentifierNode):
        return f"Identifier {node.ident}"
    if isinstance(node, n.StringNode):
        return f"String {node.quoted}"
    if isinstance(node, n.NumberNode):
        kinds = [k for k in ("int", "uint", "float", "complex") if getattr(node, f"is_{k}")]
        return f"Number {node.text} ({'/'.join(kinds)})"
    if isinstance(node, n.BoolNode):
        return f"Bool {str(node.value).lower()}"
    if isinstance(node, n.PipeNode):
        decl = ", ".join(v.ident[0] for v in node.decl)
        if decl:
            return f"Pipe {decl} {'=' if node.is_assign else ':='}"
        return "Pipe"
    if isinstance(node, n.TemplateNode):
        how = "block" if node.from_block else "template"
        return f"Template ({how}) {json.dumps(node.name)}"
    return _node_type(node)


def _text_tree(node: n.Node, depth: int, lines: list[str]) -> None:
    lines.append(f"{'  ' * depth}{node.pos.line}:{node.pos.col} {_label(node)}")
    if isinstance(node, n.BranchNode):
        _text_tree(node.pipe, depth + 1, lines)
        lines.append(f"{'  ' * (depth + 1)}then:")
        _text_tree(node.list, depth + 2, lines)
        if node.else_list is not None:
            lines.append(f"{'  ' * (depth + 1)}else:")
            _text_tree(node.else_list, depth + 2, lines)
        return
    if isinstance(node, n.ChainNode):
        _text_tree(node.node, depth + 1, lines)
        return
    for child in node.children():
        if isinstance(node, n.PipeNode) and any(child is d for d in node.decl):
            continue
        _text_tree(child, depth + 1, lines)

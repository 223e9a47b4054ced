"""One test per engine fact the emitted dialect relies on (docs/jinja-portability.md, §4).

Each probe is a small template rendered on all six raw engines; the expected value per engine
is what that engine was measured to do (2026-12-01: jinja2 3.1 as transformers configures it,
@huggingface/jinja 0.5.11, minijinja's Python binding with and without trim/lstrip, llama.cpp
`common/jinja` from llama-cpp-python 0.3.36, minja from 0.3.16). If an engine changes, its
test fails and the portability doc and the translator's choices need a second look.
"""

from __future__ import annotations

from typing import Any

import pytest

from gotmpl2jinja.engines.registry import get_engine
from gotmpl2jinja.errors import RenderError

ENGINES = ["jinja2", "hfjinja", "minijinja", "minijinja-trim", "llamacpp", "minja"]
ERROR = object()  # the engine refuses the template or fails rendering it

#: Shorthands: the same value on every engine but those named.
def everywhere(value: str, **others: Any) -> dict[str, Any]:
    table: dict[str, Any] = dict.fromkeys(ENGINES, value)
    table.update({name.replace("_", "-"): v for name, v in others.items()})
    return table


PROBES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # --- why literals carry no \u escape and no control character --------------------------
    "unicode escape in a literal": (
        "{{ 'a\\u0041b' }}", {}, everywhere("aAb", llamacpp=ERROR, minja="au0041b")),
    "portable escapes": (
        "{{ '\\n\\t\\\\\\'\"' }}", {}, everywhere("\n\t\\'\"")),
    # --- why a literal is cut after U+2028/U+2029 before `{%`, and inside `{% generation` ------
    # (@huggingface/jinja's preprocessing rewrites the source, literals included: lstrip_blocks
    # at every JavaScript line start, and {% generation %} tags cut out; runtime.quoted)
    "lstrip after U+2028 inside a literal": (
        "{{ '\u2028 {%' }}", {}, everywhere("\u2028 {%", hfjinja="\u2028{%")),
    "lstrip after U+2029 and a tab inside a literal": (
        "{{ 'a\u2029\t{#b' }}", {}, everywhere("a\u2029\t{#b", hfjinja="a\u2029{#b")),
    "a generation tag inside a literal": (
        "{{ 'a{% generation %}b' }}", {}, everywhere("a{% generation %}b", hfjinja="ab")),
    "an endgeneration tag with a dash inside a literal": (
        "{{ 'a {%- endgeneration %} b' }}", {},
        everywhere("a {%- endgeneration %} b", hfjinja="a b")),
    "the same literals cut where hf.js would rewrite them": (
        "{{ ('\u2028' ~ ' {%') ~ ('a{' ~ '% generation %}b') }}", {},
        everywhere("\u2028 {%a{% generation %}b")),
    # --- why no method is called on a call's result ----------------------------------------
    "method on a call's result": (
        "{% macro f() %}a-b{% endmacro %}{{ f().split('-')|length }}", {},
        everywhere("2", minja=ERROR)),
    "method on a variable holding it": (
        "{% macro f() %}a-b{% endmacro %}{% set r = f() %}{{ r.split('-')|length }}", {},
        everywhere("2")),
    "method on a parenthesized call's result": (
        "{% macro f() %}a-b{% endmacro %}{{ (f()).split('-')|length }}", {},
        everywhere("2")),
    # --- why the runtime writes `else 0 - 1`, never `else -1` -------------------------------
    "unary minus after else": (
        "{{ 1 if false else -1 }}", {}, everywhere("-1", llamacpp=ERROR)),
    "subtraction after else": (
        "{{ 1 if false else 0 - 1 }}|{{ (-1) }}", {}, everywhere("-1|-1")),
    # --- why small integers skip the float machinery (runtime.SMALL_INT) -----------------------
    "integer test of decoded JSON numbers": (
        "{% for x in xs %}{{ x is integer }},{% endfor %}|{{ (xs[0]|string) ~ (xs[3]|string) }}",
        {"xs": [5, 5.0, -0.0, -7, True]},
        everywhere("True,False,False,True,False,|5-7", hfjinja="true,false,false,true,false,|5-7")),
    # --- why float constants are written in plain decimals (emit.float_literal) ------------
    "float literal with an exponent": (
        "{{ (1e+21 + 0.0) == 1000000000000000000000.0 }}", {},
        everywhere("True", hfjinja=ERROR, llamacpp=ERROR, minja=ERROR)),
    "float literal in plain decimals": (
        "{{ 1000000000000000000000.0 > 999999999999999900000.0 }}|{{ 0.0000001 < 0.000001 }}",
        {}, everywhere("True|True", hfjinja="true|true")),
    "subnormal float literal": (
        "{{ 0." + "0" * 322 + "5 > 0.0 }}", {},
        everywhere("True", hfjinja="true", llamacpp=ERROR)),
    "subnormal as a product": (
        "{{ (1.0 / 4503599627370496.0 * 0." + "0" * 307 + "22250738585072014) > 0.0 }}", {},
        everywhere("True", hfjinja="true")),
    # --- why a helper only one macro calls is defined inside it (runtime._define) -----------
    "macro defined inside a macro's branch, recursive, calling a sibling": (
        "{% macro outer(x) %}{% if x %}{% macro a(n) %}<{{ n }}>{% endmacro %}"
        "{% macro b(n) %}{{ a(n) }}{% if n > 0 %}{{ b(n - 1) }}{% endif %}{% endmacro %}"
        "{{ b(x) }}{% else %}-{% endif %}{% endmacro %}{{ outer(2) }}{{ outer(0) }}{{ outer(1) }}",
        {}, everywhere("<2><1><0>-<1><0>")),
    # --- why key order comes from a dictsort probe ------------------------------------------
    "plain dictsort order": (
        "{% for k, v in d|dictsort %}{{ k }}{% endfor %}", {"d": {"b": 1, "a": 2, "Z": 3}},
        everywhere("abZ", llamacpp="Zab", minja="Zab")),
    "case-sensitive dictsort": (
        "{% for k, v in d|dictsort(case_sensitive=true) %}{{ k }}{% endfor %}",
        {"d": {"b": 1, "a": 2, "Z": 3, "é": 4}}, everywhere("Zabé", minja=ERROR)),
    "the dictsort probe": (
        "{{ ({'B': 0, 'a': 0}|dictsort)[0][0] == 'B' }}", {},
        everywhere("False", hfjinja="false", minja="True")),
    "string less-than": (
        "{{ 'B' < 'a' }}", {}, everywhere("True", hfjinja=ERROR, llamacpp=ERROR)),
    "sort filter": (
        "{{ ['b', 'A']|sort|join(',') }}", {}, everywhere("A,b", minja=ERROR)),
    "items filter keeps insertion order": (
        "{% for k, v in d|items %}{{ k }}{% endfor %}", {"d": {"b": 1, "a": 2}},
        everywhere("ba")),
    "items order of array-index keys": (  # JavaScript objects list them first
        "{% for k, v in d|items %}{{ k }},{% endfor %}", {"d": {"a": 1, "10": 2, "b": 3, "01": 4}},
        everywhere("a,10,b,01,", hfjinja="10,a,b,01,")),
    # --- why macro variables have names of their own ----------------------------------------
    "a macro's sets and parameters stay its own": (
        "{% macro f(n) %}{% set x = n %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{{ x }}"
        "{% endmacro %}{{ f(2) }}", {}, everywhere("012", minja="000")),
    "loop variables survive a macro call": (
        "{% macro f(n) %}{% for st in [{'x': n}] %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}"
        "{{ st.x }}{% endfor %}{% endmacro %}{{ f(2) }}", {}, everywhere("012")),
    # --- why a map's truth is its length ----------------------------------------------------
    "truth of an empty mapping": (
        "{{ 'T' if {} else 'F' }}{{ 'T' if [] else 'F' }}", {}, everywhere("FF", minja="TF")),
    # --- why numbers are printed by the runtime macros --------------------------------------
    "engine prints shortest float digits": (
        "{{ ((0.30000000000000004 ~ '')|length) > 12 }}", {},
        everywhere("True", hfjinja="true", llamacpp="False", minja="False")),
    "a float halfway between two shortest candidates (Go takes the even one)": (
        "{{ 1500904153225761.25 ~ '' }}", {},
        everywhere("1500904153225761.2", minijinja="1500904153225761.3",
                   minijinja_trim="1500904153225761.3", llamacpp="1500904153225761.25",
                   minja="1500904153225761.250000")),
    "float concatenated": (
        "{{ 0.1 ~ '' }}", {}, everywhere("0.1", minja="0.100000")),
    # --- how _exact_float_parts reads llama.cpp's digits and computes the rest -----------------
    "float as a string (the `%.6g` probe: `0.5|string` is `0.5`)": (
        "{{ 1234567.0|string }}|{{ 0.00000015|string }}|{{ (0.5|string) == '0.5' }}", {},
        everywhere("1234567.0|1.5e-07|True", hfjinja="1234567.0|1.5e-7|true",
                   minijinja="1234567.0|0.00000015|True",
                   minijinja_trim="1234567.0|0.00000015|True",
                   llamacpp="1.23457e+06|1.5e-07|True", minja="1234567.000000|0.000000|False")),
    "string to float reads every digit, correctly rounded": (
        "{{ ('0.30000000000000004'|float) == 0.30000000000000004 }}"
        "|{{ ('1.23457e+06'|float) == 1234570.0 }}", {},
        everywhere("True|True", hfjinja="true|true", minja=ERROR)),
    "a conditional expression evaluates only the branch it takes": (
        "{{ ('1'|float) if false else 'lazy' }}", {}, everywhere("lazy")),
    "float arithmetic is binary64, rounded to nearest (Dekker's exact product)": (
        "{%- set b = 100000000000.0 -%}{%- set p = a * b -%}{%- set c = a * 134217729.0 -%}"
        "{%- set ah = c - (c - a) -%}{%- set al = a - ah -%}{%- set c = b * 134217729.0 -%}"
        "{%- set bh = c - (c - b) -%}{%- set bl = b - bh -%}"
        "{%- set lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl -%}"
        "{{ lo * 4194304.0 == 0 - 2409677.0 }}|{{ ((p - 16)|int)|string }}",
        {"a": 214147.74465493287},
        everywhere("True|21414774465493272", hfjinja="true|21414774465493270")),
    "string to int reads at most 31 bits": (
        "{{ '2147483648'|int }}|{{ '9999999'|int }}", {},
        everywhere("2147483648|9999999", llamacpp="0|9999999")),
    # --- how Go's byte and rune counts are computed (runtime.go_len, go_runes) -------------
    "what |length counts (the STRING_UNIT probe)": (
        "{{ '\U0001F600'|length }}", {}, everywhere("1", hfjinja="2", llamacpp="4", minja="4")),
    "slices count what |length counts, but hf.js's count code points": (
        "{{ s[1:2] }}", {"s": "\U0001F600é"}, everywhere("é", hfjinja="é", llamacpp="\ufffd",
                                                        minja="\ufffd")),
    "code points selected by the ge test": (
        "{{ s|list|select('ge', '\u0800')|list|join(',') }}", {"s": "aé\u0800\U0001F600"},
        everywhere("\u0800,\U0001F600", hfjinja=ERROR, llamacpp=ERROR, minja=ERROR)),
    "string less-than by code point where |length counts code points": (
        "{{ '\uffff' < '\U00010000' }}", {}, everywhere("True", hfjinja=ERROR, llamacpp=ERROR)),
    "case-sensitive sort of strings is by code unit": (
        "{{ (['b', 'A', '\u0130', 'a', '\u0080']|sort(case_sensitive=true))|join(',') }}", {},
        everywhere("A,a,b,\u0080,\u0130", minja=ERROR)),
    "plain sort of strings folds case": (  # İ lower-cases to i + U+0307, before U+0080
        "{{ (['\u0130', '\u0080']|sort)[0] }}", {}, everywhere("\u0130", llamacpp="\u0080",
                                                           minja=ERROR)),
    "split on a continuation byte where |length counts bytes": (
        "{{ s.split(('\u00a9')[1:2])|length }}", {"s": "é©"},
        everywhere(ERROR, minijinja="4", minijinja_trim="4", llamacpp="3", minja="3")),
    # --- why variables are never named like a built-in method ------------------------------
    "a namespace attribute named like a built-in": (
        "{%- set ns = namespace(length='v', items='v', keys='v', get='v', string='v') -%}"
        "{{ ns.length ~ ns.items ~ ns.keys ~ ns.get ~ ns.string }}", {},
        everywhere("vvvvv", llamacpp=ERROR)),
    # --- why a character is taken by a slice, not a subscript --------------------------------
    "string subscript": ("{{ 'abc'[1] }}", {}, everywhere("b", minja="")),
    "string slice of one character": ("{{ 'abc'[1:2] }}", {}, everywhere("b")),
    "sign of -0.0 through |string": (
        "{{ (x|string)[:1] }}", {"x": -0.0}, everywhere("-")),
    "int of a negative float": (
        "{{ (0 - 2.5)|int }}", {}, everywhere("-2", hfjinja="-3")),
    "integer arithmetic past 2**53": (
        "{{ (36028797018963968 + 2) - 36028797018963968 }}", {},
        everywhere("2", hfjinja="0", llamacpp="0")),
    "floor division": (
        "{{ 7 // 2 }}", {}, everywhere("3", llamacpp=ERROR)),
    "exponent in a number literal": (
        "{{ 1e-7 > 0 }}", {}, everywhere("True", hfjinja=ERROR, llamacpp=ERROR, minja=ERROR)),
    # --- strings -----------------------------------------------------------------------------
    "tojson of controls, quotes and non-ASCII": (
        "{{ s|tojson }}", {"s": "\x01\"\\é\u2028\x7f"},
        everywhere('"\\u0001\\"\\\\é\u2028\x7f"')),
    "tojson of HTML characters": (
        "{{ s|tojson }}", {"s": "<>&'"},
        everywhere('"<>&\'"', minijinja='"\\u003c\\u003e\\u0026\\u0027"',
                   minijinja_trim='"\\u003c\\u003e\\u0026\\u0027"')),
    "rstrip with an argument": (
        "{{ 'a00'.rstrip('0') }}", {}, everywhere("a", hfjinja="a00")),
    "length of a non-ASCII string": (
        "{{ 'é'|length }}", {}, everywhere("1", llamacpp="2", minja="2")),
    # --- how urlquery reads a character's UTF-8 bytes (runtime.go_query_escape) --------------
    "a character from its code point": (
        "{{ '%c'|format(233) }}", {},
        everywhere("é", hfjinja=ERROR, llamacpp="%c", minja=ERROR)),
    # --- how go_char writes a character from its code point (runtime._go_rune_text) ----------
    "a UTF-16 unit by subscript": (  # hf.js: `s[i]` is one unit, D800 and DE00 make U+10200
        "{{ '\U00010000'[0] ~ '\U0001F600'[1] }}|{{ '\U0001F600'[0:1] }}", {},
        everywhere("\U00010000|\U0001F600", hfjinja="\U00010200|\U0001F600",
                   llamacpp="\ufffd|\ufffd", minja="NoneNone|\ufffd")),
    "a character's bytes by slices, joined": (  # where |length counts bytes: é is C3 A9
        "{{ 'é'[0:1] ~ 'é'[1:2] }}", {}, everywhere("é")),
    "code points by tojson(ensure_ascii)": (
        "{{ s|tojson(ensure_ascii=true) }}", {"s": "é😀"},
        everywhere('"\\u00e9\\ud83d\\ude00"', minijinja=ERROR, minijinja_trim=ERROR,
                   minja=ERROR)),
    "split by one byte of a character": (  # where |length counts bytes: before 0xA9
        "{{ ('aé'.split('é'[1:2])[0])|length if '😀'|length == 4 else 'units' }}", {},
        everywhere("units", llamacpp="2", minja="2")),
    # --- why fields are read as m['k'] if 'k' in m, but never for a dict method's name --------
    "key test and subscript of a host's dict": (
        "{{ 'a' in d }},{{ 'b' in d }},{{ d['a'] }},{{ d['b'] if 'b' in d else 'none' }}",
        {"d": {"a": 1}}, everywhere("True,False,1,none", hfjinja="true,false,1,none")),
    "key test and subscript named like a dict method": (  # the Python binding's getattr
        "{{ 'items' in d }},{{ d['items'] is none }}", {"d": {"a": 1}},
        everywhere("False,False", hfjinja="false,false", minijinja="True,False",
                   minijinja_trim="True,False", minja="False,True")),
    # --- why collate's first pass marks in a block set, and paths merge in if blocks ----------
    "block set captures output": (
        "{%- set x %}{%- for i in [1, 2] %}{{- '\n\n' ~ i }}{%- endfor %}{%- endset %}"
        "[{{ x[2:] }}]{{ x is string }}", {},
        everywhere("[1\n\n2]True", hfjinja="[1\n\n2]true")),
    "set inside an if is seen after it": (
        "{%- set x = 0 %}{%- if true %}{%- set x = 1 %}{%- set y = 2 %}{%- endif %}{{ x }}{{ y }}",
        {}, everywhere("12")),
}


@pytest.fixture(scope="module")
def engines() -> dict[str, Any]:
    """Every raw engine: a missing one is an error here, not a skip (.ci/run builds them)."""
    return {name: get_engine(name) for name in ENGINES}


@pytest.mark.parametrize("probe", list(PROBES))
def test_engine_fact(engines: dict[str, Any], probe: str) -> None:
    template, context, expected = PROBES[probe]
    got: dict[str, Any] = {}
    for name, engine in engines.items():
        try:
            got[name] = engine.render(template, context)
        except RenderError:
            got[name] = ERROR
    shown = {n: ("ERROR" if v is ERROR else v) for n, v in got.items()}
    assert got == expected, shown


@pytest.mark.parametrize(("text", "gap"), [("a-b", ""), ("a\x00b", ""), ("a\x00b", " " * 100)])
def test_raise_exception_near_a_nul(engines: dict[str, Any], text: str, gap: str) -> None:
    """llama.cpp quotes the source around a failing call in its error and passes the message on
    as a C string: a NUL there cuts it, and the raise no longer reads as the template's own;
    100 spaces inside the expression keep it out (the translator puts them around each
    raise_exception of a template with a NUL)."""
    from gotmpl2jinja.engines.base import TemplateRaised

    template = "{{ '" + text + "' ~" + gap + "raise_exception('boom')" + gap + "}}"
    kinds = {}
    for name, engine in engines.items():
        try:
            engine.render(template, {})
            kinds[name] = "rendered"
        except TemplateRaised as exc:
            kinds[name] = f"raised {exc}"
        except RenderError:
            kinds[name] = "engine error"
    expected = dict.fromkeys(ENGINES, "raised boom")
    if "\x00" in text and not gap:
        expected["llamacpp"] = "engine error"
    assert kinds == expected

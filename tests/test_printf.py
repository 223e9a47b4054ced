"""printf and html: Go's format-string grammar, and Go's fmt output on every raw engine.

The expected bytes are Go's own (the reference renderer runs text/template); the parse tests
spell out, by hand, what Go's doPrintf reads in a directive.
"""

from __future__ import annotations

import re

import pytest
from everywhere import (
    raises_everywhere,
    renders_everywhere,
    renders_everywhere_as_go,
    verified,
)

from gotmpl2jinja.emit import translate
from gotmpl2jinja.emit.gofmt import Verb, parse_printf
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.ollama import reference


def test_a_directive_is_flags_width_precision_and_verb() -> None:
    assert parse_printf("a%-+05.3xb") == [
        "a", Verb("%-+05.3x", "x", "0+-", 5, 3), "b"]
    assert parse_printf("%%|%5%|%.d|%") == ["%|%|", Verb("%.d", "d", precision=0), "|",
                                            Verb("%", "")]
    assert parse_printf("%5.") == [Verb("%5.", ".", width=5)]  # a lone final `.` is the verb
    assert parse_printf("%[2]d%*d") == [Verb("%[2]d", "d", indexed=True, arg=2),
                                        Verb("%*d", "d", star=True)]
    # Go's argNumber: a width or a precision after an index, or an index that is no number,
    # is a bad index; one past the `.` or before the verb is fine; `%` after an index is kept
    assert parse_printf("%[1]2d|%[1].2d|%[x][1]d|%.[2]d|%5[2]d|%[2]%") == [
        Verb("%[1]2d", "d", width=2, indexed=True, arg=1, bad_index=True), "|",
        Verb("%[1].2d", "d", precision=2, indexed=True, arg=1, bad_index=True), "|",
        Verb("%[x][1]d", "d", indexed=True, arg=1, bad_index=True), "|",
        Verb("%.[2]d", "d", precision=0, indexed=True, arg=2), "|",
        Verb("%5[2]d", "d", width=5, indexed=True, arg=2), "|",
        Verb("%[2]%", "%", indexed=True, arg=2)]
    assert parse_printf("%12345678d!") == [Verb("%12345678d!", "")]  # Go's tooLarge


#: Each template prints every directive on the int range index, a string, booleans, floats
#: and constants; 0, 1, 2… with two-message conversations cover zero, sign and base prefixes.
PRINTF_TEMPLATES = [
    '{{ range $i, $m := .Messages }}{{ printf "[%5d|%-5d|%05d|%+d|% d|%x|%#x|%X|%#o|%O|%b|'
    '%#b|%.3d|%8.3d|%.0d|%5.0d|%v|%+v|%#v|%05v|%T|%5T]" $i $i $i $i $i $i $i $i $i $i $i $i'
    " $i $i $i $i $i $i $i $i $i $i }}{{ end }}",
    '{{ range $i, $m := .Messages }}{{ printf "%-+05d|%0-5d|%+05d|% 05d|%#5x|%#-8X|%08.3x|'
    '%-8.3o" $i $i $i $i $i $i $i $i }}{{ end }}{{ printf "%d %x %+d %5.3X %o %#O" -42 -255 -1'
    " -7 -8 9 }}",
    # %f, %F, %e, %E of constants: the exact binary value rounded half to even (2.5 → 2,
    # 2.675 → 2.67, 0.25 → 0.2), the sign kept at zero, a subnormal's digits
    '{{ printf "%5.2f|%f|%.0f|%+08.3f|%-9.1f|% e|%.3E|%F|%.2f|%.1f|%.2f|%e" 1.5 0.1 2.5'
    " -3.14159 1e21 123456.789 0.000123 1.0 2.675 0.25 -0.001 5e-324 }}"
    "{{ range .Messages }}{{ end }}",
    # %x, %X of float constants: Go's hex float, normalised (subnormals too), signs, padding
    '{{ printf "%x|%X|%+x|% x|%012x|%-12x|%x|%x|%x|%x|%x|%x|%012X|%014x" 1.5 1.5 1.5 1.5 1.5'
    " 0.1 0.0 1e6 5e-324 2.0 -0.0 1.7976931348623157e308 2.5e-310 -2.0 }}"
    "{{ range .Messages }}{{ end }}",
    # booleans pad with zeros too; bad verbs print %!verb(type=value) with the flags
    '{{ range $i, $m := .Messages }}{{ printf "{%t|%5t|%-6t.|%05t|%v|%d|%+s|%5s|%#t}" (eq $i'
    ' 1) (eq $i 1) (eq $i 0) true $m.Role $m.Role $i $i $i }}{{ end }}',
    # missing and extra operands, no verb, nil, floats by a verb they do not take
    '{{ range .Messages }}{{ printf "<%d %s %q>" .Role }}{{ printf "%d" 3 7 "x" true nil'
    ' 2.5 }}{{ printf "%d %" 1 }}{{ printf "%5v|%-6v|%s|%!" nil nil nil }}'
    '{{ printf "%d %s %t|%T" 1.5 2.5 .Content 0.5 }}{{ end }}',
    # strings: widths pad and precisions cut by runes (go_runes, go_truncate), zeros too
    '{{ range $i, $m := .Messages }}{{ printf "[%5s|%-6s|%05s|%.3s|%.0s|%5.2s|%-6.1v|%.1d|'
    '%08.2s|%.3s|%.10s|%5d]" .Content .Content .Content .Content .Content .Content .Role .Role'
    ' .Content "é😀ab" .Role .Content }}{{ end }}',
]


@pytest.mark.parametrize("source", PRINTF_TEMPLATES)
def test_printf_prints_what_go_prints_on_every_engine(source: str) -> None:
    verified(source, cases=12)


@pytest.mark.parametrize(("source", "message"), [
    ('{{ range .Tools }}{{ printf "%#v" . }}{{ end }}{{ range .Messages }}{{ end }}',
     "%v with a templateTool operand: Go syntax of the template's own types"),
    ('{{ printf "%[1]*d" 1 2 }}', "an argument index with `\\*`"),
])
def test_what_is_not_translated_says_which_directive(source: str, message: str) -> None:
    with pytest.raises(TranslationError, match=message):
        translate(source)


#: html: one string as is, anything else through Sprint (a nil as <no value>), then escaped;
#: a NUL becomes U+FFFD although no literal of the template holds one.
HTML_TEMPLATE = ('{{ range $i, $m := .Messages }}[{{ html .Content }}|{{ html $i "a" true nil 1.5'
                 ' .Role }}|{{ html }}|{{ html .Role .Content }}|{{ .Content | html }}|'
                 '{{ html "<&\'\\"x" }}]{{ end }}')


def test_html_escapes_what_go_escapes_on_every_engine() -> None:
    jinja = verified(HTML_TEMPLATE, cases=12)
    nul = {"messages": [{"role": "user", "content": "é\x00😀<\\u0000\x00&"}]}
    go = reference.render(HTML_TEMPLATE, nul)
    assert "\ufffd😀&lt;\\u0000\ufffd&amp;" in go  # the Go truth, as reviewed
    renders_everywhere(jinja, nul, go)


#: urlquery of text known only at run time: a content, a decoded-JSON value and map, a
#: message's struct, the tools' JSON, and a value through printf.
URLQUERY_TEMPLATE = ('{{ range $i, $m := .Messages }}[{{ urlquery .Content }}|'
                     '{{ urlquery .Role $i .Content }}|{{ urlquery . }}|{{ .Content | urlquery }}|'
                     '{{ urlquery (printf "%5s" .Content) }}{{ range .ToolCalls }}|'
                     '{{ urlquery .Function.Arguments }}{{ range $k, $v := .Function.Arguments }}'
                     ';{{ urlquery $v }}{{ end }}{{ end }}]{{ end }}{{ urlquery .Tools }}')

#: Every lead byte valid UTF-8 has (U+0080, U+00C0 … U+100000) and every continuation byte
#: (U+0080 … U+00BF), the edges of each length and of the surrogates, and ASCII's extremes.
EVERY_BYTE = ("".join(chr(c) for c in range(0x80, 0xC0))
              + "".join(chr(0xC0 + 64 * k) for k in range(29))
              + "".join(chr(0x800 if k == 0 else 0x1000 * k) for k in range(16))
              + "".join(chr(c) for c in (0x10000, 0x40000, 0x80000, 0xC0000, 0x100000))
              + "\x01\x1f \x7f\u07ff\ud7ff\ue000\uffff\U0010ffff~-_.+%/")


def test_urlquery_of_run_time_text_escapes_each_utf8_byte_on_every_engine() -> None:
    verified(URLQUERY_TEMPLATE, cases=30)
    source = "{{ range .Messages }}{{ urlquery .Content }}{{ end }}"
    jinja = translate(source)
    # by hand: a space is `+`, `~` stays, every other byte of the UTF-8 is %XX (NUL too)
    hand = {"messages": [{"role": "user", "content": "a b+é😀/~\x00"}]}
    assert reference.render(source, hand) == "a+b%2B%C3%A9%F0%9F%98%80%2F~%00"
    every = {"messages": [{"role": "user", "content": EVERY_BYTE}]}
    go = reference.render(source, every)
    assert go.startswith("%C2%80%C2%81") and "%F4%80%80%80%01%1F+%7F%DF%BF%ED%9F%BF" in go
    for conv in (hand, every):
        renders_everywhere(jinja, conv, reference.render(source, conv))


#: Characters Go's unicode.IsPrint refuses (NEL, a soft hyphen, the line and paragraph
#: separators, a BOM, private use, an unassigned and a tag character, ideographic and
#: no-break spaces) beside printable ones, ASCII controls, DEL, NUL and the ASCII js escapes.
NOT_PRINTABLE = ("\x85\xad\u2028\u2029\ufeff\ue000\u0378\U000e0001\U0010fffd\u3000\u00a0"
                 "é😀\x07\x0b\x1f\x7f\x00a<>&='\"\\")
JS_Q_TEMPLATE = ('{{ range .Messages }}[{{ js .Content }}|{{ printf "%q|%.2q|%-7q" .Content '
                 '.Content .Role }}|{{ js . }}{{ range .ToolCalls }}|{{ js .Function.Arguments }}'
                 '{{ range $k, $v := .Function.Arguments }};{{ printf "%q" $v }}{{ end }}{{ end }}'
                 ']{{ end }}{{ printf "%q" .Tools }}')


def test_js_and_q_of_run_time_text_escape_what_go_cannot_print_on_every_engine() -> None:
    verified(JS_Q_TEMPLATE, cases=30)
    source = '{{ range .Messages }}{{ js .Content }}|{{ printf "%q" .Content }}{{ end }}'
    jinja = translate(source)
    hand = {"messages": [{"role": "user", "content": "a\x85é<\x07😀\U000e0001"}]}
    # by hand: js writes what IsPrint refuses as \u%04X and `<` as \u003C; %q as \u%04x,
    # \U%08x past the BMP, and BEL as \a
    assert reference.render(source, hand) == ('a\\u0085é\\u003C\\u0007😀\\uE0001|'
                                              '"a\\u0085é<\\a😀\\U000e0001"')
    for conv in (hand, {"messages": [{"role": "user", "content": NOT_PRINTABLE + EVERY_BYTE}]}):
        want = reference.render(source, conv)
        renders_everywhere(jinja, conv, want)


#: %x and %X of strings and of the values whose text is strings and ints: a message, its calls
#: (the arguments by String(), their JSON), the arguments, the tools (String(): their JSON).
HEX_TEMPLATE = ('{{ range .Messages }}[{{ printf "%x|%X|%.3X|%-9.2x|%9x" .Content .Content '
                '.Content .Content .Role }}|{{ printf "%x" . }}|{{ printf "%6.3X" .ToolCalls }}'
                '{{ range .ToolCalls }}|{{ printf "%-5x" . }}|{{ printf "%x" .Function.Arguments }}'
                '{{ end }}]{{ end }}{{ printf "%x|%.4X" .Tools .Tools }}')


def test_printf_x_of_text_prints_its_utf8_bytes_in_hex_on_every_engine() -> None:
    jinja = verified(HEX_TEMPLATE, cases=30)
    conv = {"messages": [{"role": "user", "content": "hé😀"}, {"role": "assistant",
            "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}]}
    want = reference.render(HEX_TEMPLATE, conv)
    # by hand: h 68, é c3 a9, 😀 f0 9f 98 80; a precision counts bytes, the width pads spaces
    assert want.startswith("[68c3a9f09f9880|68C3A9F09F9880|68C3A9|68c3     | 75736572|")
    # a message's fields in hex (Images `[]`), the arguments by String(): `{"a":1}`
    assert "&{617373697374616e74   [] [{ {0 66 7b2261223a317d}}]  }" in want
    renders_everywhere(jinja, conv, want)


#: printf %d of every tool shape: no String method for %d, so fmt prints the structs field by
#: field, with widths on every string and number inside.
TOOL_SHAPES_D = ('{{ printf "%d" .Tools }}{{ range .Tools }}|{{ printf "%5d" . }}|'
                 '{{ printf "%-3d" .Function }}|{{ printf "%d" .Function.Parameters }}|'
                 '{{ printf "%d" .Function.Parameters.Properties }}'
                 '{{ range .Function.Parameters.Properties }}|{{ printf "%d" . }}{{ end }}'
                 '{{ end }}{{ if .Messages }}{{ end }}')


def test_printf_d_of_the_tool_shapes_prints_go_structs_on_every_engine() -> None:
    jinja = verified(TOOL_SHAPES_D, cases=40)
    # one by hand: fields in Go's order (a tool's Type Items Function; a property's AnyOf Type
    # Items Description Enum Properties Required), strings as %!d(string=…), nil any <nil>,
    # the nil nested-properties pointer 0, padded like every number
    flat = {"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "required": ["s"], "properties": {
                "s": {"type": ["string", "null"], "description": "d", "enum": ["a", 1.5]}}}}}]}
    prop = "{[] [%!d(string=string) %!d(string=null)] <nil> %!d(string=d) " \
        "[%!d(string=a) %!d(float64=1.5)] 0 []}"
    params = "{%!d(string=object) <nil> <nil> [%!d(string=s)] map[%!d(string=s):" + prop + "]}"
    padded = ("{%!d(string=function) <nil> {%!d(string=    f) %!d(string=     ) "
              "{%!d(string=object) <nil> <nil> [%!d(string=    s)] map[%!d(string=    s):"
              "{[] [%!d(string=string) %!d(string= null)] <nil> %!d(string=    d) "
              "[%!d(string=    a) %!d(float64=  1.5)]     0 []}]}}}")
    want = ("[{%!d(string=function) <nil> {%!d(string=f) %!d(string=) " + params + "}}]|"
            + padded + "|{%!d(string=f  ) %!d(string=   ) {%!d(string=object) <nil> <nil> "
            "[%!d(string=s  )] map[%!d(string=s  ):{[] [%!d(string=string) %!d(string=null)] "
            "<nil> %!d(string=d  ) [%!d(string=a  ) %!d(float64=1.5)] 0   []}]}}|" + params
            + "|map[%!d(string=s):" + prop + "]|" + prop)
    assert reference.render(TOOL_SHAPES_D, flat) == want
    renders_everywhere(jinja, flat, want)
    # a nested property's pointer is not nil: Go prints its address, the Jinja raises ADDRESS
    nested = {"messages": flat["messages"], "tools": [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": {"o": {
            "type": "object", "properties": {"x": {"type": "string"}}}}}}}]}
    assert re.search(r"\[\] [1-9][0-9]{6,} \[\]\}", reference.render(TOOL_SHAPES_D, nested))
    raises_everywhere(jinja, nested, "memory address")


def test_printf_v_with_a_width_of_a_property_pads_each_field_on_every_engine() -> None:
    """An api.ToolProperty has no String method: %7v prints its fields, the type by
    PropertyType's String, the nil nested-properties pointer as a padded `<nil>`."""
    source = ('{{ range .Tools }}{{ range .Function.Parameters.Properties }}'
              '|{{ printf "%7v|%-4v" . . }}{{ end }}{{ end }}{{ if .Messages }}{{ end }}')
    jinja = verified(source, cases=40)
    flat = {"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"s": {"type": "string", "description": "x"}}}}}]}
    want = "|{[]  string <nil>       x []   <nil> []}|{[] string <nil> x    [] <nil> []}"
    assert reference.render(source, flat) == want
    renders_everywhere(jinja, flat, want)


#: %f, %e and %g of numbers known only at run time (decoded tool-call arguments), and of the
#: composites that hold them: each element with the verb, width and precision.
RUN_TIME_FLOATS = (
    '{{ range .Messages }}{{ range .ToolCalls }}{{ range $k, $v := .Function.Arguments }}'
    '{{ $k }}[{{ printf "%.2f|%.0f|%e|%.3G|%.10g|%8.3f|%-7.1e." $v $v $v $v $v $v $v }}]\n'
    '{{ end }}{{ printf "%6.2f|%.3d" .Function.Arguments . }}{{ end }}{{ end }}')


def test_printf_f_e_g_of_run_time_numbers_round_the_exact_value_on_every_engine() -> None:
    jinja = verified(RUN_TIME_FLOATS, cases=40)
    # the binary value, not the shortest digits, is rounded, half to even where exact:
    # 2.675 is 2.67499…, 0.125 and 2.5 are ties; 5e-324 is 4.94e-324; strings, booleans and nil
    # print as %!f(…) with the width and precision. (No %g without a precision: that is %v,
    # whose shortest digits of a subnormal take llama.cpp seconds.)
    args = {"a": 2.675, "b": 0.125, "c": 2.5, "d": 1e21, "e": 5e-324, "f": -0.0,
            "h": 0.1, "i": 123456789.0, "k": "text", "l": True, "m": None,
            "n": [1.005, -7]}
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "arguments": args}}]}]}
    want = reference.render(RUN_TIME_FLOATS, conv)
    for line in ("a[2.67|3|2.675000e+00|2.67|2.675|   2.675|2.7e+00.]",
                 "b[0.12|0|1.250000e-01|0.125|0.125|   0.125|1.2e-01.]",
                 "c[2.50|2|2.500000e+00|2.5|2.5|   2.500|2.5e+00.]",
                 "e[0.00|0|4.940656e-324|4.94E-324|4.940656458e-324|   0.000|4.9e-324.]",
                 "f[-0.00|-0|-0.000000e+00|-0|-0|  -0.000|-0.0e+00.]",
                 "i[123456789.00|123456789|1.234568e+08|1.23E+08|123456789|123456789.000|"
                 "1.2e+08.]",
                 "k[%!f(string=te)|%!f(string=)|%!e(string=text)|%!G(string=tex)|%!g(string=text)|"
                 "%!f(string=     tex)|%!e(string=t      ).]",
                 "n[[1.00 -7.00]|[1 -7]|[1.005000e+00 -7.000000e+00]|[1 -7]|[1.005 -7]|"
                 "[   1.005   -7.000]|[1.0e+00 -7.0e+00].]"):
        assert line + "\n" in want
    assert "|{%!d(string=) {000 %!d(string=f) map[%!d(string=a):%!d(float64=2.67) " in want
    renders_everywhere(jinja, conv, want)
    # a tiny number's first digits (go_fmt_float reads only those) that end in 4999… after the
    # rounding digit are read again in full: 2.5e-300 is 2.4999…e-300, 1.5e-300 1.5000…1e-300
    source = ('{{ range .Messages }}{{ range .ToolCalls }}{{ range .Function.Arguments }}'
              '{{ printf "%.0e|%.1e;" . . }}{{ end }}{{ end }}{{ end }}')
    conv["messages"][0]["tool_calls"][0]["function"]["arguments"] = {"a": 2.5e-300,
                                                                     "b": 1.5e-300}
    assert reference.render(source, conv) == "2e-300|2.5e-300;2e-300|1.5e-300;"
    renders_everywhere(translate(source), conv, "2e-300|2.5e-300;2e-300|1.5e-300;")


#: %x and %X of numbers known only at run time (strconv's hex float), with precisions that
#: round and a width, and of a property, whose type, description and enum print in hex.
HEX_FLOATS = (
    '{{ range .Messages }}{{ range .ToolCalls }}{{ range $k, $v := .Function.Arguments }}'
    '{{ $k }}[{{ printf "%x|%X|%.0x|%.1x|%.3X|%.16x|%-12.2x|%11x" $v $v $v $v $v $v $v $v }}]\n'
    '{{ end }}{{ end }}{{ end }}{{ range .Tools }}{{ range .Function.Parameters.Properties }}'
    '{{ printf "%x|%.1X|%-3x" . . . }}{{ end }}{{ end }}')


def test_printf_x_of_run_time_numbers_prints_go_hex_floats_on_every_engine() -> None:
    jinja = verified(HEX_FLOATS, cases=30)
    # by hand: 1.5 = 0x1.8p+00, whose %.0x is a tie rounded to even (the leading 1 is odd: up,
    # and the carry makes 0x1p+01); 0x1.08 and 0x1.18 are ties at one digit (down to 0x1.0, up
    # to 0x1.2); the largest float64 rounds up past 2**1024; a subnormal normalises to a
    # leading 1; a string prints its bytes, a list and a map each element
    args = {"a": 1.5, "b": 1.03125, "c": 1.09375, "d": 1.7976931348623157e308, "e": 5e-324,
            "f": -0.0, "g": 0.1, "h": 255, "i": 9007199254740993, "k": "é", "l": True,
            "m": [1.5, "a"]}
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "arguments": args}}]}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {
                "s": {"type": "string", "description": "d", "enum": [2.5, "a"]}}}}}]}
    want = reference.render(HEX_FLOATS, conv)
    for line in ("a[0x1.8p+00|0X1.8P+00|0x1p+01|0x1.8p+00|0X1.800P+00|0x1.8000000000000000p+00|"
                 "0x1.80p+00  |  0x1.8p+00]",
                 "b[0x1.08p+00|0X1.08P+00|0x1p+00|0x1.0p+00|0X1.080P+00|"
                 "0x1.0800000000000000p+00|0x1.08p+00  | 0x1.08p+00]",
                 "c[0x1.18p+00|0X1.18P+00|0x1p+00|0x1.2p+00|0X1.180P+00|"
                 "0x1.1800000000000000p+00|0x1.18p+00  | 0x1.18p+00]",
                 "d[0x1.fffffffffffffp+1023|0X1.FFFFFFFFFFFFFP+1023|0x1p+1024|0x1.0p+1024|"
                 "0X1.000P+1024|0x1.fffffffffffff000p+1023|0x1.00p+1024|"
                 "0x1.fffffffffffffp+1023]",
                 "e[0x1p-1074|0X1P-1074|0x1p-1074|0x1.0p-1074|0X1.000P-1074|"
                 "0x1.0000000000000000p-1074|0x1.00p-1074|  0x1p-1074]",
                 "f[-0x0p+00|-0X0P+00|-0x0p+00|-0x0.0p+00|-0X0.000P+00|"
                 "-0x0.0000000000000000p+00|-0x0.00p+00 |   -0x0p+00]",
                 "g[0x1.999999999999ap-04|0X1.999999999999AP-04|0x1p-03|0x1.ap-04|0X1.99AP-04|"
                 "0x1.999999999999a000p-04|0x1.9ap-04  |0x1.999999999999ap-04]",
                 "h[0x1.fep+07|0X1.FEP+07|0x1p+08|0x1.0p+08|0X1.FE0P+07|0x1.fe00000000000000p+07|"
                 "0x1.fep+07  | 0x1.fep+07]",
                 "i[0x1p+53|0X1P+53|0x1p+53|0x1.0p+53|0X1.000P+53|0x1.0000000000000000p+53|"
                 "0x1.00p+53  |    0x1p+53]",
                 "k[c3a9|C3A9||c3|C3A9|c3a9|c3a9        |       c3a9]",
                 "l[%!x(bool=true)|%!X(bool=true)|%!x(bool=true)|%!x(bool=true)|%!X(bool=true)|"
                 "%!x(bool=true)|%!x(bool=true        )|%!x(bool=       true)]",
                 "m[[0x1.8p+00 61]|[0X1.8P+00 61]|[0x1p+01 ]|[0x1.8p+00 61]|[0X1.800P+00 61]|"
                 "[0x1.8000000000000000p+00 61]|[0x1.80p+00   61          ]|"
                 "[  0x1.8p+00          61]]"):
        assert line + "\n" in want
    # the property: Type by its String method (`%.1X`: one byte), the nil nested-properties
    # pointer as %x of 0 (a precision of 1 still prints the 0)
    assert want.endswith("{[] 737472696e67 <nil> 64 [0x1.4p+01 61] 0 []}|"
                         "{[] 73 <nil> 64 [0X1.4P+01 61] 0 []}|"
                         "{[] 737472696e67 <nil> 64  [0x1.4p+01 61 ] 0   []}")
    renders_everywhere(jinja, conv, want)


def test_printf_of_messages_prints_addresses_for_the_pointer_verbs_only() -> None:
    """%x, %o, %b, %d, %v of .Messages: each element's address (the contract's failure), `[]`
    when there are none."""
    source = '{{ printf "%x|%-8X|%.3o|%b" .Messages .Messages .Messages .Messages }}'
    verified(source, cases=20)


#: A user message, then a call with two arguments (one a string), for the bad-verb forms.
BAD_VERB_CONVERSATION = {
    "messages": [{"role": "user", "content": "hiä"}, {"role": "assistant", "content": "",
                 "tool_calls": [{"function": {"name": "f",
                                              "arguments": {"a": 1.25, "b": "xyz"}}}]}],
    "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {
        "type": "object", "required": ["a"], "properties": {
            "a": {"type": ["integer", "null"], "description": "x", "enum": [1.5, "q"]},
            "c": {"type": "string", "anyOf": [{"type": "string"}]}}}}}]}


def test_printf_s_q_f_of_messages_print_each_bad_verb_with_ollamas_type_name() -> None:
    """Any other verb is fmt's badVerb of each *templateMessage: `%!q(` and the Go type as
    Ollama's package names it, then the struct by %v with the directive's width and precision
    and no String method (the arguments print as a Go map)."""
    source = '{{ printf "%s|%-7.3q|%5.2f" .Messages .Messages .Messages }}{{ if .Tools }}{{ end }}'
    jinja = verified(source, cases=40)
    q = ("[%!q(*template.templateMessage=&{use     hiä             [] []                }) "
         "%!q(*template.templateMessage=&{ass                     [] [{        {000     f"
         "       map[a      :1.25    b      :xyz    ]}}]                })]")
    want = reference.render(source, BAD_VERB_CONVERSATION)
    assert want.split("|")[1] == q  # checked by hand: `use` padded to 7, then one space
    assert want.startswith("[%!s(*template.templateMessage=&{user hiä  [] []  }) ")
    renders_everywhere(jinja, BAD_VERB_CONVERSATION, want)


def test_printf_f_e_g_of_tool_shapes_and_s_of_a_property_print_the_nil_pointer_by_type() -> None:
    """%f, %e, %g of the tool shapes and %s of a property print a nil nested-properties
    pointer as `%!E(*api.ToolPropertiesMap=<nil>)`, `<nil>` padded to the width; a set one is
    an address (the contract's failure)."""
    source = ('{{ printf "%8.1E" .Tools }}{{ range .Tools }}'
              '{{ range $k, $v := .Function.Parameters.Properties }}|{{ printf "%-9.2s" $v }}'
              '{{ end }}{{ printf "%g" .Function }}{{ end }}{{ if .Messages }}{{ end }}')
    jinja = verified(source, cases=40)
    want = reference.render(source, BAD_VERB_CONVERSATION)
    for part in ("%!E(string=       x) [ 1.5E+00 %!E(string=       q)] "
                 "%!E(*api.ToolPropertiesMap=   <nil>) []}",
                 "|{[] [i        <nil> x         [%!s(float64=1.5      ) q        ] "
                 "%!s(*api.ToolPropertiesMap=<nil>    ) []}|{[{[] st        <nil>           [] "
                 "%!s(*api.ToolPropertiesMap=<nil>    ) []}] st",
                 "%!g(*api.ToolPropertiesMap=<nil>) []}]}}"):
        assert part in want, part
    renders_everywhere(jinja, BAD_VERB_CONVERSATION, want)
    nested = {"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function",
              "function": {"name": "f", "parameters": {"type": "object", "properties": {"o": {
                  "type": "object", "properties": {"x": {"type": "string"}}}}}}}]}
    assert re.search(r"ToolPropertiesMap=&\{0x[0-9a-f]{6,}\}\)", reference.render(source, nested))
    raises_everywhere(jinja, nested, "memory address")


def test_printf_o_t_c_u_of_composites_print_each_leaf_by_its_kind_on_every_engine() -> None:
    """%o, %t, %c, %U, %O of decoded-JSON values, %o of the tool shapes, %t of a message and
    its calls: a leaf that does not take the verb prints %!o(float64=…) with the width, a bool
    takes %t, a nil nested-properties pointer is 0 in base 8 too."""
    source = ('{{- printf "%o|%5o" .Tools .Tools }}{{ range .Tools }}'
              '{{ printf "%-4o" .Function.Parameters }}{{ end }}{{ range .Messages }}'
              '{{ printf "%t|%6t" . .ToolCalls }}{{ range .ToolCalls }}'
              '{{ printf "%o|%.1t" .Function.Arguments . }}'
              '{{ range $k, $v := .Function.Arguments }}'
              '{{ printf "%o|%t|%c|%U|%O|%5.1t;" $v $v $v $v $v $v }}{{ end }}{{ end }}{{ end }}')
    jinja = verified(source, cases=40)
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {
        "name": "f", "arguments": {"a": 1.5, "b": "x", "c": True, "d": None}}}]}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"s": {"type": "string", "enum": [1, "q"]}}}}}]}
    want = reference.render(source, conv)
    for part in ("[%!o(float64=    1) %!o(string=    q)]     0 []}",
                 "&{%!t(string=assistant) %!t(string=) %!t(string=) [] [{%!t(string=) "
                 "{%!t(int=0) %!t(string=f) map[",
                 "%!o(float64=1.5)|%!t(float64=1.5)|%!c(float64=1.5)|%!U(float64=1.5)|"
                 "%!O(float64=1.5)|%!t(float64=    2);",
                 "%!o(bool=true)|true|%!c(bool=true)|%!U(bool=true)|%!O(bool=true)| true;",
                 "%!o(<nil>)|%!t(<nil>)|%!c(<nil>)|%!U(<nil>)|%!O(<nil>)|%!t(<nil>);"):
        assert part in want, part
    renders_everywhere(jinja, conv, want)


#: %c, %q and %U of integers known only at run time: a range's index, a length, a byte of the
#: content, a tool call's Index, and %q of a call, the calls and a message (the Index inside).
RUNE_TEMPLATE = (
    '{{ range $i, $m := .Messages }}[{{ printf "%c|%q|%+q|%U|%#U|%05c|%-3q|%08U|%#9U|%.6U" $i $i '
    '$i $i $i $i $i $i $i $i }}|{{ printf "%c %q %U" (len .Content) (len .Content) '
    '(len .Content) }}{{ if .Content }}|{{ printf "%c|%q|%+q|%#U|%-3c" (index .Content 0) '
    '(index .Content 0) (index .Content 0) (index .Content 0) (index .Content 0) }}{{ end }}'
    '{{ range .ToolCalls }}|{{ printf "%c|%q|%#U|%q|%-14q" .Function.Index .Function.Index '
    '.Function.Index . . }}{{ end }}|{{ printf "%q" .ToolCalls }}|{{ printf "%q" . }}]{{ end }}')

#: Go's %c|%q|%+q|%U|%#U|%-4c|%5q of each Index, written by hand from fmt's rules: a printable
#: rune as it is (quoted: `'` and `\` escaped), one IsPrint refuses by number (\u, \U, \x, \n),
#: U+FFFD for a negative number, a surrogate or one past U+10FFFF (their %U still the number;
#: a negative one as the uint64 it converts to), %#U's rune only when printable, padding by runes.
RUNES_BY_HAND = {
    233: "é|'é'|'\\u00e9'|U+00E9|U+00E9 'é'|é   |  'é'",
    128512: "😀|'😀'|'\\U0001f600'|U+1F600|U+1F600 '😀'|😀   |  '😀'",
    8232: "\u2028|'\\u2028'|'\\u2028'|U+2028|U+2028|\u2028   |'\\u2028'",
    -1: "�|'�'|'\\ufffd'|U+FFFFFFFFFFFFFFFF|U+FFFFFFFFFFFFFFFF|�   |  '�'",
    10: "\n|'\\n'|'\\n'|U+000A|U+000A|\n   | '\\n'",
    39: "'|'\\''|'\\''|U+0027|U+0027 '''|'   | '\\''",
    92: "\\|'\\\\'|'\\\\'|U+005C|U+005C '\\'|\\   | '\\\\'",
    917505: "\U000e0001|'\\U000e0001'|'\\U000e0001'|U+E0001|U+E0001|\U000e0001   |'\\U000e0001'",
    55296: "�|'�'|'\\ufffd'|U+D800|U+D800|�   |  '�'",
    1114112: "�|'�'|'\\ufffd'|U+110000|U+110000|�   |  '�'",
    0: "\x00|'\\x00'|'\\x00'|U+0000|U+0000|\x00   |'\\x00'",
    0x4E2D: "中|'中'|'\\u4e2d'|U+4E2D|U+4E2D '中'|中   |  '中'",
    0xFFFF: "\uffff|'\\uffff'|'\\uffff'|U+FFFF|U+FFFF|\uffff   |'\\uffff'",
    0x10FFFF: "\U0010ffff|'\\U0010ffff'|'\\U0010ffff'|U+10FFFF|U+10FFFF|\U0010ffff   "
              "|'\\U0010ffff'",
}


def test_printf_c_q_u_of_run_time_integers_write_their_runes_on_every_engine() -> None:
    """No engine function makes a character from a number on hf.js, llama.cpp or minja: the
    runtime cuts it from tables (go_char); each family's branch is checked here."""
    verified(RUNE_TEMPLATE, cases=30)
    source = ('{{ range .Messages }}{{ range .ToolCalls }}{{ printf "%c|%q|%+q|%U|%#U|%-4c|%5q;" '
              '.Function.Index .Function.Index .Function.Index .Function.Index .Function.Index '
              '.Function.Index .Function.Index }}{{ end }}{{ end }}')
    jinja = translate(source)
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "index": i, "arguments": {}}} for i in RUNES_BY_HAND]}]}
    want = "".join(text + ";" for text in RUNES_BY_HAND.values())
    renders_everywhere_as_go(source, jinja, conv, want)
    # a call printed field by field: the Index by the verb, the strings and the arguments' keys
    # and leaves as bad verbs (%v inside, with the width), the arguments by String() for %q only
    source = ('{{ range .Messages }}{{ range .ToolCalls }}{{ printf "%c|%-3U|%o|%q" . . . . }}'
              '{{ end }}{{ end }}')
    jinja = translate(source)
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1",
            "function": {"name": "f", "index": 233, "arguments": {"a": 1.5, "b": "x"}}}]}]}
    want = ("{%!c(string=c1) {é %!c(string=f) map[%!c(string=a):%!c(float64=1.5) "
            "%!c(string=b):%!c(string=x)]}}|"
            "{%!U(string=c1 ) {U+00E9 %!U(string=f  ) map[%!U(string=a  ):%!U(float64=1.5) "
            "%!U(string=b  ):%!U(string=x  )]}}|"
            "{%!o(string=c1) {351 %!o(string=f) map[%!o(string=a):%!o(float64=1.5) "
            "%!o(string=b):%!o(string=x)]}}|"
            '{"c1" {\'é\' "f" "{\\"a\\":1.5,\\"b\\":\\"x\\"}"}}')
    renders_everywhere_as_go(source, jinja, conv, want)


#: Go's %#q|%+q|% x|%#X of each content, by hand: %#q backquotes unless strconv.CanBackquote
#: refuses (a backquote, a control character but the tab, DEL, U+FEFF), %+q escapes past ASCII,
#: % x spaces the bytes, %#X prefixes them once; an empty string has no 0x.
FLAGGED_BY_HAND = {
    "a`b": '"a`b"|"a`b"|61 60 62|0X616062',
    "t\tb": '`t\tb`|"t\\tb"|74 09 62|0X740962',
    "é😀": '`é😀`|"\\u00e9\\U0001f600"|c3 a9 f0 9f 98 80|0XC3A9F09F9880',
    "x\ufeff": '"x\\ufeff"|"x\\ufeff"|78 ef bb bf|0X78EFBBBF',
    "d\x7f": '"d\\x7f"|"d\\x7f"|64 7f|0X647F',
    "\x00": '"\\x00"|"\\x00"|00|0X00',
    "": '``|""||',
}


def test_printf_q_and_x_of_text_take_every_flag_on_every_engine() -> None:
    verified('{{ range .Messages }}{{ printf "[%08x][%-08x][%# 012x][%08q][%#08q][%+08q][% 8x]'
             '[%#x][% X][%#.2X][%+x][%+q][%#q][%#+q][% q][%#-9q][%05x]" .Content .Content '
             '.Content .Content .Content .Content .Content .Content .Content .Content .Content '
             '.Content .Content .Content .Content .Content "" }}{{ end }}{{ range .Tools }}'
             '{{ printf "%#q|%+q|% x" . . . }}{{ end }}', cases=30)
    source = ('{{ range .Messages }}{{ printf "%#q|%+q|% x|%#X;" .Content .Content .Content '
              '.Content }}{{ end }}')
    jinja = translate(source)
    # (roles alternate: Ollama joins consecutive messages of one role)
    conv = {"messages": [{"role": ("user", "assistant")[i % 2], "content": c}
                         for i, c in enumerate(FLAGGED_BY_HAND)]}
    want = "".join(text + ";" for text in FLAGGED_BY_HAND.values())
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_t_names_the_template_types_and_what_json_decoded_on_every_engine() -> None:
    """%T prints reflect's names: Ollama's package `template` for messages, calls and tools,
    the kind decoded JSON holds for an argument."""
    source = ('{{ range .Messages }}{{ printf "%T|%T|%-5T|" . .ToolCalls .Role }}'
              '{{ range .ToolCalls }}{{ printf "%T|%T|" . .Function.Arguments }}'
              '{{ range $k, $v := .Function.Arguments }}{{ printf "%T;" $v }}{{ end }}{{ end }}'
              '{{ end }}')
    jinja = verified(source, cases=20)
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {
        "name": "f", "arguments": {"a": 1, "b": "x", "c": [1], "d": {}, "f": None, "g": True}}}]}]}
    want = ("*template.templateMessage|[]template.templateToolCall|string|"
            "template.templateToolCall|template.templateArgs|"
            "float64;string;[]interface {};map[string]interface {};<nil>;bool;")
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_t_of_the_tool_shapes_prints_ollamas_type_names_on_every_engine() -> None:
    """Ollama v0.33's names for `.Tools` and its parts (template/template.go at fb3076099),
    written by hand: the reference's types carry them, and so does the translation."""
    source = ('{{ printf "%T|%-24T|" .Tools .Tools }}{{ range .Tools }}{{ printf "%T|%T|%T|%T|" '
              '. .Function .Function.Parameters .Function.Parameters.Properties }}{{ end }}'
              '{{ range .Messages }}{{ end }}')
    jinja = verified(source, cases=12)
    tool = {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "string"}}}}}
    conv = {"messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    want = ("template.templateTools|template.templateTools  |template.templateTool|"
            "template.templateToolFunction|template.templateToolFunctionParameters|"
            "template.templateProperties|")
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_of_floats_takes_sign_space_and_zero_flags_on_every_engine() -> None:
    """fmtFloat's flags, by hand: %v drops `+` (plusV is for structs); a space stands where a
    plus would; zeros go after the sign; a bad verb's %v keeps the `+`."""
    source = ('{{ printf "[%+v][% v][%08v][%+08.3f][% e][%-+9.2g][% 012E][%+d][%0+8v]" 1.5 -2.25 '
              '1e21 -0.0 1.5 -1.5 1e-7 1.5 -0.5 }}{{ if .Messages }}{{ end }}')
    jinja = verified(source, cases=5)
    want = ("[1.5][-2.25][0001e+21][-000.000][ 1.500000e+00][-1.5     ][ 1.000000E-07]"
            "[%!d(float64=+1.5)][-00000.5]")
    conv = {"messages": [{"role": "user", "content": "hi"}]}
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_sharp_of_floats_keeps_a_point_and_zeros_on_every_engine() -> None:
    """fmtFloat's `#`, by hand: always a point; %g %G %x zeros up to the precision (6 without
    one) counted from the first digit that is not 0 (%x counts its `x`), %X and %e %f none;
    zeros pad after the sign; %#v of a float64 is its %v. A number known only at run time
    takes the same path."""
    source = ('{{ printf "%#g|%#.3g|%#e|%#.0f|%#x|%#X|%#.0x|%#G|%#-9g|%#08.2g|%#g|%#g|%#v" 1.5 '
              '100.0 1.5 2.5 1.5 1.5 1.5 1e-7 3.0 -1.0 1.2345678 0.0 1.0 }}{{ $x := 2.0 }}'
              '{{ range .Messages }}{{ $x = 0.25 }}{{ end }}{{ printf "|%#g|%#x" $x $x }}')
    jinja = verified(source, cases=5)
    want = ("1.50000|100.|1.500000e+00|2.|0x1.8000p+00|0X1.8P+00|0x1.p+01|1.00000E-07|3.00000  |"
            "-00001.0|1.2345678|0.00000|1|0.250000|0x1.0000p-02")
    conv = {"messages": [{"role": "user", "content": "hi"}]}
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_flags_of_decoded_json_reach_every_value_inside_on_every_engine() -> None:
    """By hand from printValue: a map's keys and values and a list's items each take the
    directive's flags: `+` signs a float (also inside a bad verb's %!d(float64=+1.5)), `0`
    pads strings, booleans and numbers with zeros (not a nil inside: `<nil>` as is), `#`
    gives %g its zeros, a space stands for a plus sign; at the top a nil is padded like a
    string (%07v) or %!e(<nil>)."""
    source = ('{{ range .Messages }}{{ range .ToolCalls }}{{ printf "%+d;%05.1f;%#g;" '
              '.Function.Arguments .Function.Arguments .Function.Arguments }}'
              '{{ range $k, $v := .Function.Arguments }}{{ printf "[%07v|% .2e]" $v $v }}'
              '{{ end }}{{ end }}{{ end }}')
    jinja = verified(source, cases=20)
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {
        "name": "f", "arguments": {"a": 1.5, "b": 'é"x', "c": [True, None, -2],
                                   "d": {"e": "k"}, "n": None}}}]}]}
    want = ('map[%!d(string=a):%!d(float64=+1.5) %!d(string=b):%!d(string=é"x) '
            '%!d(string=c):[%!d(bool=true) <nil> %!d(float64=-2)] '
            '%!d(string=d):map[%!d(string=e):%!d(string=k)] %!d(string=n):<nil>];'
            'map[%!f(string=0000a):001.5 %!f(string=0000b):%!f(string=0000é) '
            '%!f(string=0000c):[%!f(bool=0true) <nil> -02.0] '
            '%!f(string=0000d):map[%!f(string=0000e):%!f(string=0000k)] %!f(string=0000n):<nil>];'
            'map[%!g(string=a):1.50000 %!g(string=b):%!g(string=é"x) '
            '%!g(string=c):[%!g(bool=true) <nil> -2.00000] '
            '%!g(string=d):map[%!g(string=e):%!g(string=k)] %!g(string=n):<nil>];'
            '[00001.5| 1.50e+00][0000é"x|%!e(string=é")]'
            '[[000true <nil> -000002]|[%!e(bool=true) <nil> -2.00e+00]]'
            '[map[000000e:000000k]|map[%!e(string=e):%!e(string=k)]][00<nil>|%!e(<nil>)]')
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_flags_of_a_message_and_its_calls_reach_every_field_on_every_engine() -> None:
    """By hand from printValue: %+v names each struct field (plusV, down into the calls);
    `+` signs the Index and the arguments' numbers (%+d); `0` pads every field with zeros but
    Images' `[]`; `% x` spaces the bytes and signs the Index with a space; %+q quotes the
    Index as an ASCII rune; %#U gives a float inside its %#v-less `#` (1.50000); an int in a
    bad verb with a precision is padded with spaces, not zeros (fmtInteger)."""
    source = ('{{ range .Messages }}{{ printf "%+v|%+d|%05v" . . . }}{{ range .ToolCalls }}'
              '{{ printf "<%+v|% x|%+q|%#U|%05.1f>" . . . . . }}{{ end }}'
              '{{ printf "%+v" .ToolCalls }}{{ end }}')
    jinja = verified(source, cases=20)
    conv = {"messages": [{"role": "assistant", "content": "hé", "tool_calls": [
        {"id": "c1", "function": {"index": 3, "name": "f", "arguments": {"a": 1.5}}}]}]}
    call = '{ID:c1 Function:{Index:3 Name:f Arguments:{"a":1.5}}}'
    want = ("&{Role:assistant Content:hé Thinking: Images:[] ToolCalls:[" + call + "] "
            "ToolName: ToolCallID:}|"
            "&{%!d(string=assistant) %!d(string=hé) %!d(string=) [] [{%!d(string=c1) {+3 "
            "%!d(string=f) map[%!d(string=a):%!d(float64=+1.5)]}}] %!d(string=) %!d(string=)}|"
            '&{assistant 000hé 00000 [] [{000c1 {00003 0000f {"a":1.5}}}] 00000 00000}'
            "<" + call + "|{63 31 { 3 66 7b 22 61 22 3a 31 2e 35 7d}}|"
            '{"c1" {\'\\x03\' "f" "{\\"a\\":1.5}"}}|'
            "{%!U(string=c1) {U+0003 %!U(string=f) map[%!U(string=a):%!U(float64=1.50000)]}}|"
            "{%!f(string=0000c) {%!f(int=    3) %!f(string=0000f) map[%!f(string=0000a):001.5]}}>"
            "[" + call + "]")
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_u_of_a_negative_index_prints_its_uint64_on_every_engine() -> None:
    """fmtUnicode of a negative int: the uint64 it converts to, by hand: -5 is 2^64 - 5,
    U+FFFFFFFFFFFFFFFB; -(2^53 - 1) is U+FFE0000000000001 (the high word must not come from
    |int of a negative number, which @huggingface/jinja floors)."""
    source = ('{{ range .Messages }}{{ range .ToolCalls }}{{ printf "%U|" .Function.Index }}'
              '{{ end }}{{ end }}')
    jinja = verified(source, cases=10)
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "index": -5}},
        {"function": {"name": "f", "index": -(2**53 - 1)}}]}]}
    renders_everywhere_as_go(source, jinja, conv, "U+FFFFFFFFFFFFFFFB|U+FFE0000000000001|")


def test_printf_flags_of_properties_and_bad_verbs_of_messages_on_every_engine() -> None:
    """By hand from printValue and badVerb: %+v of an api.ToolProperty names its fields (also
    in anyOf), `0` pads every field and the nil Properties pointer (`0<nil>`), %+d signs that
    pointer's 0; a bad verb of .Messages prints each message by %v with the directive's flags:
    `+` signs the Index and the arguments' numbers, `#` gives a float %#v-less zeros, a
    precision cuts strings and zero-fills the Index (a space in place of its sign)."""
    source = ('{{ range .Tools }}{{ range $k, $p := .Function.Parameters.Properties }}'
              '{{ printf "%+v|%+06v|%+d" $p $p $p }}{{ end }}{{ end }}'
              '{{ printf "%+s|%#05q|% .2f|%-+7t" .Messages .Messages .Messages .Messages }}')
    jinja = verified(source, cases=20)
    conv = {"messages": [
        {"role": "user", "content": "hé"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": {
            "index": 3, "name": "f", "arguments": {"a": 1.5, "b": [True, None]}}}]}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"a": {
                "type": ["string", "null"], "description": "d", "enum": ["x", 1.5],
                "items": {"k": None}, "anyOf": [{"type": "integer"}]}}}}}]}
    bad = "(*template.templateMessage=&{"
    want = ("{AnyOf:[{AnyOf:[] Type:integer Items:<nil> Description: Enum:[] Properties:<nil> "
            "Required:[]}] Type:[string null] Items:map[k:<nil>] Description:d Enum:[x 1.5] "
            "Properties:<nil> Required:[]}|"
            "{AnyOf:[{AnyOf:[] Type:integer Items:<nil> Description:000000 Enum:[] "
            "Properties:0<nil> Required:[]}] Type:[string null] Items:map[00000k:<nil>] "
            "Description:00000d Enum:[00000x 0001.5] Properties:0<nil> Required:[]}|"
            "{[{[] [%!d(string=integer)] <nil> %!d(string=) [] +0 []}] "
            "[%!d(string=string) %!d(string=null)] map[%!d(string=k):<nil>] %!d(string=d) "
            "[%!d(string=x) %!d(float64=+1.5)] +0 []}"
            f"[%!s{bad}user hé  [] []  }}) "
            f"%!s{bad}assistant   [] [{{c1 {{+3 f map[a:+1.5 b:[true <nil>]]}}}}]  }})]|"
            f"[%!q{bad}0user 000hé 00000 [] [] 00000 00000}}) "
            f"%!q{bad}assistant 00000 00000 [] [{{000c1 {{00003 0000f "
            "map[0000a:1.50000 0000b:[0true <nil>]]}}] 00000 00000})]|"
            f"[%!f{bad}us hé  [] []  }}) "
            f"%!f{bad}as   [] [{{c1 {{ 03 f map[a: 1.5 b:[true <nil>]]}}}}]  }})]|"
            f"[%!t{bad}user    hé              [] []                }}) "
            f"%!t{bad}assistant                 [] [{{c1      {{+3      f       "
            "map[a      :+1.5    b      :[true    <nil>]]}}]                })]")
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_explicit_argument_indexes_move_the_next_operand_on_every_engine() -> None:
    """By hand from doPrintf: `[n]` picks operand n and the next verb takes n + 1; `[0]`, a
    width or precision after the index, or no `]` print %!d(BADINDEX); `%[2]%` still moves
    the operand; with an index written Go never appends %!(EXTRA …)."""
    source = ('{{ printf "%[2]s %[1]s %s|%[3]d|%[0]d|%[1]2d|%[2]%%d|%d %[1]s %s" "a" "b" 1 }}'
              '{{ range .Messages }}{{ printf "%[2]s<%[1]s>" .Role .Content }}{{ end }}')
    jinja = verified(source, cases=20)
    conv = {"messages": [{"role": "user", "content": "hi"}]}
    want = "b a b|1|%!d(BADINDEX)|%!d(BADINDEX)|%%!d(string=b)|1 a bhi<user>"
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_b_of_floats_writes_the_exact_mantissa_and_exponent_on_every_engine() -> None:
    """strconv's 'b', by hand: a normal number as its 53-bit integer mantissa `p` its exponent,
    a subnormal over p-1074, zero as 0p-1074 with its sign; inside a tool call the Index in
    base 2 and the arguments' numbers so."""
    source = ('{{ printf "%b|%b|%b|%b|%b|%b|%b|%+b|%25b|" 1.5 -1.5 2.0 0.0 -0.0 5e-324 0.5 1.5 '
              '1.0 }}{{ range .Messages }}{{ range .ToolCalls }}{{ printf "%b" . }}{{ end }}'
              '{{ end }}')
    jinja = verified(source, cases=20)
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {
        "name": "f", "index": 5, "arguments": {"a": 0.5}}}]}]}
    want = ("6755399441055744p-52|-6755399441055744p-52|4503599627370496p-51|0p-1074|-0p-1074|"
            "1p-1074|4503599627370496p-53|+6755399441055744p-52|     4503599627370496p-52|"
            "{%!b(string=) {101 %!b(string=f) map[%!b(string=a):4503599627370496p-53]}}")
    renders_everywhere_as_go(source, jinja, conv, want)


def test_printf_of_a_property_takes_every_verb_and_a_precision_on_every_engine() -> None:
    """By hand from printValue: each field by the verb (a bad verb's value cut to the
    precision), the nil nested-properties pointer as an integer for %d (zero-filled to the
    precision) and as a bad verb with its type for %O and %t; %#v of a string is %q."""
    source = ('{{ range .Tools }}{{ range $k, $p := .Function.Parameters.Properties }}'
              '{{ printf "%.2d|%O|%t|" $p $p $p }}{{ end }}{{ end }}'
              '{{ range .Messages }}{{ printf "%#v" .Content }}{{ end }}')
    jinja = verified(source, cases=20)
    conv = {"messages": [{"role": "user", "content": 'a"b'}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {
                "type": "object", "properties": {"a": {
                    "type": "string", "description": "d", "enum": ["x"]}}}}}]}
    want = ("{[] [%!d(string=st)] <nil> %!d(string=d) [%!d(string=x)] 00 []}|"
            "{[] [%!O(string=string)] <nil> %!O(string=d) [%!O(string=x)] "
            "%!O(*api.ToolPropertiesMap=<nil>) []}|"
            "{[] [%!t(string=string)] <nil> %!t(string=d) [%!t(string=x)] "
            "%!t(*api.ToolPropertiesMap=<nil>) []}|"
            '"a\\"b"')
    renders_everywhere_as_go(source, jinja, conv, want)

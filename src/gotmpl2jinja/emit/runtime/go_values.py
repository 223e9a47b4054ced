"""Runtime macros for Go's json and fmt %v of decoded-JSON values: strings, numbers, `any`.

May depend on: `emit.runtime.library`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import AS_FLOAT64, SMALL_INT, _define, scaled_by_two

# ---------------------------------------------------------------------------------------------
# strings and numbers

_define(
    "json_string", "s",
    "Go json.Marshal of a string: `\"…\"` with `\\\"` `\\\\` `\\n` `\\r` `\\t` `\\b` `\\f`, other "
    "controls as `\\u00xx`, `<` `>` `&` U+2028 U+2029 as `\\u003c` `\\u003e` `\\u0026` `\\u2028` "
    "`\\u2029`; everything else (DEL, `'`, non-ASCII) as is. `s` must be a string.",
    # Every engine's tojson escapes `"`, `\\` and control characters as Go does (`\\n`, `\\b`,
    # `\\u0001`, measured); Go also escapes `<` `>` `&` U+2028 U+2029, and minijinja escapes `<`
    # `>` `&` `'`. So the five Go escapes are written over what tojson left (the `replace`
    # method: minja has no `replace` filter) and minijinja's `\\u0027` back to `'`. A `<` in
    # tojson's output is always the string's own, never part of an escape; so is `\\u0027`
    # unless the string has a backslash: such a string is cut at its `'` instead (each piece
    # through tojson, the `'` kept as is). Straight line, not recursion: on llama.cpp every
    # macro call and loop pass copies the scope.
    """
{%- if '\\\\' not in s -%}
{{- (s|tojson).replace('\\\\u0027', "'").replace('<', '\\\\u003c').replace('>', '\\\\u003e')
    .replace('&', '\\\\u0026').replace(@LS@, '\\\\u2028').replace(@PS@, '\\\\u2029') -}}
{%- else -%}
{%- set t -%}
{%- for piece in s.split("'") -%}
{{- ("'" if not loop.first else '') ~ (piece|tojson)[1:-1] -}}
{%- endfor -%}
{%- endset -%}
{{- '"' ~ t.replace('<', '\\\\u003c').replace('>', '\\\\u003e').replace('&', '\\\\u0026')
    .replace(@LS@, '\\\\u2028').replace(@PS@, '\\\\u2029') ~ '"' -}}
{%- endif -%}
""",
)

_define(
    "_go_decimal", "s",
    "Internal: digits of an unsigned decimal as an engine printed it (`1.5e-07`, `1e-7`, "
    "`0.00000015`, `150.0`) → `SIG POINT`: significant digits without leading/trailing zeros "
    "(empty for zero) and the decimal point's position relative to them "
    "(value = 0.SIG × 10^POINT).",
    """
{%- set parts = s.split('e') -%}
{%- set exp = parts[1]|int if parts|length > 1 else 0 -%}
{%- set mp = parts[0].split('.') -%}
{%- set digits = mp[0] ~ (mp[1] if mp|length > 1 else '') -%}
{%- set zl = digits.replace('0', ' ').lstrip() -%}
{{- zl.rstrip().replace(' ', '0') ~ ' '
    ~ ((mp[0]|length) + exp - (digits|length) + (zl|length))|string -}}
""",
)


_define(
    "_go_float_parts", "x",
    "Internal: `SIGN SIG POINT` of float64(x), SIGN `-` or `+`, SIG the shortest round-trip "
    "digits (see _go_decimal). From the engine's own float printing where it is shortest, "
    "else by exact arithmetic (_exact_float_parts).",
    """
{%- if @NATIVE@ -%}
{%- set s = x|float|string -%}
{%- set neg = s.startswith('-') -%}
{%- set a = _go_decimal(s[1:] if neg else s) -%}
{%- set a = a.split(' ') -%}
{%- if 'e' not in s and s.endswith('.0') and a[0]|length > 15 -%}
{%- set t = x|float|int|string -%}
{%- set b = _go_decimal(t[1:] if neg else t) -%}
{%- set b = b.split(' ') -%}
{%- if b[0]|length < a[0]|length -%}{%- set a = b -%}{%- endif -%}
{%- endif -%}
{{- ('-' if neg else '+') ~ ' ' ~ a[0] ~ ' ' ~ a[1] -}}
{%- else -%}
{{- _exact_float_parts(x) -}}
{%- endif -%}
""",
    ("_go_decimal", "_exact_float_parts"),
)

_define(
    "_exact_float_parts", "x",
    "Internal: `SIGN SIG POINT` of float64(x) by exact float arithmetic, for engines that do not "
    "print shortest digits (an integer past 2**53, which llama.cpp cannot add to a float, "
    "is read back from its digits). An integer below 2**53 is its own digits. Where the "
    "engine's `|float` reads every digit (llama.cpp: `%.6g` and strtod, minijinja: Rust's "
    "shortest and parse; `0.5|string` is `0.5` on both, while minja, which has no `|float`, "
    "prints `0.500000` and never evaluates it), a normal number whose `|string` reads back "
    "as itself with at most 15 digits has Go's digits (an interval of one ulp holds at most "
    "one decimal of up to 15 digits; ties between two nearest need 16). From 1e-5 to 2**53: "
    "_scaled_parts. Otherwise the shortest digit string N (N < 2**53) with N / 10**k == |x| "
    "(k = 1..22) or N * 10**k == |x| is the one Go prints (a single correctly rounded "
    "operation on exact operands is exactly the decoder's rounding, and at most one such N "
    "exists per k); any other number (below 1e-22, above 2**53 * 1e22) by exact decimal "
    "arithmetic (_shortest_parts).",
    """
{%- set neg = x < 0 or (x == 0 and (x|string)[:1] == '-') -%}
""" + AS_FLOAT64.format(v="x", f="f") + """
{%- set a = (0 - f) if x < 0 else f -%}
{%- set sign = '-' if neg else '+' -%}
{%- if a == 0 -%}{{- sign ~ '  0' -}}
{%- elif a < @SAFE@ and a == a|int -%}{{- sign ~ ' ' ~ _go_decimal((a|int) ~ '') -}}
{%- else -%}
{%- set s = a|string -%}
{%- set quick = _go_decimal(s) if a >= 0.000001
    and (((s|float) == a) if (0.5|string) == '0.5' else false) else ' ' -%}
{%- set quick = quick.split(' ') -%}
{%- if quick[0] != '' and quick[0]|length <= 15 -%}{{- sign ~ ' ' ~ quick[0] ~ ' ' ~ quick[1] -}}
{%- else -%}
{%- set scaled = _scaled_parts(a) if a >= 0.00001 and a < @SAFE@ else '' -%}
{%- if scaled != '' -%}{{- sign ~ ' ' ~ scaled -}}
{%- else -%}
{%- set pow = @POW10@ -%}
{%- set ns = namespace(digits='', k=0, many=false) -%}
{%- for k in range(1, 23) -%}
{%- if ns.digits == '' and not ns.many -%}
{%- set y = (a * pow[k]) if a < @SAFE@ else (a / pow[k]) -%}
{%- if y < @SAFE@ -%}
{%- set n = (y + 0.5)|int -%}
{%- set hits = namespace(n=0, count=0) -%}
{%- for c in [n - 1, n, n + 1] -%}
{%- if c > 0 and ((a < @SAFE@ and c / pow[k] == a) or (a >= @SAFE@ and c * pow[k] == a)) -%}
{%- set hits.n = c -%}{%- set hits.count = hits.count + 1 -%}
{%- endif -%}
{%- endfor -%}
{%- if hits.count > 1 -%}{%- set ns.many = true -%}
{%- elif hits.count == 1 and a < @SAFE@ -%}
{%- set ns.digits = hits.n ~ '' -%}{%- set ns.k = 0 - k -%}
{%- elif hits.count == 1 -%}{%- set ns.digits = hits.n ~ '' -%}{%- set ns.k = k -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if ns.digits == '' or ns.many -%}
{{- sign ~ ' ' ~ _shortest_parts(a, 40) -}}
{%- else -%}
{%- set d = _go_decimal(ns.digits) -%}
{%- set d = d.split(' ') -%}
{{- sign ~ ' ' ~ d[0] ~ ' ' ~ ((d[1]|int) + ns.k) -}}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}
""",
    ("_go_decimal", "_scaled_parts", "_shortest_parts"),
)

_define(
    "_scaled_parts", "a",
    "Internal: `SIG POINT` of Go's shortest digits of float64 a, 1e-5 <= a < 2**53, not an "
    "integer; empty where this cannot tell. With k = 16 - (a's decimal exponent), a * 10**k "
    "= hi + lo exactly (Dekker's product of Veltkamp halves; for k <= 21 every partial "
    "result below is a float64), so the 17 digits of N = floor(a * 10**k) (those of "
    "hi - 16, an integer and a float64, plus floor(lo + 16) <= 24, in strings: llama.cpp "
    "adds integers as floats and reads at most 31 bits from a string) and the fraction are "
    "exact, and so is the distance "
    "to the halfway points, ulp(a) * 10**k / 2 <= 11.2 (a's binary exponent by doubling). So "
    "N cut to 15 digits or fewer, rounded down, is inside the interval (inclusive when the "
    "mantissa is even, its lower half halved at a power of two) iff its cut digits are "
    "zeros but the last two and those are close enough; rounded up, iff they are nines; "
    "then 16 digits, then 17. The shortest inside wins, the nearer where both are (a tie to "
    "even): Go's rule, on float64 arithmetic that llama.cpp and minja do alike.",
    """
{%- set k = (17 - (a|int|string)|length) if a >= 1 else (17 if a >= 0.1 else (18 if a >= 0.01
    else (19 if a >= 0.001 else (20 if a >= 0.0001 else 21)))) -%}
{%- set b = @POW10@[k] -%}
{%- set hi = a * b -%}
{%- if hi < 10000000000000000 or hi >= 100000000000000000 -%}{{- '' -}}
{%- else -%}
{%- set c = a * 134217729.0 -%}{%- set ah = c - (c - a) -%}{%- set al = a - ah -%}
{%- set c = b * 134217729.0 -%}{%- set bh = c - (c - b) -%}{%- set bl = b - bh -%}
{%- set lo = ((ah * bh - hi) + ah * bl + al * bh) + al * bl -%}
{%- set f = (lo + 16)|int -%}
{%- set frac = (lo + 16) - f -%}
{%- set s = ((hi - 16)|int)|string -%}
{%- set t = (s[-7:]|int) + f -%}
{%- set n = ((_big_mul_add(s[:-7], 1, 1) if t >= 10000000 else s[:-7])
    ~ ('000000' ~ (t - (10000000 if t >= 10000000 else 0)))[-7:]) -%}
{%- set ns = namespace(t=a, f=1.0) -%}
{%- for q in [18446744073709551616.0, 4294967296.0, 65536.0, 256.0, 16.0, 4.0, 2.0] -%}
{%- if ns.t * q < @SAFE@ -%}{%- set ns.t = ns.t * q -%}{%- set ns.f = ns.f * q -%}{%- endif -%}
{%- endfor -%}
{%- set h = b / (2.0 * ns.f) -%}
{%- set below = ((h / 2) if ns.t == 4503599627370496 else h) - frac -%}
{%- set above = h + frac -%}
{%- set even = (ns.t|int) % 2 == 0 -%}
{%- set zeros = n[:15].replace('0', ' ').rstrip()|length -%}
{%- set nines = n[:15].replace('9', ' ').rstrip()|length -%}
{%- set out = namespace(digits='', q=0) -%}
{%- for p in ([15, 16, 17] if n|length == 17 else []) -%}
{%- if out.digits == '' -%}
{%- set m = 100 if p == 15 else (10 if p == 16 else 1) -%}
{%- set r = (n[p:]|int) if p < 17 else 0 -%}
{%- set down = r < below or (even and r == below) -%}
{%- set up = m - r < above or (even and m - r == above) -%}
{%- set qd = zeros if p == 15 else p -%}
{%- set qu = (nines if nines > 0 else 1) if p == 15 else p -%}
{%- if down and up and qd == qu -%}
{%- set up = 2 * frac > m - 2 * r or (2 * frac == m - 2 * r and (n[p - 1:p]|int) % 2 == 1) -%}
{%- elif down and up -%}{%- set up = qu < qd -%}
{%- endif -%}
{%- if down or up -%}
{%- set out.q = qu if up else qd -%}
{%- set out.digits = _big_mul_add(n[:out.q], 1, 1) if up else n[:out.q] -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if out.digits == '' -%}{{- '' -}}
{%- else -%}
{%- set d = _go_decimal(out.digits) -%}
{%- set d = d.split(' ') -%}
{{- d[0] ~ ' ' ~ ((d[1]|int) + 17 - out.q - k) -}}
{%- endif -%}
{%- endif -%}
""",
    ("_big_mul_add", "_go_decimal"),
)

_define(
    "_big_mul_add", "s, k, c",
    "Internal: the decimal string `s` (digits only) times k plus c, for 0 <= k, c < 10**7, as "
    "a decimal string without leading zeros: chunks of seven digits, every intermediate below "
    "2**53 (llama.cpp computes integers through doubles).",
    """
{%- set ns = namespace(out='', carry=c, end=s|length) -%}
{%- for i in range((((s|length) + 6) / 7)|int) -%}
{%- set lo = ns.end - 7 if ns.end > 7 else 0 -%}
{%- set t = (s[lo:ns.end]|int) * k + ns.carry -%}
{%- set r = t % 10000000 -%}
{%- set ns.carry = ((t - r) / 10000000)|int -%}
{%- set ns.out = ('000000' ~ r)[-7:] ~ ns.out -%}
{%- set ns.end = lo -%}
{%- endfor -%}
{%- set out = (ns.carry ~ ns.out).replace('0', ' ').lstrip().replace(' ', '0') -%}
{{- out if out != '' else '0' -}}
""",
)

_define(
    "_big_scaled3", "u, v, w, g, keep",
    "Internal: three digit strings u >= v >= w times 2**g (g >= 0), or times 5**-g (the "
    "digits of the value with -g digits after the point), multiplied together; with `keep` > "
    "0 each multiplication cuts all three at the same place, so that u keeps `keep` digits "
    "(a subnormal's 750 digits cost llama.cpp seconds): `U V W DROP LOSTU "
    "LOSTV LOSTW`, the digits left, how many were cut off the end, and 1 for each where a cut "
    "dropped a digit other than 0. Each result is below the exact one by a relative 116 * "
    "10**(1 - keep) at most (one cut per multiplication), so only its digits from keep - 6 on "
    "are uncertain, and a carry out of them passes only a run of 9s.",
    """
{%- set n = g if g >= 0 else 0 - g -%}
{%- set per = 23 if g >= 0 else 10 -%}
{%- set big = 8388608 if g >= 0 else 9765625 -%}
{%- set batches = ((n - n % per) / per)|int -%}
{%- set ns = namespace(u=u, v=v, w=w, drop=0, lu=0, lv=0, lw=0) -%}
{%- for i in range(batches + n % per) -%}
{%- set k = big if i < batches else (2 if g >= 0 else 5) -%}
{%- set ru = _big_mul_add(ns.u, k, 0) -%}
{%- set rv = _big_mul_add(ns.v, k, 0) -%}
{%- set rw = _big_mul_add(ns.w, k, 0) -%}
{%- set cut = (ru|length) - keep if keep > 0 and (ru|length) > keep + 7 else 0 -%}
{%- if cut > 0 -%}
{%- if ru[(ru|length) - cut:].replace('0', '') != '' -%}{%- set ns.lu = 1 -%}{%- endif -%}
{%- if rv[(rv|length) - cut:].replace('0', '') != '' -%}{%- set ns.lv = 1 -%}{%- endif -%}
{%- if rw[(rw|length) - cut:].replace('0', '') != '' -%}{%- set ns.lw = 1 -%}{%- endif -%}
{%- set ru = ru[:(ru|length) - cut] -%}{%- set rv = rv[:(rv|length) - cut] -%}
{%- set rw = rw[:(rw|length) - cut] -%}
{%- set ns.drop = ns.drop + cut -%}
{%- endif -%}
{%- set ns.u = ru -%}{%- set ns.v = rv -%}{%- set ns.w = rw -%}
{%- endfor -%}
{{- ns.u ~ ' ' ~ ns.v ~ ' ' ~ ns.w ~ ' ' ~ ns.drop ~ ' ' ~ ns.lu ~ ' ' ~ ns.lv ~ ' ' ~ ns.lw -}}
""",
    ("_big_mul_add",),
)

_define(
    "_shortest_parts", "a, keep",
    "Internal: `SIG POINT` of the shortest decimal that reads back as float64 a > 0, by Go's "
    "rule (strconv's shortest formatting): the exact decimals of a and of the halfway points to "
    "its neighbours (inclusive when the mantissa is even; the lower gap halved at a power of two "
    "above the smallest exponent), compared digit by digit; where both roundings stay inside, "
    "the nearer (a tie to even). Exact decimal arithmetic on digit strings: for engines that "
    "print no shortest digits. With `keep` (40), far from 1 the three are cut to their first "
    "digits (_big_scaled3): the digits up to the decision are then exact unless a run of 9s "
    "reaches the uncertain ones, and a cut number never ends early; else all digits again.",
    """
""" + scaled_by_two(subnormal_floor=True) + """
{%- set mant = ns.t|int -%}
{%- set g = ns.e - 2 -%}
{%- set inclusive = mant % 2 == 0 -%}
{%- set up = _big_mul_add(mant ~ '', 4, 2) -%}
{%- set value = _big_mul_add(mant ~ '', 4, 0) -%}
{%- set low = _big_mul_add((mant - 1) ~ '', 4,
    2 if mant > 4503599627370496 or ns.e == -1074 else 3) -%}
{%- set cut = (_big_scaled3(up, value, low, g, keep if g > 60 or g < -60 else 0)).split(' ') -%}
{%- set frac = 0 - g if g < 0 else 0 -%}
{%- set drop = cut[3]|int -%}
{%- set up = cut[0] -%}
{%- set n = up|length -%}
{%- set value = ('0000' ~ cut[1])[-n:] -%}
{%- set low = ('0000' ~ cut[2])[-n:] -%}
{%- set far = 100000 -%}
{%- set nlow = far if cut[6] == '1' else low.replace('0', ' ').rstrip()|length -%}
{%- set nup = far if cut[4] == '1' else up.replace('0', ' ').rstrip()|length -%}
{%- set nvalue = far if cut[5] == '1' else value.replace('0', ' ').rstrip()|length -%}
{%- set st = namespace(at=-1, how='') -%}
{%- for i in range(n) -%}
{%- if st.at < 0 -%}
{%- set l = low[i:i + 1]|int -%}{%- set d = value[i:i + 1]|int -%}{%- set u = up[i:i + 1]|int -%}
{%- set okdown = l != d or (inclusive and i + 1 == nlow) -%}
{%- set okup = d != u and (inclusive or d + 1 < u or i + 1 < nup) -%}
{%- if okdown or okup -%}
{%- set st.at = i -%}
{%- set st.how = 'near' if okdown and okup else ('down' if okdown else 'up') -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- set i = st.at -%}
{%- set sure = keep - 6 -%}
{%- if drop > 0 and (i < 0 or i + 2 >= sure
    or (up[i + 2:sure] ~ value[i + 2:sure] ~ low[i + 2:sure]).replace('9', '') == '') -%}
{{- _shortest_parts(a, 0) -}}
{%- else -%}
{%- set prefix = value[:i + 1] -%}
{%- set next = value[i + 1:i + 2]|int if i + 1 < n else 0 -%}
{%- set odd = (value[i:i + 1]|int) % 2 == 1 -%}
{%- set roundup = st.how == 'up' or (st.how == 'near' and (next > 5
    or (next == 5 and (nvalue > i + 2 or odd)))) -%}
{%- set digits = _big_mul_add(prefix, 1, 1) if roundup else prefix -%}
{%- set lead = ('0' if digits == '' else digits) -%}
{%- set d = _go_decimal(lead) -%}
{%- set d = d.split(' ') -%}
{{- d[0] ~ ' ' ~ ((d[1]|int) + n + drop - (i + 1) - frac) -}}
{%- endif -%}
""",
    ("_big_mul_add", "_big_scaled3", "_go_decimal"),
)

_define(
    "_go_float", "x, verb",
    "Internal: float64(x) laid out by Go: verb 'json' = encoding/json, anything else = fmt %v. "
    "Fast path (engines that print shortest digits): where Go writes plain decimals (and below "
    "1e15, where every such engine's plain output has the shortest digits, integral ones too) "
    "the engine's string minus `.0` is it.",
    """
{%- set native = @NATIVE@ -%}
{%- set s = (x|float|string) if native else 'e' -%}
{%- set a = (x|float|abs) if native else 0 -%}
{%- if 'e' not in s and ((verb == 'json' and a >= 0.000001 and a < 1000000000000000)
    or (verb != 'json' and a >= 0.0001 and a < 1000000)) -%}
{{- s[:-2] if s.endswith('.0') else s -}}
{%- else -%}
{#- @INNER@ -#}
{%- set f = _go_float_parts(x) -%}
{%- set f = f.split(' ') -%}
{%- set sig = f[1] -%}
{%- set sign = '-' if f[0] == '-' else '' -%}
{%- if sig == '' -%}
{{- sign ~ '0' -}}
{%- else -%}
{%- set point = f[2]|int -%}
{%- set e10 = point - 1 -%}
{%- set j = verb == 'json' -%}
{%- if (j and (e10 < -6 or e10 >= 21)) or (not j and (e10 < -4 or e10 >= 6)) -%}
{%- set ae = (0 - e10) if e10 < 0 else e10 -%}
{{- sign ~ sig[:1] ~ ('.' ~ sig[1:] if sig|length > 1 else '') ~ 'e'
    ~ ('-' if e10 < 0 else '+') ~ ('0' if not j and ae < 10 else '') ~ ae|string -}}
{%- elif point <= 0 -%}
{{- sign ~ '0.' ~ ZEROS[:(0 - point)] ~ sig -}}
{%- elif point >= sig|length -%}
{{- sign ~ sig ~ ZEROS[:(point - sig|length)] -}}
{%- else -%}
{{- sign ~ sig[:point] ~ '.' ~ sig[point:] -}}
{%- endif -%}
{%- endif -%}
{%- endif -%}
""",
    inner=("_go_float_parts",),
)

_define(
    "json_number", "x",
    "Go json.Marshal of float64(x): shortest round-trip digits, no `.0`; exponent form "
    "(`1e-7`, `1e+21`, no zero padding) iff |x| < 1e-6 or |x| >= 1e21; `-0` for -0.0.",
    "{%- if " + SMALL_INT.format(v="x", limit="@SAFE@") + " -%}{{- x|string -}}"
    "{%- else -%}{{- _go_float(x, 'json') -}}{%- endif -%}",
    ("_go_float",),
)

_define(
    "print_number", "x",
    "Go fmt %v of float64(x) (what `{{ . }}` prints for a JSON number): shortest round-trip "
    "digits, exponent form (`1e+06`, `1e-05`, sign and at least two digits) iff the decimal "
    "exponent is < -4 or >= 6 (`999999`, `1.234567e+06`); `-0` for -0.0.",
    "{%- if " + SMALL_INT.format(v="x", limit="1000000") + " -%}{{- x|string -}}"
    "{%- else -%}{{- _go_float(x, 'v') -}}{%- endif -%}",
    ("_go_float",),
)

_define(
    "json_value", "v",
    "Go json.Marshal of a decoded-JSON `any`: null/true/false, numbers as json_number, strings "
    "as json_string, maps with keys sorted bytewise at every depth, compact. An undefined `v` "
    "prints `null` (a nil interface).",
    """
{%- if v is not defined or v is none -%}{{- 'null' -}}
{%- elif v is boolean -%}{{- 'true' if v else 'false' -}}
{%- elif v is string -%}{{- json_string(v) -}}
{%- elif v is number -%}{{- json_number(v) -}}
{%- elif v is mapping -%}
{{- '{' -}}
{%- for k, x in @SORTED(v)@ -%}
{{- (',' if not loop.first else '') ~ json_string(k) ~ ':' ~ json_value_of(x) -}}
{%- endfor -%}
{{- '}' -}}
{%- else -%}
{{- '[' -}}
{%- for x in v -%}{{- (',' if not loop.first else '') ~ json_value_of(x) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("json_string", "json_number"),
)

_define(
    "_go_print", "v",
    "Internal: fmt %v of a decoded-JSON value inside a container (nil → `<nil>`).",
    """
{%- if v is not defined or v is none -%}{{- '<nil>' -}}
{%- elif v is boolean -%}{{- 'true' if v else 'false' -}}
{%- elif v is string -%}{{- v -}}
{%- elif v is number -%}{{- print_number(v) -}}
{%- elif v is mapping -%}
{{- 'map[' -}}
{%- for k, x in @SORTED(v)@ -%}
{{- (' ' if not loop.first else '') ~ k ~ ':' ~ _go_print(x) -}}
{%- endfor -%}
{{- ']' -}}
{%- else -%}
{{- '[' -}}
{%- for x in v -%}{{- (' ' if not loop.first else '') ~ _go_print(x) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("print_number",),
)

_define(
    "print_value", "v",
    "What text/template prints for a decoded-JSON `any` (`{{ $v }}`): strings as is, numbers "
    "as print_number, `true`/`false`, maps `map[k:v k2:v2]` (keys sorted), slices `[a b]`, "
    "`<nil>` for nil inside containers, `<no value>` for nil/undefined at the top.",
    """
{%- if v is not defined or v is none -%}{{- '<no value>' -}}
{%- else -%}{{- _go_print(v) -}}
{%- endif -%}
""",
    ("_go_print",),
)

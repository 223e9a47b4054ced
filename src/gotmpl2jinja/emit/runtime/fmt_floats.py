"""Runtime macros for printf's %e, %f, %g and %x of float64s known only at run time:
strconv's formatting of the exact binary value (rounded half to even, as Go rounds it), in
digit strings and integers below 2**53, which every engine computes alike.

May depend on: `emit.runtime.library`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import AS_FLOAT64, _define, scaled_by_two

_define(
    "_exact_decimal", "a, keep",
    "Internal: `SIG POINT LOST` (SIG and POINT as _go_decimal's) of the decimal value of "
    "float64 a > 0: a = t * 2**e with t < 2**53 odd (powers of two are exact on every engine), "
    "then t * 2**e for e >= 0, or t * 5**-e with the point -e places to the left, in digit "
    "strings. `keep` > 0 keeps only the first `keep` digits after each multiplication (a "
    "subnormal's 750 digits cost seconds on llama.cpp): the result is then below the exact "
    "value by less than 2 * 108 units of its last digit (108 multiplications at most, each "
    "cut losing less than one), and LOST is 1 when a cut dropped a digit other than 0.",
    """
""" + scaled_by_two(subnormal_floor=True) + """
{%- set m = namespace(t=ns.t|int, e=ns.e) -%}
{%- for j in [5, 4, 3, 2, 1, 0] -%}
{%- set q = [2, 4, 16, 256, 65536, 4294967296][j] -%}
{%- if m.t % q == 0 -%}
{%- set m.t = (m.t / q)|int -%}{%- set m.e = m.e + [1, 2, 4, 8, 16, 32][j] -%}
{%- endif -%}
{%- endfor -%}
{%- set n = m.e if m.e >= 0 else 0 - m.e -%}
{%- set per = 23 if m.e >= 0 else 10 -%}
{%- set big = 8388608 if m.e >= 0 else 9765625 -%}
{%- set w = namespace(d=m.t ~ '', drop=0, lost=0) -%}
{%- set batches = ((n - n % per) / per)|int -%}
{%- for i in range(batches + n % per) -%}
{%- set r = _big_mul_add(w.d, big if i < batches else (2 if m.e >= 0 else 5), 0) -%}
{%- if keep > 0 and r|length > keep + 7 -%}
{%- if r[keep:].replace('0', '') != '' -%}{%- set w.lost = 1 -%}{%- endif -%}
{%- set w.drop = w.drop + (r|length) - keep -%}{%- set r = r[:keep] -%}
{%- endif -%}
{%- set w.d = r -%}
{%- endfor -%}
{%- set d = _go_decimal(w.d) -%}
{%- set d = d.split(' ') -%}
{{- d[0] ~ ' ' ~ ((d[1]|int) + w.drop + (m.e if m.e < 0 else 0)) ~ ' ' ~ w.lost -}}
""",
    ("_big_mul_add", "_go_decimal"),
)

_define(
    "go_fmt_float", "x, verb, prec",
    "strconv.FormatFloat(float64(x), verb, prec, 64), as fmt calls it for %f %F %e %E %g %G: "
    "the exact binary value rounded half to even at `prec` decimals (f), `prec` + 1 digits (e) "
    "or `prec` digits (g; 0 means 1), then laid out by Go's rules (%e's exponent has a sign "
    "and at least two digits; %g drops trailing zeros and takes %e below 1e-4 or from "
    "10**prec). `prec` -1: %g's shortest digits (print_number); %e and %f need one (fmt's "
    "default is 6). %e and %g read the first digits only (_exact_decimal's `keep`), and all "
    "of them where those end in 4999999… after the rounding digit; %f of a number below "
    "0.4 * 10**-prec is zero at once.",
    """
{%- if prec < 0 -%}
{%- set s = print_number(x) -%}
{{- s.replace('e', 'E') if verb == 'G' else s -}}
{%- else -%}
{#- @INNER@ -#}
{%- set neg = x < 0 or (x == 0 and (x|string)[:1] == '-') -%}
""" + AS_FLOAT64.format(v="x", f="f") + """
{%- set a = (0 - f) if x < 0 else f -%}
{%- set v = 'f' if verb in 'fF' else ('e' if verb in 'eE' else 'g') -%}
{%- set p = (1 if prec == 0 else prec) if v == 'g' else prec -%}
{%- set keep = 0 if v == 'f' else p + 16 -%}
{%- set zero = a == 0 or (v == 'f' and p <= 22 and a * @POW10@[p] < 0.4) -%}
{%- set d = (' 0 0' if zero else _exact_decimal(a, keep)).split(' ') -%}
{%- set ns = namespace(digits=d[0], dp=d[1]|int, lost=d[2] == '1') -%}
{%- set n = ns.dp + p if v == 'f' else (p + 1 if v == 'e' else p) -%}
{%- if ns.lost and (ns.digits[n:] ~ '00000000')[:8] == '49999999' -%}
{%- set d = (_exact_decimal(a, 0)).split(' ') -%}
{%- set ns.digits = d[0] -%}{%- set ns.lost = false -%}
{%- endif -%}
{%- if n >= 0 and n < ns.digits|length -%}
{%- set r = ns.digits[n:n + 1]|int -%}
{%- set kept = ns.digits[:n] -%}
{%- if r > 5 or (r == 5 and (ns.lost or n + 1 < ns.digits|length
    or (n > 0 and (ns.digits[n - 1:n]|int) % 2 == 1))) -%}
{%- set up = _big_mul_add(kept, 1, 1) -%}
{%- if up|length > kept|length -%}{%- set ns.dp = ns.dp + 1 -%}{%- endif -%}
{%- set kept = up -%}
{%- endif -%}
{%- set ns.digits = kept.replace('0', ' ').rstrip().replace(' ', '0') -%}
{%- endif -%}
{%- set digits = ns.digits -%}{%- set dp = ns.dp -%}{%- set nd = digits|length -%}
{%- if v == 'g' -%}
{%- set eprec = nd if p > nd and nd >= dp else p -%}
{%- if dp - 1 < -4 or dp - 1 >= eprec -%}
{%- set v = 'e' -%}{%- set p = (nd if p > nd else p) - 1 -%}
{%- else -%}
{%- set v = 'f' -%}{%- set p = (nd if p > dp else p) - dp -%}{%- set p = p if p > 0 else 0 -%}
{%- endif -%}
{%- endif -%}
{%- set out -%}
{%- if v == 'e' -%}
{{- digits[:1] if nd > 0 else '0' -}}
{%- if p > 0 -%}{{- '.' -}}
{%- for i in range(1, p + 1) -%}{{- digits[i:i + 1] if i < nd else '0' -}}{%- endfor -%}
{%- endif -%}
{%- set exp = dp - 1 if nd > 0 else 0 -%}
{%- set ae = (0 - exp) if exp < 0 else exp -%}
{{- ('E' if verb in 'EG' else 'e') ~ ('-' if exp < 0 else '+') ~ ('0' if ae < 10 else '') ~ ae -}}
{%- else -%}
{%- if dp > 0 -%}
{{- digits[:dp] -}}{%- for i in range(dp - nd if dp > nd else 0) -%}{{- '0' -}}{%- endfor -%}
{%- else -%}{{- '0' -}}
{%- endif -%}
{%- if p > 0 -%}{{- '.' -}}
{%- for i in range(p) -%}
{{- digits[dp + i:dp + i + 1] if dp + i >= 0 and dp + i < nd else '0' -}}
{%- endfor -%}
{%- endif -%}
{%- endif -%}
{%- endset -%}
{{- ('-' if neg else '') ~ out -}}
{%- endif -%}
""",
    ("print_number",),
    inner=("_exact_decimal",),
)

_define(
    "go_hex_float", "x, verb, prec",
    "strconv.FormatFloat(float64(x), verb, prec, 64) for verb 'x' or 'X' (fmt's %x of a "
    "float64; `prec` -1: shortest): `0x1.8p+01`, the mantissa normalised to a leading 1 "
    "(subnormals too), its 52 bits after the point in hex without trailing zeros, or rounded "
    "half to even to `prec` digits (a carry past the leading digit halves it and adds one to "
    "the exponent), the binary exponent with a sign and at least two digits; zero `0x0p+00`. "
    "Integer arithmetic below 2**53 only: the mantissa is an integer once the value is scaled "
    "by powers of two, which every engine does exactly.",
    """
{%- set neg = x < 0 or (x == 0 and (x|string)[:1] == '-') -%}
""" + AS_FLOAT64.format(v="x", f="f") + """
{%- set a = (0 - f) if x < 0 else f -%}
""" + scaled_by_two(subnormal_floor=False) + """
{%- set m = namespace(lead=1 if a != 0 else 0, frac=((ns.t|int) - 4503599627370496)
    if a != 0 else 0, e=ns.e + 52 if a != 0 else 0, n=13) -%}
{%- if prec >= 0 and prec < 13 -%}
{%- set d = [4503599627370496, 281474976710656, 17592186044416, 1099511627776, 68719476736,
    4294967296, 268435456, 16777216, 1048576, 65536, 4096, 256, 16][prec] -%}
{%- set whole = m.lead * 4503599627370496 + m.frac -%}
{%- set extra = whole % d -%}
{%- set keep = ((whole - extra) / d)|int -%}
{%- set keep = keep + 1 if extra * 2 > d or (extra * 2 == d and keep % 2 == 1) else keep -%}
{%- set one = (4503599627370496 / d)|int -%}
{%- if m.lead != 0 and keep >= 2 * one -%}{%- set keep = one -%}{%- set m.e = m.e + 1 -%}
{%- endif -%}
{%- set m.lead = 1 if keep >= one else 0 -%}
{%- set m.frac = keep - one if keep >= one else keep -%}
{%- set m.n = prec -%}
{%- endif -%}
{%- set hex = '0123456789abcdef' if verb == 'x' else '0123456789ABCDEF' -%}
{%- set h = namespace(n=m.frac, out='') -%}
{%- for i in range(m.n) -%}
{%- set r = h.n % 16 -%}
{%- set h.out = hex[r:r + 1] ~ h.out -%}{%- set h.n = ((h.n - r) / 16)|int -%}
{%- endfor -%}
{%- for i in range(prec - m.n if prec > m.n else 0) -%}{%- set h.out = h.out ~ '0' -%}
{%- endfor -%}
{%- set digits = h.out.replace('0', ' ').rstrip().replace(' ', '0') if prec < 0 else h.out -%}
{%- set ae = (0 - m.e) if m.e < 0 else m.e -%}
{{- ('-' if neg else '') ~ '0' ~ verb ~ m.lead ~ ('.' ~ digits if digits != '' else '')
    ~ ('p' if verb == 'x' else 'P') ~ ('-' if m.e < 0 else '+') ~ ('0' if ae < 10 else '')
    ~ ae -}}
""",
)

_define(
    "go_bin_float", "x",
    "strconv.FormatFloat(float64(x), 'b', -1, 64) (fmt's %b of a float64): the integer "
    "mantissa and the binary exponent, `6755399441055744p-52` for 1.5: 53 bits for a normal "
    "number, a subnormal's own bits over `p-1074`, zero `0p-1074`, a sign for negatives and -0.",
    """
{%- set neg = x < 0 or (x == 0 and (x|string)[:1] == '-') -%}
""" + AS_FLOAT64.format(v="x", f="f") + """
{%- set a = (0 - f) if x < 0 else f -%}
{%- if a == 0 -%}{{- ('-' if neg else '') ~ '0p-1074' -}}
{%- else -%}
""" + scaled_by_two(subnormal_floor=True) + """
{{- ('-' if neg else '') ~ ((ns.t|int)|string) ~ 'p' ~ ('+' if ns.e >= 0 else '')
    ~ (ns.e|string) -}}
{%- endif -%}
""",
)

_define(
    "go_sharp_float", "s, verb, prec",
    "fmtFloat's `#` flag on strconv's text `s` of a float64 for verb f F e E g G x X (`prec` "
    "the precision, -1: none): a point where there is none, and for g G x (not X) zeros until "
    "the mantissa has `prec` digits (6 without one) counted from its first character other "
    "than 0 and the point (so %#x counts its `x`), a lone 0 counting once; the exponent "
    "stays after them. Infinities and NaN are left as they are, as Go leaves them.",
    """
{%- set neg = s[:1] == '-' -%}
{%- set body = s[1:] if neg else s -%}
{%- if 'Inf' in body or 'NaN' in body -%}{{- s -}}
{%- else -%}
{%- set mant = body.split(('p' if verb == 'x' else 'P') if verb in 'xX'
    else ('E' if verb in 'EG' else 'e'))[0] -%}
{%- set n = ((6 if prec < 0 else prec) if verb in 'gGx' else 0)
    - (mant.replace('.', '').replace('0', ' ').lstrip()|length) - (1 if mant == '0' else 0) -%}
{{- ('-' if neg else '') ~ mant ~ ('' if '.' in mant else '.') -}}
{%- for i in range(n if n > 0 else 0) -%}{{- '0' -}}{%- endfor -%}
{{- body[mant|length:] -}}
{%- endif -%}
""",
)

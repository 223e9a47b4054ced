"""Runtime macro for Ollama's yesterdayDate.

May depend on: `emit.runtime.library`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import _define

# ---------------------------------------------------------------------------------------------
# dates

_define(
    "yesterday_date", "",
    "Ollama's yesterdayDate: the day before strftime_now('%Y-%m-%d') (Go's "
    "`time.Now().AddDate(0, 0, -1)`), as YYYY-MM-DD, by calendar arithmetic: month lengths, "
    "Gregorian leap years, year boundaries. Years 1..9999.",
    """
{%- set today = strftime_now('%Y-%m-%d') -%}
{%- set today = today.split('-') -%}
{%- set y = today[0]|int -%}
{%- set m = today[1]|int -%}
{%- set d = today[2]|int - 1 -%}
{%- if d == 0 -%}
{%- set m = m - 1 -%}
{%- if m == 0 -%}
{%- set y = y - 1 -%}
{%- set m = 12 -%}
{%- endif -%}
{%- set leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 -%}
{%- set d = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] -%}
{%- endif -%}
{{- ('000' ~ y|string)[-4:] ~ '-' ~ ('0' ~ m|string)[-2:] ~ '-' ~ ('0' ~ d|string)[-2:] -}}
""",
)

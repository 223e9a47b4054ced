"""Stage 9, the command line: `gotmpl2jinja parse|render|convert|verify|migrate|compare|sweep|…`.

May depend on every earlier stage; the commands import their stage when they run (start-up time).
"""

"""`gotmpl2jinja serve`: a local playground in the browser (translate, render, diff, verify).

`requests` answers the page's requests with the pipeline's library API
(`gotmpl2jinja.pipeline`: read, convert, render, verify, the files convert writes); `worker`
runs it in a process of its own, so that a template that loops or a crash never takes the
server down; `app` is the web application (Starlette) and `static/` its page (plain JS and
CSS, shipped in the package: no CDN, works offline).

May depend on: nothing here (the modules say what they use).
"""

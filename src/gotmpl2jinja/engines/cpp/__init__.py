"""The C++ engines: llama.cpp's own Jinja engine and minja, built from llama-cpp-python sdists.

`build` fetches and compiles them (on request only); the drivers (`*_driver.cpp`) are the
small programs of ours that the harness talks to; `gotmpl2jinja.engines.cpp_engines` runs them.

May depend on: nothing of the project.
"""

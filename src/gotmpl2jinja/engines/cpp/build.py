"""Build the C++ engines (llama.cpp's `common/jinja`, and minja) and llama.cpp's tokenizer from
the llama-cpp-python sdists.

Why from sdists: the engines are the real C++ code llama.cpp ships, and PyPI's llama-cpp-python
source distributions vendor exactly that code (0.3.36: llama.cpp 0c1e57098 with `common/jinja`;
0.3.16: llama.cpp 4227c9b, the last with minja). Only the Jinja engine and the chat code that
builds llama-server's prompt are compiled, together with a driver of ours (`*_driver.cpp`
beside this file). The rest of llama.cpp (the model, ggml's backends) is never needed to build
a prompt; the symbols the chat code still references are given stubs that abort if ever called.
The tokenizer recipe compiles `llama-vocab` with what loads a vocabulary from a GGUF, and copies
the sdist's vocabulary-only GGUFs beside its driver.

Setup happens only on request (`install`, at install time: it runs `pip download` for the sdist,
the one step that needs a registry) and is cached per user: `cache_root()/engines/`. Nothing
here reaches the network during a verification; `driver_path` only looks.

May depend on: the standard library only (no other gotmpl2jinja module but errors).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from gotmpl2jinja.errors import Gotmpl2JinjaError

#: Where a driver's sources live (this folder, shipped as package data).
HERE = Path(__file__).resolve().parent


class EngineSetupError(Gotmpl2JinjaError):
    """A C++ engine could not be fetched or built (the message says which step and why)."""


@dataclass(frozen=True)
class EngineRecipe:
    """How to build one engine's driver from one llama-cpp-python sdist."""

    name: str
    package_version: str
    llama_commit: str
    driver: str
    sources: tuple[str, ...]  # relative to vendor/llama.cpp; globs allowed
    includes: tuple[str, ...]
    extract: tuple[str, ...]  # folders of vendor/llama.cpp the build reads
    link_flags: tuple[str, ...] = ()
    #: files of vendor/llama.cpp (globs) copied beside the driver, for the tests and the CLI
    data: tuple[str, ...] = ()
    #: llama.cpp's build-info.cpp (common/) is compiled in
    build_info: bool = True

    @property
    def sdist_name(self) -> str:
        return f"llama_cpp_python-{self.package_version}.tar.gz"


_COMMON_EXTRACT = ("common", "include", "ggml/include", "vendor/nlohmann", "tools/mtmd",
                   "tools/server")

RECIPES: dict[str, EngineRecipe] = {
    "llamacpp": EngineRecipe(
        name="llamacpp",
        package_version="0.3.36",
        llama_commit="0c1e57098",
        driver="llamacpp_driver.cpp",
        sources=(
            "common/jinja/*.cpp", "common/json.cpp", "common/unicode.cpp", "common/trie.cpp",
            "common/chat.cpp", "common/chat-auto-parser-generator.cpp",
            "common/chat-auto-parser-helpers.cpp", "common/chat-diff-analyzer.cpp",
            "common/chat-peg-parser.cpp", "common/peg-parser.cpp",
            "common/json-schema-to-grammar.cpp", "common/json-schema.cpp", "common/log.cpp",
            "common/common.cpp", "common/parsers/*.cpp", "tools/server/server-common.cpp",
        ),
        includes=("common", "vendor", "ggml/include", "include", "tools/mtmd", "tools/server"),
        extract=_COMMON_EXTRACT,
        # the driver keeps llama-server's per-request template analysis, and does not repeat a
        # request's render for its generation prompt (llamacpp_driver.cpp)
        link_flags=("-Wl,--wrap="
                    "_ZN10autoparser10autoparser16analyze_templateERK20common_chat_template",
                    "-Wl,--wrap=_Z33common_chat_template_direct_applyB5cxx11RK20common_chat_"
                    "templateRKN10autoparser17generation_paramsE",
                    "-Wl,--wrap=_Z38common_chat_template_generation_promptB5cxx11RK20common_"
                    "chat_templateRKN10autoparser17generation_paramsE"),
    ),
    "minja": EngineRecipe(
        name="minja",
        package_version="0.3.16",
        llama_commit="4227c9b",
        driver="minja_driver.cpp",
        sources=(
            "common/chat.cpp", "common/chat-parser.cpp", "common/json-partial.cpp",
            "common/json-schema-to-grammar.cpp", "common/regex-partial.cpp", "common/log.cpp",
            "common/common.cpp",
        ),
        includes=("common", "vendor", "ggml/include", "include", "tools/mtmd", "tools/server"),
        extract=(*_COMMON_EXTRACT, "vendor/minja", "vendor/cpp-httplib"),
    ),
    # llama.cpp's own tokenizer (llama-vocab and its unicode tables), with what loads a
    # vocabulary from a GGUF (the model loader, gguf, ggml's types); never a model's weights.
    # The vocabulary-only GGUFs the sdist ships (with llama.cpp's tokenizer test texts) are
    # copied beside the driver: the token-level tests use them, nothing downloads one.
    "tokenizer": EngineRecipe(
        name="tokenizer",
        package_version="0.3.36",
        llama_commit="0c1e57098",
        driver="tokenizer_driver.cpp",
        sources=(
            "src/llama-vocab.cpp", "src/unicode.cpp", "src/unicode-data.cpp",
            "src/llama-model-loader.cpp", "src/llama-arch.cpp", "src/llama-impl.cpp",
            "src/llama-mmap.cpp", "ggml/src/gguf.cpp", "ggml/src/ggml-threading.cpp",
            "ggml/src/ggml.c",
        ),
        includes=("include", "ggml/include", "ggml/src", "src", "vendor"),
        extract=("include", "src", "ggml/include", "ggml/src", "vendor/nlohmann", "models"),
        data=("models/ggml-vocab-*.gguf", "models/ggml-vocab-*.gguf.inp",
              "models/ggml-vocab-*.gguf.out"),
        build_info=False,
    ),
}

#: llama.cpp's own release flags (CMake's Release: -O3 -DNDEBUG), as llama-server ships.
_CXXFLAGS = ("-std=c++17", "-O3", "-DNDEBUG", "-w", "-DG2J_WITH_SERVER")
#: ggml's C files, as its CMake build compiles them on Linux.
_CFLAGS = ("-std=gnu11", "-D_GNU_SOURCE", "-O3", "-DNDEBUG", "-w")
#: Bump when the recipe changes in a way the hash of the inputs does not see.
_RECIPE_REVISION = "1"

Progress = Callable[[str], None]


def cache_root() -> Path:
    """$GOTMPL2JINJA_CACHE, else $XDG_CACHE_HOME/gotmpl2jinja, else ~/.cache/gotmpl2jinja."""
    explicit = os.environ.get("GOTMPL2JINJA_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gotmpl2jinja"


def _compiler() -> str | None:
    return os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")


def _build_key(recipe: EngineRecipe) -> str:
    """A hash of everything the driver binary depends on that can change under one version."""
    digest = hashlib.sha256()
    c_flags = _CFLAGS if any(source.endswith(".c") for source in recipe.sources) else ()
    for part in (recipe.name, recipe.package_version, _RECIPE_REVISION, *recipe.sources,
                 *recipe.includes, *_CXXFLAGS, *c_flags, *recipe.link_flags, *recipe.data):
        digest.update(part.encode() + b"\0")
    digest.update((HERE / recipe.driver).read_bytes())
    return digest.hexdigest()[:16]


def engine_dir(name: str) -> Path:
    """The folder that holds (or will hold) the built driver of engine `name`."""
    recipe = RECIPES[name]
    return cache_root() / "engines" / f"{name}-{recipe.package_version}-{_build_key(recipe)}"


def driver_path(name: str) -> Path | None:
    """The built driver of engine `name`, or None when it is not set up (nothing is built)."""
    path = engine_dir(name) / "driver"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def state(name: str) -> str | None:
    """None when engine `name` is ready, else the one-line reason it is not."""
    if driver_path(name) is not None:
        return None
    if _compiler() is None:
        return "needs a C++ compiler (g++), then `gotmpl2jinja engines install`"
    return f"not set up: run `gotmpl2jinja engines install {name}`"


def _sdist(recipe: EngineRecipe, progress: Progress, sdist: Path | None) -> Path:
    """The sdist tarball: given, cached, or fetched with pip (the one networked step)."""
    if sdist is not None:
        if not sdist.is_file():
            raise EngineSetupError(f"{sdist}: no such file")
        return sdist
    folder = cache_root() / "sdist"
    cached = folder / recipe.sdist_name
    if cached.is_file():
        return cached
    folder.mkdir(parents=True, exist_ok=True)
    progress(f"{recipe.name}: downloading llama-cpp-python=={recipe.package_version} (sdist)")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--quiet", "-d", str(folder), f"llama-cpp-python=={recipe.package_version}"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0 or not cached.is_file():
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise EngineSetupError(
            f"{recipe.name}: pip download llama-cpp-python=={recipe.package_version} "
            f"failed: {tail[0]}")
    return cached


def _extract(recipe: EngineRecipe, tarball: Path, target: Path) -> Path:
    """Unpack the folders the build reads; returns the vendor/llama.cpp folder."""
    prefix = f"llama_cpp_python-{recipe.package_version}/vendor/llama.cpp/"
    wanted = tuple(prefix + folder + "/" for folder in recipe.extract)
    with tarfile.open(tarball) as archive:
        members = [m for m in archive.getmembers()
                   if m.name.startswith(wanted) and (m.isfile() or m.isdir())]
        if not members:
            raise EngineSetupError(f"{tarball}: not a llama-cpp-python sdist with llama.cpp")
        try:
            archive.extractall(target, members=members, filter="data")
        except TypeError:  # a Python without extraction filters (before 3.10.12 / 3.11.4)
            archive.extractall(target, members=members)
    return target / prefix


def _sources(root: Path, recipe: EngineRecipe) -> list[Path]:
    files: list[Path] = []
    for pattern in recipe.sources:
        found = sorted(root.glob(pattern))
        if not found:
            raise EngineSetupError(f"{recipe.name}: the sdist has no {pattern}")
        files += found
    return files


def _ggml_version(root: Path, recipe: EngineRecipe, work: Path) -> Path:
    """ggml-version.h from its template, as ggml's CMake build configures it; returns the
    folder that holds it (an include directory)."""
    template = (root / "ggml" / "src" / "ggml-version.h.in").read_text(encoding="utf-8")
    values = {"GGML_VERSION": "0.0.0", "GGML_BUILD_COMMIT": recipe.llama_commit}
    folder = work / "generated"
    folder.mkdir(exist_ok=True)
    text = re.sub(r"@(\w+)@", lambda m: values.get(m.group(1), "0"), template)
    (folder / "ggml-version.h").write_text(text, encoding="utf-8")
    return folder


def _copy_data(root: Path, recipe: EngineRecipe, folder: Path) -> None:
    """The recipe's data files, copied into `folder` (flat)."""
    for pattern in recipe.data:
        found = sorted(root.glob(pattern))
        if not found:
            raise EngineSetupError(f"{recipe.name}: the sdist has no {pattern}")
        for path in found:
            shutil.copyfile(path, folder / path.name)


def data_dir(name: str) -> Path | None:
    """The folder of engine `name`'s data files (the tokenizer's vocabularies), or None when
    the engine is not built."""
    path = driver_path(name)
    return path.parent if path is not None and RECIPES[name].data else None


def _build_info(root: Path, recipe: EngineRecipe, work: Path) -> Path:
    """llama.cpp's build-info.cpp from its template, as its CMake build configures it."""
    template = (root / "common" / "build-info.cpp.in").read_text(encoding="utf-8")
    values = {"LLAMA_BUILD_NUMBER": "0", "LLAMA_BUILD_COMMIT": recipe.llama_commit,
              "BUILD_COMPILER": "g++", "BUILD_TARGET": "gotmpl2jinja-driver"}
    text = re.sub(r"@(\w+)@", lambda m: values.get(m.group(1), "0"), template)
    path = work / "build-info.cpp"
    path.write_text(text, encoding="utf-8")
    return path


_UNDEFINED = re.compile(r"undefined reference to [`']([^'`]+)'")


def _stubs(names: list[str], work: Path) -> Path:
    """A C file defining each symbol the linker could not find as a function that aborts.

    These are model, ggml and network functions the chat code links against but never calls
    when it only builds a prompt; if one is ever called, the driver dies with its name and the
    Python side reports the engine failure.
    """
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "static void g2j_stub(const char *name) {",
        '    fprintf(stderr, "gotmpl2jinja driver: %s is not available (no model)\\n", name);',
        "    abort();",
        "}",
    ]
    for index, name in enumerate(names):
        lines.append(f'void g2j_stub_{index}(void) __asm__("{name}");')
        lines.append(f'void g2j_stub_{index}(void) {{ g2j_stub("{name}"); }}')
    path = work / "stubs.c"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(command: list[str], what: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0 and what:
        message = (result.stderr or result.stdout).strip()
        first = next((line for line in message.splitlines() if "error" in line), message[:300])
        raise EngineSetupError(f"{what}: {first}")
    return result


def install(name: str, *, progress: Progress = lambda _: None, sdist: Path | None = None,
            jobs: int | None = None) -> Path:
    """Fetch (if needed) and build engine `name`; returns the driver's path. Idempotent."""
    recipe = RECIPES[name]
    existing = driver_path(name)
    if existing is not None:
        progress(f"{name}: already built ({existing})")
        return existing
    compiler = _compiler()
    if compiler is None:
        raise EngineSetupError(f"{name}: needs a C++ compiler (g++ or $CXX)")
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc") or compiler
    tarball = _sdist(recipe, progress, sdist)
    target = engine_dir(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}-", dir=target.parent) as tmp:
        work = Path(tmp)
        progress(f"{name}: unpacking {tarball.name}")
        root = _extract(recipe, tarball, work / "src")
        includes = [f"-I{root / inc}" for inc in recipe.includes]
        units = [HERE / recipe.driver, *_sources(root, recipe)]
        if recipe.build_info:
            units.append(_build_info(root, recipe, work))
        if any(unit.suffix == ".c" for unit in units):
            includes.append(f"-I{_ggml_version(root, recipe, work)}")
        objects = [work / f"{i:03d}-{unit.stem}.o" for i, unit in enumerate(units)]
        done = 0

        def compile_one(pair: tuple[Path, Path]) -> None:
            nonlocal done
            unit, obj = pair
            tool, flags = (cc, _CFLAGS) if unit.suffix == ".c" else (compiler, _CXXFLAGS)
            _run([tool, *flags, *includes, "-c", str(unit), "-o", str(obj)],
                 f"{name}: compiling {unit.name}")
            done += 1
            progress(f"{name}: compiled {done}/{len(units)} ({unit.name})")

        progress(f"{name}: compiling {len(units)} files with {Path(compiler).name}")
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
            list(pool.map(compile_one, zip(units, objects, strict=True)))
        binary = work / "driver"
        link = [compiler, "-o", str(binary), *map(str, objects), "-lpthread",
                "-Wl,--no-demangle", *recipe.link_flags]
        first = _run(link, "")
        missing = sorted(set(_UNDEFINED.findall(first.stderr + first.stdout)))
        if first.returncode != 0:
            if not missing:
                raise EngineSetupError(f"{name}: linking failed: {first.stderr.strip()[:300]}")
            progress(f"{name}: linking with {len(missing)} stubs for model/ggml functions")
            stub_obj = work / "stubs.o"
            _run([cc, "-c", str(_stubs(missing, work)), "-o", str(stub_obj)],
                 f"{name}: compiling stubs")
            _run([*link, str(stub_obj)], f"{name}: linking")
        final = work / "out"
        final.mkdir()
        _copy_data(root, recipe, final)
        shutil.move(str(binary), final / "driver")
        if target.exists():
            shutil.rmtree(target)
        final.rename(target)
    progress(f"{name}: ready ({target / 'driver'})")
    return target / "driver"

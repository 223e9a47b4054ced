"""The layout shows the pipeline (docs/architecture.md): one package per stage, each importing
only from the stages before it, no import cycle, no import hidden inside a function to dodge
one, and no module or class too long to read."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gotmpl2jinja"

#: The stages in pipeline order; a module may import from its own stage and earlier ones.
#: Stage 0 is what every stage shares, two modules at the package's root: `errors` (errors a
#: person can act on) and `lifetime` (child processes that die with their parent).
SHARED = ("errors", "lifetime")
STAGES = ["shared", "syntax", "ollama", "analysis", "emit", "engines", "verify", "formats",
          "batch", "pipeline", "serve", "cli"]
#: The package's own `__init__` (the Python API) and `__main__` sit above every stage.
API = len(STAGES)

#: Modules whose imports inside functions are deferred for start-up time, as their docstrings
#: say (`gotmpl2jinja --help` and `import gotmpl2jinja` must not load every stage).
DEFERRING = ("gotmpl2jinja", "gotmpl2jinja.cli")

MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 400


def module_name(path: Path) -> str:
    parts = ["gotmpl2jinja", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def stage(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return API
    return 0 if parts[1] in SHARED else STAGES.index(parts[1])


def imported(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The project modules an import statement loads (a name imported from a package is its
    submodule when there is one, else the package)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "gotmpl2jinja"]
    if node.level:  # relative: resolve against the importing module's package
        base = module.split(".")
        if not MODULES[module].name == "__init__.py":
            base = base[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "gotmpl2jinja":
        return []
    found = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        found.append(sub if sub in MODULES else target)
    return found


def imports(module: str) -> tuple[list[tuple[str, int]], list[tuple[str, int, bool]]]:
    """(module-level imports, imports inside functions with whether their line says why)."""
    source = MODULES[module].read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    top: list[tuple[str, int]] = []
    inner: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in imported(module, child):
                    if in_function:
                        said = "deferred" in lines[child.lineno - 1]
                        inner.append((target, child.lineno, said))
                    else:
                        top.append((target, child.lineno))
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            visit(child, nested)

    visit(tree, False)
    return top, inner


def test_the_layout_has_one_package_per_stage() -> None:
    packages = sorted(p.name for p in PACKAGE.iterdir()
                      if p.is_dir() and (p / "__init__.py").is_file())
    assert packages == sorted(STAGES[1:])
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == sorted(
        ["__init__.py", "__main__.py", *(f"{name}.py" for name in SHARED)])


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_stage_imports_only_from_itself_and_earlier_stages(module: str) -> None:
    top, inner = imports(module)
    later = [(target, line) for target, line in top + [(t, n) for t, n, _ in inner]
             if stage(target) > stage(module)]
    assert later == [], f"{module} imports from a later stage"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_inside_a_function_without_a_reason(module: str) -> None:
    _, inner = imports(module)
    if module in DEFERRING or module.startswith("gotmpl2jinja.cli."):
        doc = ast.get_docstring(ast.parse(MODULES[module].read_text(encoding="utf-8"))) or ""
        assert not inner or "deferred" in doc, f"{module}: say why imports are deferred"
        return
    unexplained = [(target, line) for target, line, said in inner if not said]
    assert unexplained == [], f"{module}: import inside a function (say '# deferred: why')"


def test_no_import_cycle() -> None:
    graph = {m: sorted({t for t, _ in imports(m)[0] if t != m}) for m in MODULES}
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def walk(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in graph.get(module, []):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if target not in state:
                walk(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_and_classes_stay_readable(module: str) -> None:
    source = MODULES[module].read_text(encoding="utf-8")
    assert source.count("\n") <= MAX_MODULE_LINES, f"{module}: over {MAX_MODULE_LINES} lines"
    long = [(node.name, node.end_lineno - node.lineno + 1)
            for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)
            and node.end_lineno is not None and node.end_lineno - node.lineno >= MAX_CLASS_LINES]
    assert long == [], f"{module}: classes over {MAX_CLASS_LINES} lines"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith("__main__")))
def test_each_module_says_what_it_is_for_and_what_it_may_depend_on(module: str) -> None:
    """A docstring that says what the module is for, with a "May depend on" paragraph that
    names every other stage the module imports from (so it cannot silently go stale)."""
    doc = ast.get_docstring(ast.parse(MODULES[module].read_text(encoding="utf-8"))) or ""
    assert doc.strip(), f"{module}: no module docstring"
    found = re.search(r"May depend on\b(.*?)(?:\n\n|$)", doc, re.S)
    assert found, f"{module}: the docstring does not say what the module may depend on"
    named = set(re.findall(r"[a-z_]+(?:\.[a-z_]+)*", found.group(1)))
    top, inner = imports(module)
    own = module.split(".")[1] if "." in module else ""
    stages = {t.split(".")[1] for t, *_ in top + inner if "." in t} - {own}
    unnamed = [s for s in sorted(stages)
               if not any(n == s or n.startswith(s + ".") for n in named)]
    assert unnamed == [], f"{module}: imports from {unnamed}, not named in 'May depend on'"

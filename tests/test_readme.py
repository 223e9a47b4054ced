"""The README's Python API example runs as written and prints what the README says it prints
(so a moved module or a renamed function cannot leave the documented API broken)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_python_api_example_prints_what_the_readme_shows() -> None:
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Python API"):]
    found = re.search(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", section, re.S)
    assert found, "the Python API section lost its example or its output"
    code, printed = found.groups()
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == printed

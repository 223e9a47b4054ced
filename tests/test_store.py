"""The local Ollama store, laid out in a tmp dir exactly as Ollama writes it, read back.

Layout as in ollama `manifest/manifest.go` + `server/create.go`: blobs `blobs/sha256-<hex>`
named by the SHA-256 of their bytes, a Docker v2 manifest (written with json.Encoder, so a
trailing newline) whose config and layers point at blobs by media type.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gotmpl2jinja.ollama.store import (
    MEDIA_MANIFEST_LIST,
    StoreError,
    list_models,
    load_model,
    parse_model_name,
)

TEMPLATE = "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}"


def put_blob(root: Path, data: bytes) -> dict[str, Any]:
    digest = hashlib.sha256(data).hexdigest()
    blobs = root / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    (blobs / f"sha256-{digest}").write_bytes(data)
    return {"digest": f"sha256:{digest}", "size": len(data)}


def layer(root: Path, media: str, data: bytes) -> dict[str, Any]:
    return {"mediaType": f"application/vnd.ollama.image.{media}", **put_blob(root, data)}


def manifest_bytes(root: Path, layers: list[dict[str, Any]], config: dict[str, Any]) -> bytes:
    cfg = {"mediaType": "application/vnd.docker.container.image.v1+json",
           **put_blob(root, json.dumps(config).encode())}
    manifest = {"schemaVersion": 2,
                "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": cfg, "layers": layers}
    return (json.dumps(manifest, separators=(",", ":")) + "\n").encode()


def full_layers(root: Path) -> list[dict[str, Any]]:
    return [
        layer(root, "model", b"GGUF\x03\x00\x00\x00fake weights"),
        layer(root, "template", TEMPLATE.encode()),
        layer(root, "system", "You are Qwen — helpful.".encode()),
        layer(root, "license", b"Apache 2.0"),
        layer(root, "params", b'{"stop":["<|im_start|>","<|im_end|>"],"temperature":0.6}\n'),
        layer(root, "messages", b'[{"role":"user","content":"hi"},'
                                b'{"role":"assistant","content":"hello"}]\n'),
    ]


def install(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    root = tmp_path / "models"
    data = manifest_bytes(root, full_layers(root), {"model_format": "gguf"})
    install(root, "manifests/registry.ollama.ai/library/qwen3/8b", data)
    return root


def test_name_normalisation_like_ollama() -> None:
    assert str(parse_model_name("qwen3:8b")) == "registry.ollama.ai/library/qwen3:8b"
    assert str(parse_model_name("qwen3")) == "registry.ollama.ai/library/qwen3:latest"
    assert str(parse_model_name("user/model:tag")) == "registry.ollama.ai/user/model:tag"
    assert str(parse_model_name("example.com:5000/team/m:v1.2")) == "example.com:5000/team/m:v1.2"
    assert str(parse_model_name("https://example.com/team/m")) == "example.com/team/m:latest"
    assert parse_model_name("hf.co/org/Some-Model-GGUF:Q4_K_M").parts() == (
        "hf.co", "org", "Some-Model-GGUF", "Q4_K_M",
    )


@pytest.mark.parametrize("bad", ["", "qwen3:", "/qwen3", "a/b/c/d", "bad name", "ns.x/m", "-m"])
def test_invalid_names_are_refused_with_a_sentence(bad: str) -> None:
    with pytest.raises(StoreError, match="not a valid Ollama model name"):
        parse_model_name(bad)


def test_load_model_reads_every_layer(store: Path) -> None:
    model = load_model("qwen3:8b", store)
    assert model.name == "registry.ollama.ai/library/qwen3:8b"
    assert model.manifest_path == store / "manifests/registry.ollama.ai/library/qwen3/8b"
    assert model.template == TEMPLATE
    assert model.system == "You are Qwen — helpful."
    assert model.params == {"stop": ["<|im_start|>", "<|im_end|>"], "temperature": 0.6}
    assert model.stop == ["<|im_start|>", "<|im_end|>"]
    assert model.messages == [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
    ]
    assert model.licenses == ["Apache 2.0"]
    assert model.model_path is not None
    assert model.model_path.read_bytes().startswith(b"GGUF")
    assert model.renderer is None and model.parser is None


def test_full_name_and_environment_variable(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_MODELS", f'  "{store}" ')
    assert load_model("registry.ollama.ai/library/qwen3:8b").template == TEMPLATE


def test_not_installed_says_where_it_looked(store: Path) -> None:
    with pytest.raises(StoreError) as info:
        load_model("qwen3:14b", store)
    message = str(info.value)
    assert "'qwen3:14b'" in message and "is not installed" in message
    assert str(store / "manifests/registry.ollama.ai/library/qwen3/14b") in message
    assert str(store / "manifests-v2/ollama.com/library/qwen3/14b") in message


def test_user_namespace_default_tag_and_explicit_host(tmp_path: Path) -> None:
    root = tmp_path / "m"
    install(root, "manifests/registry.ollama.ai/alice/tiny/latest",
            manifest_bytes(root, [layer(root, "template", b"A{{ .Prompt }}")], {}))
    install(root, "manifests/example.com:5000/team/m/v1",
            manifest_bytes(root, [layer(root, "template", b"B{{ .Prompt }}")], {}))
    assert load_model("alice/tiny", root).template == "A{{ .Prompt }}"
    assert load_model("example.com:5000/team/m:v1", root).template == "B{{ .Prompt }}"
    assert list_models(root) == ["alice/tiny:latest", "example.com:5000/team/m:v1"]


def test_manifests_v2_symlink_to_blob_wins_over_legacy(tmp_path: Path) -> None:
    root = tmp_path / "m"
    install(root, "manifests/registry.ollama.ai/library/x/latest",
            manifest_bytes(root, [layer(root, "template", b"old")], {}))
    data = manifest_bytes(root, [layer(root, "template", b"new")], {"renderer": "qwen3-coder"})
    blob = root / "blobs" / f"sha256-{hashlib.sha256(data).hexdigest()}"
    blob.write_bytes(data)
    link = root / "manifests-v2/ollama.com/library/x/latest"
    link.parent.mkdir(parents=True)
    link.symlink_to(Path("../../../../blobs") / blob.name)
    model = load_model("x", root)
    assert model.template == "new" and model.renderer == "qwen3-coder"
    assert list_models(root) == ["x:latest"]


def test_manifest_list_takes_the_ollama_runner_child(tmp_path: Path) -> None:
    root = tmp_path / "m"
    mlx = json.loads(manifest_bytes(root, [layer(root, "template", b"mlx")], {}))
    child = manifest_bytes(root, [layer(root, "template", b"ggml")], {})
    child_digest = put_blob(root, child)["digest"]
    listing = {"schemaVersion": 2, "mediaType": MEDIA_MANIFEST_LIST, "manifests": [
        {**mlx, "runner": "mlx"},
        {"mediaType": "application/vnd.docker.distribution.manifest.v2+json",
         "digest": child_digest, "runner": "ollama", "format": "gguf"},
    ]}
    install(root, "manifests-v2/ollama.com/library/y/latest", json.dumps(listing).encode())
    assert load_model("y", root).template == "ggml"


def test_legacy_prompt_media_type_and_no_template(tmp_path: Path) -> None:
    root = tmp_path / "m"
    install(root, "manifests/registry.ollama.ai/library/old/latest",
            manifest_bytes(root, [layer(root, "prompt", b"{{ .Prompt }}")], {}))
    install(root, "manifests/registry.ollama.ai/library/bare/latest",
            manifest_bytes(root, [], {}))
    assert load_model("old", root).template == "{{ .Prompt }}"
    bare = load_model("bare", root)
    assert bare.template is None and bare.stop == [] and bare.params == {}


def test_missing_blob_is_a_clear_error(store: Path) -> None:
    for blob in (store / "blobs").iterdir():
        if blob.read_bytes() == TEMPLATE.encode():
            blob.unlink()
    with pytest.raises(StoreError, match="template blob .* is missing"):
        load_model("qwen3:8b", store)


def test_list_models_and_empty_store(store: Path, tmp_path: Path) -> None:
    assert list_models(store) == ["qwen3:8b"]
    assert list_models(tmp_path / "nothing-here") == []

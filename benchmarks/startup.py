"""CLI start-up: wall time of `--help`, `collections list`, `providers`, `search`, and the overhead of `query`.

    python benchmarks/startup.py [--runs 3] [--upstream-python /work/venvs/upstream/bin/python] [--baseline DIR]

Each command is a fresh `python -m deepsearcher.cli.main ...` process, as a user types it,
against a config file pointing at a temporary Milvus Lite database (a few passages loaded
first) and, for `query`, at the scripted OpenAI-compatible server on 127.0.0.1 with no
added latency, so the wall time of `query` is overhead (imports, model load, agent, store),
not LLM time; the time the server spent handling requests is subtracted anyway.
"cold" is the first run of a command in this benchmark (model files and imports possibly not
in the OS cache), "warm" the median of the next RUNS. First output: seconds until the
command wrote its first byte to stdout or stderr.
Both run byte-compiled, as installed packages do (pip writes the .pyc files at install):
this tree is compiled once first and PYTHONDONTWRITEBYTECODE is dropped from the
environment, or every run of ours would pay ~0.5 s compiling its own sources.
Upstream (deepsearcher==0.0.2 in its venv) has only `--help`, `load` and `query`, and its
packaged config sends queries to OpenAI embeddings; its `--help` (which builds every
component first) is measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_latency import script  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "chinese" / "corpus.jsonl"


def timed(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int]:
    """(wall seconds, seconds to first output byte, exit code) of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    first = None
    selector = selectors.DefaultSelector()
    for stream in (process.stdout, process.stderr):
        selector.register(stream, selectors.EVENT_READ)
    open_streams = 2
    while open_streams:
        for key, _ in selector.select(timeout=120):
            data = os.read(key.fileobj.fileno(), 65536)
            if not data:
                selector.unregister(key.fileobj)
                open_streams -= 1
            elif first is None:
                first = time.perf_counter() - started
    code = process.wait(timeout=120)
    wall = time.perf_counter() - started
    return wall, first if first is not None else wall, code


def measure(label: str, variants: list[tuple[str, list[str], dict]], cwd: str, runs: int, server=None) -> list[dict]:
    """Cold and warm figures of one command for each (tag, command, env), runs interleaved so
    every variant sees the same machine load."""
    samples: dict[str, list[tuple[float, float]]] = {tag: [] for tag, _, _ in variants}
    for _ in range(runs + 1):
        for tag, command, env in variants:
            busy_before = server_busy(server)
            wall, first, code = timed(command, env, cwd)
            if code != 0:
                sys.exit(f"{label} ({tag}) exited {code}: {' '.join(command)}")
            samples[tag].append((wall - (server_busy(server) - busy_before), first))
    return [
        {
            "label": f"{label}{' ' + tag if tag else ''}",
            "cold": runs_of[0][0],
            "warm": statistics.median(w for w, _ in runs_of[1:]),
            "first_output": statistics.median(f for _, f in runs_of[1:]),
        }
        for tag, runs_of in samples.items()
    ]


def server_busy(server) -> float:
    """Seconds the scripted server spent answering (its configured latency per request)."""
    return 0.0 if server is None else len(server.requests) * server.latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="warm runs per command")
    parser.add_argument("--upstream-python", type=Path, default=Path("/work/venvs/upstream/bin/python"))
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout of this project (e.g. `git worktree add /tmp/base COMMIT`), measured"
        " in the same run, interleaved with this one: before/after under the same machine load",
    )
    args = parser.parse_args()
    from deepsearcher.testing import ScriptedLLMServer

    ours = [sys.executable, "-m", "deepsearcher.cli.main"]
    with tempfile.TemporaryDirectory() as folder, ScriptedLLMServer(fallback="NO") as server:
        script(server)
        config = Path(folder) / "config.yaml"
        config.write_text(
            json.dumps(
                {
                    "provide_settings": {
                        "llm": server.llm_config(),
                        "vector_db": {"provider": "Milvus", "config": {"uri": str(Path(folder) / "milvus.db")}},
                    }
                }
            ),
            encoding="utf-8",
        )
        base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        trees = [ROOT, *([args.baseline.resolve()] if args.baseline else [])]
        for tree in trees:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "deepsearcher")], check=True)
        env = {
            **base_env,
            "PYTHONPATH": str(ROOT),
            "HF_HUB_OFFLINE": "1",
            "DEEPSEARCHER_CONFIG": str(config),
            "COLUMNS": "120",
        }
        subprocess.run([*ours, "load", str(CORPUS)], env=env, cwd=folder, check=True, capture_output=True)
        variants = [("", env)]
        if args.baseline:
            variants.append(("(baseline)", {**env, "PYTHONPATH": str(args.baseline.resolve())}))

        def each(label: str, *argv: str, server=None) -> list[dict]:
            return measure(label, [(tag, [*ours, *argv], e) for tag, e in variants], folder, args.runs, server)

        rows = [
            *each("--help", "--help"),
            *each("collections list", "collections", "list"),
            *each("providers", "providers"),
            *each("search", "search", "大熊猫吃什么"),
            *each(
                "query (overhead)",
                "query",
                "What do giant pandas eat?",
                "--agent",
                "deep",
                "--max-iter",
                "1",
                server=server,
            ),
        ]
        upstream = None
        if args.upstream_python.exists():
            up_env = {k: v for k, v in base_env.items() if k != "PYTHONPATH"}
            up_env.update(OPENAI_API_KEY="unused", HF_HUB_OFFLINE="1")
            up_cwd = Path(folder) / "upstream"  # its default ./milvus.db, apart from ours
            up_cwd.mkdir()
            upstream = measure(
                "upstream --help",
                [("", [str(args.upstream_python), "-m", "deepsearcher.cli", "--help"], up_env)],
                str(up_cwd),
                args.runs,
            )[0]

    print(f"{'command':<30} {'cold s':>7} {'warm s':>7} {'first output s':>15}")
    for row in rows + ([upstream] if upstream else []):
        print(f"{row['label']:<30} {row['cold']:>7.2f} {row['warm']:>7.2f} {row['first_output']:>15.2f}")
    if args.baseline:
        for ours_row, base_row in zip(rows[::2], rows[1::2], strict=True):
            print(f"{ours_row['label']}: baseline / this tree (warm) = {base_row['warm'] / ours_row['warm']:.1f}x")
    if upstream:
        print(f"--help: upstream / ours (warm) = {upstream['warm'] / rows[0]['warm']:.1f}x")
    print(
        "targets: collections list, providers, --help < 1 s; cold search <= 2.5 s;"
        " query overhead <= 2 s, first output <= 0.5 s"
    )


if __name__ == "__main__":
    main()

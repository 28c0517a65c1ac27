"""Fault probes against the real CLI and server (everything on 127.0.0.1): special files,
hung and dripping LLMs, SIGKILL mid-load, SIGTERM mid-job, busy collections, honest
summaries, crawler manners. Prints one row per probe: probe | expected | observed | pass.

    python benchmarks/faults.py            # every probe (a few minutes: the kill sweep runs 20 CLI processes twice)
    python benchmarks/faults.py --quick    # 4 kill points instead of 20
    python benchmarks/faults.py --only docx-text-node   # one probe (see --help for the names)
    python benchmarks/faults.py --only replace-window --only drop-race   # issue 36's (benchmarks/_faults_issue36.py)

The issue-21 probes (hostile and changing files, storage faults) load real-sized files with
the default per-file budget and print each case's seconds, the peak RSS of the load (its
process tree: the CLI and its parse worker) and what the summary named.

The processes use the instant hash embedding (`deepsearcher.testing.hash_embedding`):
the probes are about what is stored and when things end, not about the vectors.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import _faults_issue36 as issue36  # noqa: E402

from deepsearcher.testing.crash_points import CRASH_ENV  # noqa: E402
from deepsearcher.testing.scripted_llm import Reply, ScriptedLLMServer  # noqa: E402
from deepsearcher.testing.serve_process import ServeProcess  # noqa: E402

HASH = {"provider": "deepsearcher.testing.hash_embedding:HashEmbedding", "config": {}}
ROWS: list[tuple[str, str, str, bool]] = []


def row(probe: str, expected: str, observed: str, ok: bool) -> None:
    ROWS.append((probe, expected, observed, ok))
    print(f"  {'PASS' if ok else 'FAIL'}  {probe}: {observed}", flush=True)


def env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "HF_HUB_OFFLINE": "1",
    }


def write_config(base: Path, **sections: Any) -> Path:
    settings: dict[str, Any] = {
        "provide_settings": {
            "embedding": HASH,
            "vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}},
        },
        "load_settings": {"chunk_size": 200, "chunk_overlap": 0, "batch_size": 4},
    }
    for key, value in sections.items():
        if key == "llm":
            settings["provide_settings"]["llm"] = value
        else:
            settings[key] = value
    path = base / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def cli(
    *args: str, extra_env: dict[str, str] | None = None, timeout: float = 120
) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "deepsearcher.cli.main", *args],
            env={**env(), **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        done = subprocess.CompletedProcess(exc.cmd, 124, exc.stdout or "", exc.stderr or "")
    return done, time.monotonic() - started


# ---------------------------------------------------------------------- probes


def probe_fifo(base: Path) -> None:
    folder = base / "d"
    folder.mkdir()
    (folder / "a.txt").write_text("hi there, a regular file\n", encoding="utf-8")
    os.mkfifo(folder / "p.txt")
    done, seconds = cli("load", str(folder), "-c", str(write_config(base)), "--json", timeout=60)
    summary = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
    outcomes = {Path(item["source"]).name: item["outcome"] for item in summary.get("sources", [])}
    ok = done.returncode == 0 and outcomes == {"a.txt": "loaded", "p.txt": "skipped"}
    row(
        "FIFO in a loaded folder",
        "ends at once; a.txt loaded, p.txt skipped (FIFO)",
        f"rc {done.returncode} in {seconds:.1f} s; {outcomes}",
        ok,
    )


def probe_llm(base: Path) -> None:
    with ScriptedLLMServer(fallback=Reply("word " * 2000, chunk_delay=0.5)) as server:
        llm = server.llm(stream_timeout=5)
        started = time.monotonic()
        try:
            list(llm.stream("talk"))
            observed = "stream ended normally"
        except Exception as exc:  # noqa: BLE001 - the failure is what is measured
            observed = f"{type(exc).__name__} after {time.monotonic() - started:.1f} s"
        row(
            "LLM dripping a token every 0.5 s (stream_timeout 5)",
            "fails within ~5 s naming stream_timeout",
            observed,
            "LLMError" in observed and time.monotonic() - started < 7,
        )
    with ScriptedLLMServer(fallback=Reply("late", latency=600)) as server:
        config = write_config(base, llm=server.llm_config())
        done, seconds = cli("query", "What is up?", "-c", str(config), timeout=120)
        last = (done.stderr.strip().splitlines() or [""])[-1][:110]
        row(
            "hung LLM server, default settings (deepsearcher query)",
            "fails clearly in well under a minute",
            f"rc {done.returncode} in {seconds:.1f} s: {last}",
            done.returncode != 0 and seconds < 55,
        )


def corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in "abc":
        (folder / f"{name}.txt").write_text(f"Small file {name}: one short paragraph about {name}.\n", encoding="utf-8")
    paragraphs = [
        f"Paragraph {i} of the big file describes item number {i} with enough words to fill it." for i in range(70)
    ]
    (folder / "big.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    return folder


_ROWS_SCRIPT = """
import json, sys
from collections import Counter
from deepsearcher.vector_db.milvus import Milvus
store = Milvus(uri=sys.argv[1])
rows, ids = [], Counter()
for reference in store.list_sources("crash"):
    for item in store.stored_chunks("crash", reference):
        rows.append([reference, item.chunk_index, item.chunk_key])
        ids[item.id] += 1
store.close()
print(json.dumps({"rows": rows, "most_per_id": max(ids.values(), default=0)}))
"""


def stored_rows(uri: Path) -> tuple[Counter, int]:
    """Every stored (source, chunk index, chunk key) with its count, and the most rows one id has;
    read in a fresh process, as a user's next command would."""
    done = subprocess.run(
        [sys.executable, "-c", _ROWS_SCRIPT, str(uri)], env=env(), capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RuntimeError(f"reading the store failed: {done.stderr.strip().splitlines()[-1:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return Counter(tuple(item) for item in data["rows"]), int(data["most_per_id"])


def probe_kill_sweep(base: Path, points: int) -> None:
    docs = corpus(base / "docs")
    clean_dir = base / "clean"
    clean_dir.mkdir()
    cli("load", str(docs), "--collection", "crash", "-c", str(write_config(clean_dir)))
    clean, _ = stored_rows(clean_dir / "milvus.db")
    batches = -(-len(clean) // 4)
    stages = [f"{stage}:{batch}" for batch in range(1, batches + 1) for stage in ("embedded", "inserted")][:points]
    exact = 0
    embedded_mid_file: list[str] = []
    for index, point in enumerate(stages):
        run_dir = base / f"kill{index}"
        run_dir.mkdir()
        config = write_config(run_dir)
        killed, _ = cli("load", str(docs), "--collection", "crash", "-c", str(config), extra_env={CRASH_ENV: point})
        rerun, _ = cli("load", str(docs), "--collection", "crash", "-c", str(config), "--json")
        rows, most_per_id = stored_rows(run_dir / "milvus.db")
        summary = json.loads(rerun.stdout)
        if killed.returncode == -signal.SIGKILL and rows == clean and most_per_id == 1:
            exact += 1
        big = next((item for item in summary["sources"] if item["source"].endswith("big.txt")), {})
        if big.get("reason", "").startswith("resumed"):
            embedded_mid_file.append(
                f"{point}: {summary['embeddings_computed']} embedded, {summary['chunks_kept']} kept"
            )
    row(
        "SIGKILL of `deepsearcher load` + rerun",
        f"{len(stages)} kill points, {len(stages)} exact (= clean load, no id twice)",
        f"{len(stages)} kill points, {exact} exact",
        exact == len(stages) and len(stages) > 0,
    )
    sample = embedded_mid_file[len(embedded_mid_file) // 2] if embedded_mid_file else "none resumed"
    row(
        "crash inside one big file: rerun embeds",
        f"only the missing chunks (of {len(clean)})",
        f"{len(embedded_mid_file)} resumed mid-file, e.g. {sample}",
        bool(embedded_mid_file),
    )


def probe_summaries(base: Path) -> None:
    docs = base / "mixed"
    docs.mkdir()
    (docs / "good.txt").write_text("Okapis are related to giraffes.\n", encoding="utf-8")
    (docs / "latin1.txt").write_bytes("Le café crème coûte deux euros à Montréal.\n".encode("latin-1"))
    (docs / "binary.dat").write_bytes(b"\x00\x01\x02")
    (docs / "notes.xyz").write_text("notes", encoding="utf-8")
    config = write_config(base)
    done, _ = cli("load", str(docs), "-c", str(config), "--json")
    outcomes = {Path(item["source"]).name: item["outcome"] for item in json.loads(done.stdout)["sources"]}
    expected = {"good.txt": "loaded", "latin1.txt": "loaded", "binary.dat": "skipped", "notes.xyz": "skipped"}
    row("summary names every input (Latin-1, .dat, .xyz)", str(expected), str(outcomes), outcomes == expected)
    empty = base / "empty"
    empty.mkdir()
    done, _ = cli("load", str(empty), "-c", str(config))
    warned = "Nothing was loaded" in done.stderr
    row(
        "empty folder",
        "warning + exit 1",
        f"exit {done.returncode}, warning {'shown' if warned else 'missing'}",
        done.returncode == 1 and warned,
    )


def serve(base: Path, root: Path, port: int | None = None, **sections: Any) -> ServeProcess:
    config = write_config(base, server={"allowed_roots": [str(root)], "data_dir": str(base / "data")}, **sections)
    return ServeProcess(config, port=port, env=env())


def job(server: ServeProcess, job_id: str) -> dict[str, Any]:
    return httpx.get(f"{server.url}/v1/jobs/{job_id}").json()


def probe_server(base: Path) -> None:
    root = base / "root"
    root.mkdir()
    (root / "big.txt").write_text(
        "\n\n".join(f"Paragraph {i} is about item {i} and says a little more." for i in range(3000)), encoding="utf-8"
    )
    server = serve(base, root).start()
    try:
        job_id = httpx.post(
            server.url + "/v1/load", json={"inputs": [str(root)], "collection": "kb", "batch_size": 1}
        ).json()["job_id"]
        while job(server, job_id)["progress"]["chunks_embedded"] < 5:
            time.sleep(0.05)
        started = time.monotonic()
        busy = httpx.delete(server.url + "/v1/collections/kb", timeout=30)
        waited = time.monotonic() - started
        row(
            "DELETE of a collection a job is loading",
            "409 'busy: job J is loading it' within seconds",
            f"{busy.status_code} after {waited:.1f} s: {busy.json().get('error', '')[:60]}",
            busy.status_code == 409 and waited < 5,
        )
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(30)
        stopped = time.monotonic() - started
        row("SIGTERM during a load job", "exits within 10 s", f"exited in {stopped:.1f} s", stopped < 10)
    finally:
        server.stop()
    again = serve(base, root, port=server.port).start()
    try:
        status = job(again, job_id)
        row(
            "job after a restart",
            "'interrupted' (not 404)",
            status.get("status", str(status)),
            status.get("status") == "interrupted",
        )
        httpx.post(f"{again.url}/v1/jobs/{job_id}/resume")
        while (status := job(again, job_id))["status"] in ("queued", "running"):
            time.sleep(0.1)
        results = status.get("results") or {}
        row(
            "POST /v1/jobs/{id}/resume",
            "succeeded, stored chunks kept",
            f"{status['status']}: kept {results.get('chunks_kept')}, embedded {results.get('embeddings_computed')}",
            status["status"] == "succeeded" and (results.get("chunks_kept") or 0) > 0,
        )
    finally:
        again.stop(30)


def probe_crawler() -> None:
    from deepsearcher.loader.web_crawler.http_crawler import HttpCrawler

    hits: dict[str, list[float]] = {}
    page = (
        b"<html><head><title>T</title></head><body><main><p>"
        + b"Tides are driven by the moon. " * 20
        + b"</p></main></body></html>"
    )

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            hits.setdefault(self.path, []).append(time.monotonic())
            if self.path == "/robots.txt":
                body, status, headers = b"User-agent: *\nCrawl-delay: 1\n", 200, {}
            elif self.path == "/busy" and len(hits[self.path]) == 1:
                body, status, headers = b"slow down", 429, {"Retry-After": "1"}
            else:
                body, status, headers = page.replace(b"moon", self.path.encode()), 200, {}
            self.send_response(status)
            self.send_header(
                "Content-Type", "text/html" if status == 200 and self.path != "/robots.txt" else "text/plain"
            )
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        report = HttpCrawler(allow_private_network=True).crawl([url + "/busy", url + "/a", url + "/b"])
    finally:
        server.shutdown()
    busy = hits.get("/busy", [])
    gap = busy[1] - busy[0] if len(busy) > 1 else 0.0
    row(
        "429 with Retry-After: 1",
        "retried after >= 1 s, then loaded",
        f"{len(busy)} requests, {gap:.2f} s apart, {len(report.documents)} pages",
        len(busy) == 2 and gap >= 0.95 and len(report.documents) == 3,
    )
    stamps = sorted(stamp for path, times in hits.items() if path != "/robots.txt" for stamp in times)
    gaps = [later - earlier for earlier, later in zip(stamps, stamps[1:], strict=False)]
    row(
        "robots.txt Crawl-delay: 1",
        "requests to the host >= 1 s apart",
        f"smallest gap {min(gaps):.2f} s",
        min(gaps) >= 0.95,
    )


# ------------------------------------------------------------ issue 21: hostile files


def load_measured(base: Path, inputs: list[str], config: Path, timeout: float = 300, **popen: Any) -> dict[str, Any]:
    """Run `deepsearcher load --json` in a fresh interpreter that reports its own and its
    children's peak RSS, so each probe's figure is its own."""
    script = (
        "import resource, runpy, sys, atexit\n"
        "def report():\n"
        "    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "    sys.stderr.write(f'PEAK_RSS_KB {max(own, kids)}\\n')\n"
        "atexit.register(report)\n"
        "sys.argv = ['deepsearcher'] + sys.argv[1:]\n"
        "from deepsearcher.cli.main import app\n"
        "try:\n    app()\nexcept SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
        "sys.exit(code)\n"
    )
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, "load", *inputs, "-c", str(config), "--json"],
            env={**env(), "DEEPSEARCHER_LOG_FILE": str(base / "deepsearcher.log")},
            capture_output=True,
            text=True,
            timeout=timeout,
            **popen,
        )
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, stdout, stderr = 124, str(exc.stdout or ""), str(exc.stderr or "")
    seconds = time.monotonic() - started
    peak = next((int(line.split()[1]) for line in stderr.splitlines() if line.startswith("PEAK_RSS_KB")), 0)
    summary = json.loads(stdout) if stdout.strip().startswith("{") else {}
    return {"code": code, "seconds": seconds, "rss_mb": peak / 1024, "summary": summary, "stderr": stderr}


def named(summary: dict[str, Any], name: str) -> str:
    for item in summary.get("sources", []):
        if Path(item["source"]).name == name:
            return f"{item['outcome']}: {item['reason'][:90]}" if item["reason"] else item["outcome"]
    return "not named"


def limit_of(summary: dict[str, Any], name: str) -> str | None:
    """The budget setting the summary says `name` went past."""
    return next((item.get("limit") for item in summary.get("sources", []) if Path(item["source"]).name == name), None)


def hostile_folder(base: Path) -> Path:
    folder = base / "docs"
    folder.mkdir()
    (folder / "good.txt").write_text("Okapis are related to giraffes.\n", encoding="utf-8")
    return folder


def _hostile_row(probe: str, expected: str, run: dict[str, Any], name: str, ok: bool) -> None:
    good = named(run["summary"], "good.txt")
    row(
        probe,
        expected,
        f"rc {run['code']}, {run['seconds']:.1f} s, peak RSS {run['rss_mb']:.0f} MB; {name}: "
        f"{named(run['summary'], name)}; good.txt {good}",
        ok and good == "loaded" and run["code"] == 1 and "Traceback" not in run["stderr"],
    )


def probe_docx_text_node(base: Path) -> None:
    from deepsearcher.testing.hostile_files import big_text_docx

    folder = hostile_folder(base)
    big_text_docx(folder / "huge.docx", 10_000_000)
    run = load_measured(base, [str(folder)], write_config(base))
    ok = limit_of(run["summary"], "huge.docx") == "max_text_chars" and run["seconds"] < 60
    _hostile_row("DOCX, one ~10 MB text node", "refused within the budget, named", run, "huge.docx", ok)


def probe_json_million(base: Path) -> None:
    from deepsearcher.testing.hostile_files import tiny_objects_json

    folder = hostile_folder(base)
    tiny_objects_json(folder / "many.json", 1_000_000)
    run = load_measured(base, [str(folder)], write_config(base))
    ok = limit_of(run["summary"], "many.json") == "max_records" and run["seconds"] < 60
    _hostile_row("JSON of 1,000,000 tiny objects", "refused by max_records, bounded time", run, "many.json", ok)


def probe_growing(base: Path) -> None:
    from deepsearcher.testing.hostile_files import GrowingFile

    folder = hostile_folder(base)
    with GrowingFile(folder / "live.txt", start_bytes=64 * 1024, block=1024):  # ~100 KB/s
        run = load_measured(base, [str(folder)], write_config(base))
        size_after = (folder / "live.txt").stat().st_size
    changed = [Path(item["source"]).name for item in run["summary"].get("changed", [])]
    ok = changed == ["live.txt"] and run["seconds"] < 60
    _hostile_row(
        f"a file growing while read ({size_after:,} bytes when the load ended)",
        "read to its size at open, named changed",
        run,
        "live.txt",
        ok,
    )


def probe_vanishing(base: Path) -> None:
    folder = hostile_folder(base)
    for index in range(300):
        (folder / f"f{index:03d}.txt").write_text(f"File {index} says a few words.\n", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "deepsearcher.cli.main", "load", str(folder), "-c", str(write_config(base)), "--json"],
        env={**env(), "DEEPSEARCHER_LOG_FILE": str(base / "deepsearcher.log")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = time.monotonic()
    db = base / "milvus.db"
    while not db.exists() and time.monotonic() - started < 120:  # the load has listed the files by now
        time.sleep(0.05)
    time.sleep(1.0)
    deleted = 0
    for index in range(150, 300):
        (folder / f"f{index:03d}.txt").unlink()
        deleted += 1
    stdout, stderr = process.communicate(timeout=300)
    seconds = time.monotonic() - started
    summary = json.loads(stdout) if stdout.strip().startswith("{") else {}
    vanished = sum(1 for item in summary.get("failed", []) if item["reason"].startswith("vanished"))
    loaded = len(summary.get("loaded", []))
    row(
        "150 files deleted while the load runs",
        "each named 'vanished during the load', exit non-zero",
        f"rc {process.returncode}, {seconds:.1f} s; {deleted} deleted, {vanished} named vanished, {loaded} loaded "
        f"(of 301); {loaded + vanished} accounted for",
        process.returncode == 1 and loaded + vanished == 301 and vanished > 0 and "Traceback" not in stderr,
    )


def probe_names(base: Path) -> None:
    folder = hostile_folder(base)
    (folder / "two\nlines.txt").write_text("A name with a newline.\n", encoding="utf-8")
    with open(os.fsencode(folder) + b"/caf\xe9.txt", "wb") as handle:
        handle.write(b"A name that is not UTF-8.\n")
    (folder / ("n" * 251 + ".txt")).write_text("The longest name a file may have.\n", encoding="utf-8")
    too_long = str(folder / ("x" * 300 + ".txt"))
    run = load_measured(base, [str(folder), too_long], write_config(base))
    outcomes = {Path(item["source"]).name[:20]: item["outcome"] for item in run["summary"].get("sources", [])}
    human, _ = cli("load", str(folder), too_long, "-c", str(write_config(base)), "--all")
    ok = (
        run["code"] == 1
        and list(outcomes.values()).count("loaded") == 4
        and "two\\nlines.txt" in human.stdout
        and "caf\\xe9.txt" in human.stdout
        and "Traceback" not in human.stderr + run["stderr"]
    )
    row(
        "file names: newline, non-UTF-8 bytes, 255 and 300 characters",
        "loaded or refused by name, shown escaped, no traceback",
        f"rc {run['code']}, {run['seconds']:.1f} s; {outcomes}",
        ok,
    )


def probe_docx_bomb(base: Path) -> None:
    from deepsearcher.testing.hostile_files import docx_bomb

    folder = hostile_folder(base)
    docx_bomb(folder / "bomb.docx", 2 * 1024**3)  # 2 GB of XML in ~2 MB
    run = load_measured(base, [str(folder)], write_config(base))
    ok = limit_of(run["summary"], "bomb.docx") == "max_inflated_bytes" and run["rss_mb"] < 800
    _hostile_row(
        f"DOCX zip bomb ({(folder / 'bomb.docx').stat().st_size / 1e6:.1f} MB -> 2 GB XML)",
        "refused before inflating; RSS bounded",
        run,
        "bomb.docx",
        ok,
    )


def _mounted_tmpfs(path: Path, megabytes: int) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(path)], capture_output=True)
    return done.returncode == 0


def probe_storage(base: Path) -> None:
    folder = base / "many"
    folder.mkdir()
    for index in range(200):
        (folder / f"f{index}.txt").write_text(" ".join(f"w{index}x{j} topic {j}" for j in range(400)), encoding="utf-8")
    store = base / "small-disk"
    if not _mounted_tmpfs(store, 3):
        row("store on a full disk", "one line, trace in the log file", "needs root to mount a small tmpfs", False)
        return
    try:
        config = base / "full.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "provide_settings": {
                        "embedding": HASH,
                        "vector_db": {"provider": "Milvus", "config": {"uri": str(store / "milvus.db")}},
                    },
                    "load_settings": {"batch_size": 16},
                }
            ),
            encoding="utf-8",
        )
        done, seconds = cli(
            "load", str(folder), "-c", str(config), extra_env={"DEEPSEARCHER_LOG_FILE": str(base / "l.log")}
        )
        lines = [line for line in done.stderr.splitlines() if line.strip() and not line.endswith("…")]  # no activity
        log_has_trace = "Traceback" in (base / "l.log").read_text(encoding="utf-8", errors="replace")
        row(
            "store on a full disk (3 MB tmpfs)",
            "exit 1, the one-line message only, the trace in the log file",
            f"rc {done.returncode} in {seconds:.1f} s; {len(lines)} stderr line(s): {(lines or [''])[-1][:120]}; "
            f"trace in log file: {log_has_trace}",
            done.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error:") and log_has_trace,
        )
        subprocess.run(["mount", "-o", "remount,size=200m", str(store)], capture_output=True)
        rerun, seconds = cli("load", str(folder), "-c", str(config), "--json")
        summary = json.loads(rerun.stdout) if rerun.stdout.strip().startswith("{") else {}
        stored = len(summary.get("loaded", [])) + len(summary.get("replaced", []))
        row(
            "rerun once space is back",
            "exit 0, every file stored",
            f"rc {rerun.returncode} in {seconds:.1f} s; {stored} loaded, "
            f"{len(summary.get('skipped_unchanged', []))} unchanged",
            rerun.returncode == 0 and summary.get("ok") is True,
        )
    finally:
        subprocess.run(["umount", "-l", str(store)], capture_output=True)


HOSTILE_PROBES: dict[str, Callable[[Path], None]] = {
    "docx-text-node": probe_docx_text_node,
    "json-million": probe_json_million,
    "growing-file": probe_growing,
    "vanishing-files": probe_vanishing,
    "file-names": probe_names,
    "docx-bomb": probe_docx_bomb,
    "storage-full": probe_storage,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 kill points instead of 20")
    parser.add_argument("--only", action="append", metavar="NAME", help="run only this probe (repeatable)")
    args = parser.parse_args()
    probes: list[tuple[str, Callable[[Path], None]]] = [
        ("special files", probe_fifo),
        ("deadlines", probe_llm),
        ("kill sweep", lambda base: probe_kill_sweep(base, 4 if args.quick else 20)),
        ("summaries", probe_summaries),
        ("server", probe_server),
        ("crawler", lambda base: probe_crawler()),
        *HOSTILE_PROBES.items(),
        # issue 36: no crash window, no 500 when a collection goes, readable refusals
        (
            "replace-window",
            lambda base: issue36.probe_replace_window(base, row, env(), write_config, 2 if args.quick else 6),
        ),
        ("half-deleted-wal", lambda base: issue36.probe_half_deleted_wal(base, row, env())),
        ("drop-race", lambda base: issue36.probe_drop_race(base, row, serve, 2 if args.quick else 4)),
        ("small-refusals", lambda base: issue36.probe_small_refusals(base, row)),
        (
            "version-readers",
            lambda base: issue36.probe_version_readers(base, row, env(), write_config, 2 if args.quick else 4),
        ),
        ("marker-cost", lambda base: issue36.probe_marker_cost(base, row, 5000, 50 if args.quick else 200)),
    ]
    if args.only:
        names = {name.replace(" ", "-") for name, _ in probes}
        unknown = sorted(set(args.only) - names)
        if unknown:
            parser.error(f"unknown probe(s) {', '.join(unknown)}; choose from: {', '.join(sorted(names))}")
        probes = [(name, probe) for name, probe in probes if name.replace(" ", "-") in args.only]
    for name, probe in probes:
        print(f"[{name}]", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"faults-{name.replace(' ', '-')}-") as base:
            try:
                probe(Path(base))
            except Exception as exc:  # noqa: BLE001 - a broken probe is a failed row, the others still run
                row(name, "probe runs", f"{type(exc).__name__}: {exc}"[:120], False)
    width = [max(len(str(r[i])) for r in ROWS + [("probe", "expected", "observed", True)]) for i in range(3)]
    print()
    print(f"{'probe':<{width[0]}} | {'expected':<{width[1]}} | {'observed':<{width[2]}} | result")
    print("-" * (sum(width) + 18))
    for probe, expected, observed, ok in ROWS:
        print(f"{probe:<{width[0]}} | {expected:<{width[1]}} | {observed:<{width[2]}} | {'pass' if ok else 'FAIL'}")
    passed = sum(1 for r in ROWS if r[3])
    print(f"\n{passed} of {len(ROWS)} probes pass")
    sys.exit(0 if passed == len(ROWS) else 1)


if __name__ == "__main__":
    main()

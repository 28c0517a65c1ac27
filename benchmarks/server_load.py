"""HTTP API under load: concurrent /v1/query requests while a load job writes to the same collection.

    python benchmarks/server_load.py [--requests 50] [--latency 0.1] [--deep-share 0.5]

Everything runs on 127.0.0.1 in this process: the API (uvicorn in a thread), a temp
Milvus Lite store, the bundled MiniLM model and the scripted OpenAI-compatible server
answering every LLM call after `--latency` seconds. The script loads a small synthetic
corpus, starts a second load job into the same collection, and while it runs fires
`--requests` concurrent queries (a mix of the naive and the deep agent) with
httpx.AsyncClient. It prints requests/s, p50/p95 latency per agent and the error count
(target: 0 errors), and whether the load job overlapped the queries.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TOPICS = [
    ("volcano", "The Krafla caldera in Iceland erupted nine times between 1975 and 1984"),
    ("bread", "Sourdough rises because wild yeast and lactobacilli ferment the flour"),
    ("compiler", "Grace Hopper built the A-0 system, an early compiler, in 1952"),
    ("tides", "The Bay of Fundy has tides of up to sixteen metres"),
    ("moss", "Sphagnum moss holds many times its own weight in water"),
    ("bees", "Honey bees tell each other where flowers are with a waggle dance"),
    ("octopus", "An octopus has three hearts and copper-based blue blood"),
    ("glacier", "Glaciers carve U-shaped valleys as they slide downhill"),
    ("comet", "Halley's comet returns to the inner solar system about every 76 years"),
    ("violin", "Stradivari made violins in Cremona in the seventeenth century"),
]


def write_corpus(folder: Path, count: int, start: int = 0) -> Path:
    """`count` small text files, each a few paragraphs about one topic."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(start, start + count):
        name, fact = TOPICS[index % len(TOPICS)]
        paragraphs = [
            f"{fact}. Note {index}, paragraph {p}: " + " ".join(f"{name}-{index}-{w}" for w in range(60))
            for p in range(4)
        ]
        (folder / f"{name}_{index:03d}.txt").write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return folder


def script(server: Any) -> None:
    """Plausible replies: two sub-queries, about half the passages relevant, no gap queries."""
    server.on("Break the question below", '["main fact", "when and where"]')
    server.on(
        "Does the passage below contain",
        lambda r: "YES" if hashlib.md5(r.last_user_message.encode()).digest()[0] % 2 else "NO",
    )
    server.on("These queries were already searched", "[]")
    server.on("numbered sources", "A short answer citing [1] and [2].")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


async def wait_job(client: Any, job_id: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = (await client.get(f"/v1/jobs/{job_id}")).json()
        if job["status"] not in ("queued", "running"):
            return job
        await asyncio.sleep(0.1)
    raise SystemExit(f"load job {job_id} did not finish within {timeout:.0f} s")


async def run(args: argparse.Namespace, base_url: str, corpus: Path, extra: Path) -> int:
    import httpx

    limits = httpx.Limits(max_connections=args.requests + 10, max_keepalive_connections=args.requests + 10)
    async with httpx.AsyncClient(base_url=base_url, timeout=args.timeout, limits=limits) as client:
        started = time.perf_counter()
        first = (
            await client.post(
                "/v1/load", json={"inputs": [str(corpus)], "collection": "bench", "description": "benchmark corpus"}
            )
        ).json()
        job = await wait_job(client, first["job_id"], args.timeout)
        print(
            f"initial load: {job['status']}, {len(job['results']['loaded'])} files, {job['results']['chunks_inserted']} chunks in {time.perf_counter() - started:.1f} s"  # noqa: E501 - a literal read better whole
        )

        background = (await client.post("/v1/load", json={"inputs": [str(extra)], "collection": "bench"})).json()[
            "job_id"
        ]

        async def one(index: int) -> tuple[str, float, str | None]:
            share = args.deep_share  # spread the deep queries evenly among the naive ones
            agent = "deep" if int((index + 1) * share) > int(index * share) else "naive"
            body = {
                "question": f"{TOPICS[index % len(TOPICS)][1].split(' ')[1]} fact number {index}?",
                "agent": agent,
                "collections": ["bench"],
                "max_iter": 1,
            }
            t0 = time.perf_counter()
            try:
                response = await client.post("/v1/query", json=body)
                error = (
                    None
                    if response.status_code == 200 and response.json().get("answer")
                    else f"HTTP {response.status_code}: {response.text[:200]}"
                )
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"
            return agent, time.perf_counter() - t0, error

        t0 = time.perf_counter()
        results = await asyncio.gather(*(one(i) for i in range(args.requests)))
        wall = time.perf_counter() - t0
        job_state_at_end = (await client.get(f"/v1/jobs/{background}")).json()["status"]
        load_job = await wait_job(client, background, args.timeout)

    errors = [error for _, _, error in results if error]
    print(
        f"\n{args.requests} concurrent /v1/query requests (LLM latency {args.latency * 1000:.0f} ms per call, deep max_iter 1)"  # noqa: E501 - a literal read better whole
    )
    print(f"  wall {wall:.2f} s   throughput {args.requests / wall:.1f} requests/s   errors {len(errors)}")
    print(f"  {'agent':<8}{'n':>4}{'p50 s':>9}{'p95 s':>9}{'max s':>9}")
    for agent in ("naive", "deep", "all"):
        values = [s for a, s, _ in results if agent in (a, "all")]
        if values:
            print(
                f"  {agent:<8}{len(values):>4}{statistics.median(values):>9.2f}{percentile(values, 0.95):>9.2f}{max(values):>9.2f}"  # noqa: E501 - a literal read better whole
            )
    started_at, finished_at = load_job.get("started_at"), load_job.get("finished_at")
    print(
        f"\nbackground load job: {load_job['status']}, {len(load_job['results']['loaded'])} files, "
        f"{load_job['results']['chunks_inserted']} chunks; still {job_state_at_end} when the last query returned "
        f"(started {started_at}, finished {finished_at})"
    )
    for error in errors[:5]:
        print(f"  error: {error}")
    return 1 if errors or load_job["status"] != "succeeded" else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=50, help="concurrent queries (at most 500)")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per scripted LLM call")
    parser.add_argument("--deep-share", type=float, default=0.5, help="share of queries using the deep agent")
    parser.add_argument("--files", type=int, default=30, help="files in the initial corpus")
    parser.add_argument("--extra-files", type=int, default=60, help="files loaded by the background job")
    parser.add_argument("--llm-concurrency", type=int, default=16, help="the LLM client's max_concurrency")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before the benchmark gives up")
    args = parser.parse_args()
    if not 1 <= args.requests <= 500:
        raise SystemExit("--requests must be between 1 and 500")

    from deepsearcher import configuration
    from deepsearcher.config import Configuration
    from deepsearcher.server.app import create_app
    from deepsearcher.server.runner import ServerThread
    from deepsearcher.testing import ScriptedLLMServer

    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer(latency=args.latency, fallback="NO") as llm:
        script(llm)
        base = Path(tmp)
        corpus = write_corpus(base / "root" / "corpus", args.files)
        extra = write_corpus(base / "root" / "extra", args.extra_files, start=args.files)
        settings = {
            "provide_settings": {
                "llm": llm.llm_config(max_concurrency=args.llm_concurrency, timeout=args.timeout),
                "vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}},
            },
            "server": {"allowed_roots": [str(base / "root")], "data_dir": str(base / "data")},
        }
        (base / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
        t0 = time.perf_counter()
        with ServerThread(create_app(Configuration(base / "config.yaml"))) as server:
            print(f"server up on {server.url} in {time.perf_counter() - t0:.1f} s (model and store included)")
            status = asyncio.run(asyncio.wait_for(run(args, server.url, corpus, extra), timeout=args.timeout * 2))
            print(f"LLM calls served: {llm.call_count}, most in flight at once: {llm.max_concurrency}")
        configuration.vector_db.close()
    sys.exit(status)


if __name__ == "__main__":
    main()

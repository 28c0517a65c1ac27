"""Questions that need one private fact and one web fact: the web beside private documents (issue 32).

Each case has a private memo (with a codename that exists nowhere else) and a public page on a
fixture web site served, with a SearXNG-compatible search API, by
deepsearcher/testing/web_search_api.py on 127.0.0.1 (distractor pages included). Every question runs
twice on the same components, with `web: always` and with `web: off`, and the script prints:

- shown both: the share of answers whose sources (what the answer was written from) hold a private
  file and a web page; states both: the share whose text has the private fact and the web fact;
  cited both: the share citing a private file and a web page as [n] (private-only: 0 by design);
- leaks: outgoing search queries containing private text (a codename, or any 6 words in a row of a
  private memo that the question itself does not contain); must be 0;
- wall seconds, tokens and LLM calls per question, web against private-only, side by side.

    python benchmarks/web_mixed.py                                     # the scripted LLM (seconds)
    flock /tmp/heavy.lock nice -n 5 python benchmarks/web_mixed.py --llm qwen2.5-coder-0.5b-instruct --limit 3

With the scripted LLM (deepsearcher/testing/scripted_llm.py) the answer cites every source it is
shown, so "cited both" measures whether both facts reached the answer; with a local model
(LlamaCpp in-process, one thread) it measures the model too.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from deepsearcher.app.components import build_components  # noqa: E402
from deepsearcher.app.loading import LoadRequest, load  # noqa: E402
from deepsearcher.app.querying import QueryRequest, ask, plan_query  # noqa: E402
from deepsearcher.config import Configuration  # noqa: E402
from deepsearcher.llm._sync import run_sync  # noqa: E402
from deepsearcher.testing.scripted_llm import ScriptedLLMServer  # noqa: E402
from deepsearcher.testing.web_search_api import WebSearchStandIn  # noqa: E402

#: (codename, private memo, web slug, web title, web text, question, (private fact, web fact) as the answer says them)
CASES = [
    (
        "ZEBRAQUILL-4471",
        "Project Falcon will launch its first satellite from the Kourou spaceport; the board chose it in a "
        "closed meeting because the contract with the launch provider was cheaper than the alternatives.",
        "kourou",
        "Guiana Space Centre",
        "The Guiana Space Centre near Kourou lies close to the equator. European rockets have launched "
        "from the Kourou spaceport since 1968, when the first sounding rocket flew.",
        "From which spaceport does Project Falcon launch, and since which year have rockets launched there?",
        ("Kourou", "1968"),
    ),
    (
        "MARLINFROST-2290",
        "The Harbor Analytics team signed a supply deal for Nordlys lithium cells; the cells will be "
        "assembled in our Tromso plant starting next spring, at a negotiated price.",
        "tromso",
        "Tromso, Norway",
        "Tromso is a city in northern Norway with about 77,000 inhabitants. Tromso lies above the Arctic "
        "Circle, and the midnight sun is visible there from May to July.",
        "Where does the Harbor Analytics team assemble Nordlys cells, and how many inhabitants does Tromso have?",
        ("Tromso", "77,000"),
    ),
    (
        "OTTERGLASS-9035",
        "Our Atlas migration moves every customer database to PostgreSQL version 16 before the audit; the "
        "platform group owns the rollout and reports weekly to the steering committee.",
        "postgres16",
        "PostgreSQL 16 release",
        "PostgreSQL 16 was released in September 2023. PostgreSQL 16 added logical replication from "
        "standby servers and improved query parallelism.",
        "Which PostgreSQL version does the Atlas migration target, and when was PostgreSQL 16 released?",
        ("16", "2023"),
    ),
    (
        "HERONMILL-5512",
        "The Lumen office party will be held at the Bergen Aquarium on the second Friday of June, with "
        "the catering budget approved by finance last week.",
        "bergen-aquarium",
        "Bergen Aquarium",
        "The Bergen Aquarium opened in 1960 and is one of the largest aquariums in Norway. The Bergen "
        "Aquarium shows penguins, sea lions and fish of the North Sea.",
        "Where is the Lumen office party held, and when did the Bergen Aquarium open?",
        ("Aquarium", "1960"),
    ),
]
DISTRACTORS = {
    "volcano": ("Volcanoes", "A volcano is a rupture in the crust of a planet through which lava escapes."),
    "tea": ("Green tea", "Green tea is made from leaves that have not undergone oxidation, unlike black tea."),
    "chess": ("Chess openings", "The Sicilian Defence is the most popular response to the first move e4."),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", default=None, help="a local GGUF model name (LlamaCpp); default: the scripted LLM")
    parser.add_argument("--agent", default="naive")
    parser.add_argument("--limit", type=int, default=len(CASES))
    parser.add_argument("--top-k", type=int, default=4)
    return parser.parse_args(argv)


def shingles(text: str, size: int = 6) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}


def leaks(query: str, question: str) -> bool:
    """Whether `query` carries private text: a codename, or 6 memo words in a row not in the question."""
    private = set().union(*(shingles(memo) for _, memo, *_ in CASES)) - shingles(question)
    return any(code in query for code, *_ in CASES) or bool(shingles(query) & private)


def scripted_answer(request: Any) -> str:
    numbers = sorted({int(n) for n in re.findall(r"^\[(\d+)\] \(", request.last_user_message, re.M)})
    return "From the sources " + "".join(f"[{n}]" for n in numbers) + "."


def config_for(work: Path, llm: dict[str, Any], api: WebSearchStandIn) -> Path:
    settings = {
        "provide_settings": {
            "llm": llm,
            "vector_db": {"provider": "Milvus", "config": {"uri": str(work / "milvus.db")}},
            "web_search": {"provider": "SearXNG", "config": {"base_url": api.base_url}},
        },
        "web": {"allow_private_network": True, "max_pages": 2, "max_results": 3},
        "query_settings": {"timeout": 1800},
    }
    path = work / "config.yaml"
    path.write_text(json.dumps(settings), encoding="utf-8")
    return path


def run(components: Any, case: tuple, web: str, agent: str, top_k: int) -> dict[str, Any]:
    *_, question, (private_fact, web_fact) = case
    request = QueryRequest.create(
        question=question, agent=agent, collections=["memos"], options={"top_k": top_k}, web=web
    )
    result = run_sync(ask(plan_query(components, request)))
    shown = [source.reference for source in result.sources]
    cited = [source.reference for source in result.sources if source.cited]
    queries = [step.data.get("query") for step in result.steps if step.kind == "web_search" and step.data.get("query")]
    return {
        "shown": any(ref.startswith("http") for ref in shown) and any(ref.endswith(".md") for ref in shown),
        "states": private_fact in result.answer and web_fact in result.answer,
        "web": any(ref.startswith("http") for ref in cited),
        "private": any(ref.endswith(".md") for ref in cited),
        "queries": queries,
        "leaks": sum(leaks(query, question) for query in queries),
        "wall": result.wall_seconds,
        "tokens": result.total_tokens,
        "calls": result.usage.calls,
        "answer": " ".join(result.answer.split())[:160],
    }


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cases = CASES[: args.limit]
    pages = {slug: (title, text) for _, _, slug, title, text, *_ in CASES} | DISTRACTORS
    with tempfile.TemporaryDirectory() as tmp, WebSearchStandIn(pages) as api, ScriptedLLMServer() as scripted:
        work = Path(tmp)
        scripted.on("Answer the question using only the numbered sources", scripted_answer)
        scripted.on("Does the passage below contain", "YES")
        scripted.on("Break the question below", lambda r: json.dumps([r.last_user_message.split("Question:")[-1][:80]]))
        scripted.on("These queries were already searched", "[]")
        llm = (
            {"provider": "LlamaCpp", "config": {"model": args.llm, "n_ctx": 4096, "max_tokens": 200, "n_threads": 1}}
            if args.llm
            else scripted.llm_config()
        )
        components = build_components(Configuration(config_for(work, llm, api)))
        memos = work / "memos"
        memos.mkdir()
        for code, memo, *_ in CASES:
            (memos / f"{code.lower()}.md").write_text(f"# Memo {code}\n\nCodename {code}. {memo}\n", encoding="utf-8")
        load(components, LoadRequest([str(memos)], collection="memos"))
        rows = []
        for case in cases:
            rows.append(
                (
                    run(components, case, "always", args.agent, args.top_k),
                    run(components, case, "off", args.agent, args.top_k),
                )
            )
            print(json.dumps({"question": case[5], "web": rows[-1][0], "private_only": rows[-1][1]}), flush=True)
        components.close()
    n = len(rows)
    both = sum(w["web"] and w["private"] for w, _ in rows)
    queries = sum(len(w["queries"]) for w, _ in rows)
    leaked = sum(w["leaks"] for w, _ in rows)
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    print(f"\nllm={args.llm or 'scripted'} agent={args.agent} questions={n} top_k={args.top_k}")
    for key, words in (
        ("shown", "sources hold both a private file and a web page"),
        ("states", "answer states both facts"),
    ):
        print(f"{words}: web {sum(w[key] for w, _ in rows)}/{n}; private-only {sum(p[key] for _, p in rows)}/{n}")
    print(
        f"cited both a private file and a web page: web {both}/{n} = {both / n:.2f}; private-only "
        f"{sum(p['web'] and p['private'] for _, p in rows)}/{n}"
    )
    print(f"outgoing search queries: {queries}; containing private text: {leaked}")
    for key in ("wall", "tokens", "calls"):
        web, private = mean([w[key] for w, _ in rows]), mean([p[key] for _, p in rows])
        ratio = web / private if private else float("nan")
        print(f"mean {key}: web {web:.2f}, private-only {private:.2f}, ratio {ratio:.2f}")


if __name__ == "__main__":
    main()

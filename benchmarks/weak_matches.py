"""Where a search hit stops meaning anything: the relevance floor of the "weak match" mark, measured.

A store always returns its best chunks, also for a question it holds nothing about. This loads a
QA corpus into a Milvus Lite store of its own and runs the search use case (hybrid, as configured
by default) for two kinds of question:
- answerable: the dataset's own questions, whose gold passages are in the corpus;
- unanswerable: another dataset's questions whose gold titles are not in this corpus.
It prints the cosine similarity of each question's best hit (query vector · chunk vector, the
value `SearchHit.similarity` reports), their percentiles, and for candidate floors the share of
answerable questions wrongly marked weak and of unanswerable ones rightly marked.

    python benchmarks/weak_matches.py ../shared/data/hotpotqa_train100 ../shared/data/musique_train100
    python benchmarks/weak_matches.py A B --embedding MultilingualE5Embedding
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_dataset  # noqa: E402

from deepsearcher.app import searching  # noqa: E402
from deepsearcher.app.components import build_components  # noqa: E402
from deepsearcher.config import Configuration  # noqa: E402
from deepsearcher.evaluation import collection_name_for, load_corpus  # noqa: E402
from deepsearcher.evaluation import load_dataset as load_eval_dataset  # noqa: E402


def best_similarities(components: object, collection: str, questions: list[str]) -> list[float]:
    found = []
    for question in questions:
        response = searching.search(
            components, searching.SearchRequest.create(query=question, collections=[collection], top_k=1)
        )
        found.append(response.hits[0].similarity if response.hits else 0.0)
    return found


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    cuts = statistics.quantiles(ordered, n=20)
    marks = {"min": ordered[0], "p5": cuts[0], "p25": cuts[4], "median": cuts[9], "p75": cuts[14], "max": ordered[-1]}
    return "  ".join(f"{name} {value:.3f}" for name, value in marks.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", help="the corpus and its answerable questions")
    parser.add_argument("other", help="a dataset whose questions this corpus cannot answer")
    parser.add_argument("--embedding", default="MiniLMEmbedding")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        config = Configuration()
        config.set_provider_config("vector_db", "Milvus", {"uri": str(Path(folder) / "weak.db"), "hybrid": True})
        config.set_provider_config("embedding", args.embedding, {})
        components = build_components(config, skip=("llm", "web_crawler"))
        dataset = load_eval_dataset(args.dataset)
        collection = collection_name_for(dataset)
        load_corpus(components, dataset, collection)
        titles = {passage["title"] for passage in load_dataset(args.dataset).passages}
        answerable = [q.question for q in load_dataset(args.dataset).questions]
        unanswerable = [q.question for q in load_dataset(args.other).questions if not set(q.gold_titles) & titles]
        good = best_similarities(components, collection, answerable)
        bad = best_similarities(components, collection, unanswerable)
        components.close()

    model = components.embedding_model.model_name
    print(f"model {model}, corpus {Path(args.dataset).name} ({len(titles)} titles)")
    print(f"answerable   ({len(good):3d}): {percentiles(good)}")
    print(f"unanswerable ({len(bad):3d}): {percentiles(bad)}")
    print("floor   answerable marked weak   unanswerable marked weak")
    low, high = statistics.median(bad), statistics.median(good)  # the floors worth looking at lie between
    for floor in [round(low + (high - low) * step / 15, 3) for step in range(16)]:
        wrong = sum(value < floor for value in good) / len(good)
        right = sum(value < floor for value in bad) / len(bad)
        print(f"{floor:5.3f}   {wrong:24.0%}   {right:24.0%}")


if __name__ == "__main__":
    main()

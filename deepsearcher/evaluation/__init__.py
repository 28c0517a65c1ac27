"""Retrieval and answer evaluation on multi-hop QA datasets (`deepsearcher eval`).

from deepsearcher.evaluation import EvalRunner, build_specs, load_corpus, load_dataset, summarize

components = build_components(eval_configuration(Configuration()))
dataset = load_dataset("data/hotpotqa_train100")
collection = collection_name_for(dataset)
load_corpus(components, dataset, collection)
rows = EvalRunner(components, dataset, collection, "out/", build_specs(["naive"], [])).run()
summary = summarize(rows, ks=[2, 5])
"""

from deepsearcher.evaluation.dataset import (
    Dataset,
    DatasetError,
    Passage,
    Question,
    collection_name_for,
    load_dataset,
    read_corpus,
    read_questions,
)
from deepsearcher.evaluation.report import (
    markdown_table,
    summarize,
    write_plots,
    write_report,
)
from deepsearcher.evaluation.runner import (
    EvalRunner,
    RunSpec,
    build_specs,
    eval_agents,
    load_corpus,
    read_results,
)
from deepsearcher.evaluation.scoring import (
    all_found,
    exact_match,
    normalize_answer,
    recall_at_k,
    token_f1,
)
from deepsearcher.evaluation.store import eval_configuration, eval_store_path

__all__ = [
    "Dataset",
    "DatasetError",
    "EvalRunner",
    "Passage",
    "Question",
    "RunSpec",
    "all_found",
    "build_specs",
    "eval_agents",
    "eval_configuration",
    "eval_store_path",
    "collection_name_for",
    "exact_match",
    "load_corpus",
    "load_dataset",
    "markdown_table",
    "normalize_answer",
    "read_corpus",
    "read_questions",
    "read_results",
    "recall_at_k",
    "summarize",
    "token_f1",
    "write_plots",
    "write_report",
]

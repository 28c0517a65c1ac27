"""A reader in its own process that searches a collection in a loop, for the version-marker
probes (tests/test_faults_versions.py, benchmarks/faults.py --only version-readers): it writes
one line per search, how many chunks of each (source, version) the search found, so what every
answer held can be checked after a re-load was killed under it.

    python -m deepsearcher.testing.version_reader URI COLLECTION OUT.jsonl STOP_FILE

It stops when STOP_FILE exists. The vector is the hash embedding's (`hash_embedding`); top_k is
larger than the collections these probes load, so an answer holds every visible chunk.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

from deepsearcher.testing.hash_embedding import HashEmbedding
from deepsearcher.vector_db.milvus import Milvus

TOP_K = 500
#: (source hash, chunk count) of each reference, for one stored version of a corpus
Versions = dict[str, tuple[str, int]]


def read_until_stopped(uri: str, collection: str, out: str, stop: str) -> None:
    store = Milvus(uri=uri)
    vector = HashEmbedding().embed_query("item")
    try:
        with open(out, "w", encoding="utf-8") as log:
            while not os.path.exists(stop):
                hits = store.search_data(collection, vector, top_k=TOP_K)
                found = Counter(f"{hit.reference}|{hit.metadata['source_hash']}" for hit in hits)
                log.write(json.dumps(found) + "\n")
                log.flush()
    finally:
        store.close()


def classify(lines: list[str], old: Versions, new: Versions) -> Counter:
    """Per answer and source: 'old whole', 'new whole', 'missing', 'two versions' or 'partial'."""
    whole = {(reference, version): count for v in (old, new) for reference, (version, count) in v.items()}
    tally: Counter = Counter()
    for line in lines:
        found: dict[str, int] = json.loads(line)
        by_source: dict[str, list[tuple[str, int]]] = {}
        for key, count in found.items():
            reference, version = key.split("|")
            by_source.setdefault(reference, []).append((version, count))
        for reference in old:
            versions = by_source.get(reference, [])
            if not versions:
                tally["missing"] += 1
            elif len(versions) > 1:
                tally["two versions"] += 1
            elif whole.get((reference, versions[0][0])) != versions[0][1]:
                tally["partial"] += 1
            else:
                tally["old whole" if versions[0][0] == old[reference][0] else "new whole"] += 1
    return tally


if __name__ == "__main__":
    read_until_stopped(*sys.argv[1:5])

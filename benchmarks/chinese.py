"""Chinese retrieval: top-1 accuracy of dense, BM25 and hybrid on a small Chinese set, per analyzer.

    python benchmarks/chinese.py [--analyzer standard --analyzer default] [--backend auto]

The set (tests/data/chinese) has 10 topics, each with a near-duplicate distractor (the
Forbidden City and Shenyang's palace, the Great Wall and Great Wall Motors, ...), and one
question per passage. Top-1 accuracy is R@1 (one gold passage per question); "no hits"
counts questions for which that search returned nothing. Runs benchmarks/retrieval.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval  # noqa: E402

DATASET = Path(__file__).resolve().parents[1] / "tests" / "data" / "chinese"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--analyzer" not in argv:
        argv += ["--analyzer", "standard", "--analyzer", "default"]
    return retrieval.main([str(DATASET), "--top-k", "1,3", *argv])


if __name__ == "__main__":
    raise SystemExit(main())

"""The crash-injection sweep's hook: a process that is told where, kills itself there.

`DEEPSEARCHER_CRASH_AT="embedded:N"` or `"inserted:N"` makes the process SIGKILL itself right
after the ingestion pipeline embedded / stored its N-th batch (N counts from 1). Installed by
`deepsearcher.testing.hash_embedding` (the embedding every crash-sweep process is configured
with), so the production pipeline only announces its batches (`pipeline.BATCH_OBSERVERS`) and
holds no test code.
"""

from __future__ import annotations

import os
import signal

from deepsearcher.offline_loading import pipeline

CRASH_ENV = "DEEPSEARCHER_CRASH_AT"


def crash_if_asked(stage: str, batch: int) -> None:
    """SIGKILL this process when `CRASH_ENV` names this stage and batch (no cleanup can run)."""
    if os.environ.get(CRASH_ENV) == f"{stage}:{batch}":
        os.kill(os.getpid(), signal.SIGKILL)


def install() -> None:
    """Observe the pipeline's batches in this process (once)."""
    if crash_if_asked not in pipeline.BATCH_OBSERVERS:
        pipeline.BATCH_OBSERVERS.append(crash_if_asked)

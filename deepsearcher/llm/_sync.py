"""Kept for existing imports: the sync bridge lives in `deepsearcher.utils.sync_bridge`."""

from deepsearcher.utils.sync_bridge import background_loop, iterate_sync, run_sync

__all__ = ["background_loop", "iterate_sync", "run_sync"]

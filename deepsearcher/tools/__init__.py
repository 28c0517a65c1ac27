"""DeepSearcher's oldest import path for its helpers (`from deepsearcher.tools import log`)."""

from deepsearcher.tools import log

__all__ = ["log"]

"""DeepSearcher: deep research over private data."""

__version__ = "0.2.0"

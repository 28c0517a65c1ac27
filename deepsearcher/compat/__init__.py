"""DeepSearcher's (zilliztech/deep-searcher) module-level API, kept so its scripts run unchanged.

`deepsearcher.configuration`, `deepsearcher.online_query` and `deepsearcher.offline_loading`
are these modules under their old names. They keep one `Components` for the process, as
DeepSearcher did; nothing inside the package imports them (tests/test_architecture.py):
the CLI, the server and MCP hold their own `Components` and pass it down.
"""

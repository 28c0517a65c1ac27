"""Loading sources into Documents, and splitting Documents into Chunks."""

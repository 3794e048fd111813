"""recall_client: the Python client of the recall sidecar (its generated stubs, so far)."""

__version__ = "0.1.0"

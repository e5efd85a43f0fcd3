"""Sources: batches from Python (external_source)."""

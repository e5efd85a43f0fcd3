"""Executor: thread pool, stages, prefetch, error policy."""

"""Readers: operators that read stored files."""

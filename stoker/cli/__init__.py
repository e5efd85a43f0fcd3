"""Command line: ``stoker demo``, ``stoker bench``."""

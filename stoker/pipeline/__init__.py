"""Pipelines: definition, build, run, reset, epochs."""

from stoker.pipeline.pipeline import Pipeline
from stoker.pipeline.pipeline_def import do_not_convert, pipeline_def

__all__ = ["Pipeline", "do_not_convert", "pipeline_def"]

"""Pipelines: definition, build, run, reset, epochs."""

from stoker.pipeline.pipeline import Pipeline
from stoker.pipeline.pipeline_def import pipeline_def

__all__ = ["Pipeline", "pipeline_def"]

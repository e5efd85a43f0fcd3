"""Conditionals: ``@pipeline_def(enable_conditionals=True)`` lets ``if``/``elif``/``else``,
``and``, ``or`` and ``not`` test per-sample DataNodes.

``rewrite`` turns the function's source into one whose ``if`` statements call ``runtime``
(each branch a nested function over the variables it assigns; ``and``/``or`` lazy through
thunks; every call through ``converted_call``, so helper functions with ``if`` statements
are rewritten too). ``runtime`` keeps Python's semantics for Python values and, for a
DataNode condition, traces both branches in their conditional scopes and merges each
variable (stoker/graph/conditionals.py, operators/tensor/conditional.py).
"""

from stoker.pipeline.conditionals.rewrite import convert
from stoker.pipeline.conditionals.runtime import NO_CONVERT

__all__ = ["NO_CONVERT", "convert"]

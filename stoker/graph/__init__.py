"""Graph IR: DataNodes, tracing context, compile passes."""

from stoker.graph.node import DataNode

__all__ = ["DataNode"]

"""``node[...]``: per-sample indexing and slicing of a DataNode."""

from __future__ import annotations

from typing import Any


def subscript(node: Any, index: Any) -> Any:
    from stoker.ops.tensor_subscript import subscript_node

    return subscript_node(node, index)

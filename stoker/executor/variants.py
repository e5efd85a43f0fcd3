"""The operator instances and layouts a batch runs with, by the layouts its sources gave.

Most plans know every layout when built: one ``Variant`` (the instances made at build) runs
every batch. When a source's layout comes with its data (``stoker/graph/layouts.py``), the
executor asks ``Variants.select`` after the source stage: the layouts the sources gave are
the key; a new key resolves the pending nodes' layouts and makes instances of the operators
that read them; later batches with that key reuse it (a dict lookup per batch). A batch
carries its variant (``BatchContext.variant``) to the chunks, the GPU part and the output
TensorLists, so a batch still in flight keeps the layouts it was made with.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from stoker.errors import SampleError
from stoker.graph.layouts import LayoutError, Pending, is_pending, relabeled, resolve
from stoker.graph.node import DataNode, OpNode


class Variant:
    __slots__ = ("instances", "layouts", "error")

    def __init__(self, instances: dict[OpNode, Any], layouts: dict[DataNode, str],
                 error: tuple | None = None):
        self.instances = instances  # every operator of the plan -> its instance
        self.layouts = layouts  # resolved layouts of pending nodes (others: node.layout)
        # (operator, cause, fed layouts) when these layouts are refused: each such batch
        # raises it.
        self.error = error

    def layout(self, node: DataNode) -> str:
        return self.layouts.get(node, node.layout)


class Variants:
    def __init__(self, ops: list[OpNode], instances: dict[OpNode, Any],
                 make: Callable[[OpNode], Any] | None):
        # Source outputs whose layout comes with the data, and the operators that read one.
        self.fed = [(op, k, node) for op in ops if op.schema.stage == "source"
                    for k, node in enumerate(op.outputs) if isinstance(node.layout, Pending)]
        self.pending = [op for op in ops if op.schema.stage != "source" and is_pending(op)]
        self.base = Variant(instances, {})
        self.make = make  # OpNode -> instance (the pipeline's factory)
        self._by_key: dict[tuple, Variant] = {}

    def select(self, instances: dict[OpNode, Any]) -> Variant:
        """The variant for the layouts the sources just gave (read from their instances)."""
        if not self.fed:
            return self.base
        key = tuple(instances[op].batch_layouts[k] for op, k, _ in self.fed)
        variant = self._by_key.get(key)
        if variant is None:
            variant = self._by_key[key] = self._make(key)
        if variant.error is not None:
            raise _run_error(*variant.error)  # a new exception each time it is raised
        return variant

    def _make(self, key: tuple) -> Variant:
        fed = {node: layout for (_, _, node), layout in zip(self.fed, key, strict=True)}
        try:
            layouts = resolve(self.pending, fed)
        except LayoutError as e:
            return Variant(self.base.instances, fed, (e.op, e.cause, fed))
        instances = dict(self.base.instances)
        for op in self.pending:
            if op in instances and all(_as_assumed(layouts.get(n), n)
                                       for n in (*op.inputs, *op.outputs)):
                continue  # the layouts the graph assumed: the instance made at build fits
            try:
                instances[op] = self.make(relabeled(op, layouts))
            except Exception as e:
                return Variant(self.base.instances, fed, (op, e, fed))
        return Variant(instances, layouts)

    def all_instances(self) -> list[Any]:
        """Every instance made so far (to close them)."""
        seen = {id(i): i for i in self.base.instances.values()}
        for variant in self._by_key.values():
            seen.update((id(i), i) for i in variant.instances.values())
        return list(seen.values())


def _as_assumed(resolved: str | None, node: DataNode) -> bool:
    """Whether a resolved layout is the one the graph assumed for ``node`` (a plain string
    equal to it; a layout with a rule, such as operators/layouts.NdimLayout, never is)."""
    return resolved is None or (type(resolved) is str and resolved == node.layout)


def _run_error(op: OpNode, cause: BaseException, fed: dict[DataNode, str]) -> Exception:
    """A check that failed with the layouts fed at run time. DALI checks them at run time
    with a RuntimeError; the error is a SampleError (a RuntimeError) that is also of the
    check's own type (ArgumentError, ...), so either ``except`` catches it."""
    given = ", ".join(f"{node.name}: {layout!r}" for node, layout in fed.items())
    err = _at_run(type(cause))(f"{op.describe()}: {cause} (with the layouts the sources "
                               f"gave this batch: {given})")
    err.op, err.source, err.where = op.schema.fn_name, "", op.where
    err.__cause__ = cause
    return err


@functools.cache
def _at_run(kind: type) -> type:
    if issubclass(kind, SampleError) or not issubclass(kind, Exception):
        return SampleError
    return type(kind.__name__, (kind, SampleError), {"__module__": kind.__module__})

"""stoker's layers import only downwards, and no module imports itself in a circle.

A kernel knows nothing of graphs or operators, the graph nothing of the operators, the
executor's parts form no circle. Every import in stoker/ is read with ast, at a module's
top and inside its functions alike (``if TYPE_CHECKING:`` blocks aside: they never run).
A module belongs to the layer of its longest prefix in LAYERS and may import from its own
layer and the ones below, never from one above. The exceptions are listed with their
reasons, and each must still be needed, so that the list only shrinks.
"""

from __future__ import annotations

import ast
import pathlib
from collections import defaultdict

import pytest

STOKER = pathlib.Path(__file__).resolve().parents[1] / "stoker"

# Lowest first.
LAYERS = (
    ("stoker.errors",),
    ("stoker.types", "stoker.tfrecord"),  # DALI's value types; TFRecord feature specs
    ("stoker.kernels", "stoker.readers"),  # array work; byte sources
    ("stoker.tensors",),
    ("stoker.graph",),
    ("stoker.executor.context",),  # what an operator sees of the run
    ("stoker.operators",),
    ("stoker.executor",),
    ("stoker.pipeline",),
    ("stoker.fn", "stoker.math", "stoker.ops", "stoker.plugin", "stoker.cli", "stoker"),
)

# (importer prefix, imported prefix): why the import goes upwards.
UPWARDS = {
    ("stoker.types", "stoker.operators.tensor.tensor"):
        "types.Constant, DALI's API, makes an fn.constant node for a tensor value",
    ("stoker.kernels.gpu", "stoker.operators"):
        "a GPU kernel takes its per-sample descriptors (windows, sizes, layouts, color "
        "matrices) from the CPU operator's own argument resolution, so both devices cut "
        "the same pixels (DESIGN.md, GPU stages)",
}


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(STOKER.rglob("*.py")):
        parts = list(path.relative_to(STOKER.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _module_of(name: str) -> str:
    """The stoker module ``name`` is or lives in (a package for a name it defines)."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _runtime_nodes(tree: ast.AST):
    """The tree's nodes, without the bodies of ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in (child, *_runtime_nodes(child)))
            continue
        yield node
        yield from _runtime_nodes(node)


def _imports() -> dict[str, set[str]]:
    """module -> the stoker modules it imports."""
    imports = defaultdict(set)
    for module, path in MODULES.items():
        for node in _runtime_nodes(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and \
                    (node.module or "").split(".")[0] == "stoker":
                for alias in node.names:  # `from stoker.x import y`: module y, or x's name
                    full = f"{node.module}.{alias.name}"
                    imports[module].add(full if full in MODULES else _module_of(node.module))
            elif isinstance(node, ast.Import):
                imports[module].update(_module_of(a.name) for a in node.names
                                       if a.name.split(".")[0] == "stoker")
    return imports


IMPORTS = _imports()


def _layer(module: str) -> int:
    best, rank = "", -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, rank = prefix, i
    return rank


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _excused(importer: str, imported: str) -> str | None:
    for (a, b), why in UPWARDS.items():
        if _within(importer, a) and _within(imported, b):
            return why
    return None


def _upward() -> list[tuple[str, str]]:
    return sorted((m, i) for m, targets in IMPORTS.items() for i in targets
                  if _layer(i) > _layer(m))


def test_every_module_has_a_layer():
    assert [m for m in MODULES if _layer(m) < 0] == []


def test_the_reader_sees_imports_inside_functions():
    # executor.py imports skipping.py inside a method (on_error="skip" only).
    assert "stoker.executor.skipping" in IMPORTS["stoker.executor.executor"]


def test_layers_import_only_downwards():
    bad = [f"{m} imports {i}" for m, i in _upward() if _excused(m, i) is None]
    assert bad == [], "an import from a higher layer (see LAYERS):\n" + "\n".join(bad)


@pytest.mark.parametrize("pair", sorted(UPWARDS))
def test_each_listed_exception_is_still_needed(pair):
    assert any(_within(m, pair[0]) and _within(i, pair[1]) for m, i in _upward()), \
        f"{pair} no longer imports upwards: drop it from UPWARDS"


def test_graph_imports_no_operator_and_kernels_no_graph():
    for module, targets in IMPORTS.items():
        for target in targets:
            if _within(module, "stoker.graph"):
                assert not _within(target, "stoker.operators"), (module, target)
            if _within(module, "stoker.kernels"):
                assert not any(_within(target, p) for p in (
                    "stoker.graph", "stoker.executor", "stoker.pipeline")), (module, target)


# (CPU kernel module, what it imports beyond the CPU kernels): why.
CPU_KERNEL_EXCEPTIONS = {
    ("stoker.kernels.cpu.video.decode", "stoker.readers.video_index"):
        "decoding a video frame is seeking in its container: the decoder opens the file "
        "and finds packets through the reader's index of its frames and key frames",
}


def test_cpu_kernels_import_only_cpu_kernels():
    bad = [(m, i) for m, targets in IMPORTS.items() if _within(m, "stoker.kernels.cpu")
           for i in targets if not _within(i, "stoker.kernels.cpu")
           and (m, i) not in CPU_KERNEL_EXCEPTIONS]
    assert bad == []
    used = {(m, i) for m, targets in IMPORTS.items() for i in targets}
    assert set(CPU_KERNEL_EXCEPTIONS) <= used, "an exception no longer needed: remove it"


def _cycles() -> list[list[str]]:
    """Strongly connected groups of modules (Tarjan), the excused imports left out."""
    edges = {m: sorted(i for i in IMPORTS.get(m, ()) if i != m and _excused(m, i) is None)
             for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in MODULES:
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_in_a_circle():
    # Among them: executor.py <-> skipping.py, graph/node.py <-> the operators (a DataNode's
    # arithmetic and indexing are recorded through graph.node.RECORDER instead).
    assert _cycles() == []
    assert "stoker.executor.executor" not in IMPORTS["stoker.executor.skipping"]

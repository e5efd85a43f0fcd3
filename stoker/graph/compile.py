"""Compiles a traced graph into a plan the executor runs.

The plan keeps the operators the outputs need (plus ``preserve=True`` ones), in creation
order, checks device edges, gives each operator its random seed, and cuts the operators
into stages: sources first, then runs of per-sample operators separated by operators that
need the whole batch. For each stage it records which values later stages still read.

Operators placed on the GPU (device "mixed" or "gpu"), and CPU operators that read their
results back (``.cpu()``), come after every CPU-only operator, in DALI's order cpu ->
mixed -> gpu: the stages from ``Plan.gpu_from`` on form the batch's GPU part, which the
executor runs on its own thread and CUDA stream while the CPU part of the next batch runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stoker.errors import GraphError
from stoker.graph.conditionals import node_scope
from stoker.graph.fuse import fuse, seed_origin
from stoker.graph.node import DataNode, OpNode
from stoker.kernels.cpu.random.rng import derive_seed


@dataclass
class Stage:
    kind: str  # "source", "sample", "batch" or "gpu" (device "mixed"/"gpu" operators)
    ops: list[OpNode]
    reads: list[DataNode] = field(default_factory=list)  # values from earlier stages
    live_out: list[DataNode] = field(default_factory=list)  # values later stages need
    early: list[OpNode] = field(default_factory=list)  # batch draws (see _mark_draws)
    # The conditional branch its operators run in (graph/conditionals.py); () = all samples.
    scope: tuple = ()


@dataclass
class Plan:
    ops: list[OpNode]
    outputs: list[DataNode]
    stages: list[Stage]
    seeds: dict[OpNode, int]
    # The source operator whose per-sample source_info each value carries, if any.
    info_from: dict[DataNode, DataNode | None]
    # Index of the first stage of the GPU part (len(stages) when there is none).
    gpu_from: int
    # Each traced operator's schema name before fusion rewrote any: the user's graph,
    # which checkpoints describe (pipeline/checkpoint.py).
    traced: dict[OpNode, str] = field(default_factory=dict)

    @property
    def has_gpu(self) -> bool:
        return self.gpu_from < len(self.stages)


def collect(outputs: list[DataNode], extra: list[OpNode]) -> list[OpNode]:
    seen: dict[int, OpNode] = {}
    stack = [n.op for n in outputs] + list(extra)
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen[id(op)] = op
        stack.extend(n.op for n in op.upstream())
    return sorted(seen.values(), key=lambda op: op.order)


def compile_plan(outputs: list[DataNode], all_ops: list[OpNode], pipeline_seed: int,
                 pipeline: Any) -> Plan:
    for i, out in enumerate(outputs):
        if not isinstance(out, DataNode):
            raise GraphError(
                f"pipeline output {i} must be a DataNode (an operator's output), "
                f"got {type(out).__name__}: {out!r}"
            )
    traced = {op: op.schema.name for op in all_ops}
    preserved = [op for op in all_ops if op.args.get("preserve") or op.schema.preserved]
    # A kept operator inside a branch needs the conditions that pick its samples.
    preserved += [b.predicate.op for op in preserved for b, _ in op.scope]
    ops = collect(outputs, preserved)
    conditional = any(op.scope for op in ops)
    if conditional:
        _check_conditional(ops, outputs)
    # Fusion rules make new operators outside any branch: none while branches exist.
    if not conditional and fuse(ops, outputs):
        ops = collect(outputs, preserved)
    for op in ops:
        if op.pipeline is not None and op.pipeline is not pipeline:
            raise GraphError(
                f"{op.describe()} belongs to another pipeline; a DataNode can only be used "
                "in the pipeline that created it"
            )
    # Seeds follow the order of the pipeline's trace, so pruning dead operators or fusing
    # live ones never changes what a random operator draws. An operator that fusion put
    # in place of a random one draws with that one's seed ("_seed_from").
    trace_index = {id(op): k for k, op in enumerate(all_ops)}
    seeds = {}
    for op in ops:
        origin = seed_origin(op)
        seed = origin.args.get("seed", -1)
        k = trace_index.get(id(origin), len(all_ops) + origin.order)
        seeds[op] = seed if seed is not None and seed >= 0 else derive_seed(pipeline_seed, k)

    info_from: dict[DataNode, DataNode | None] = {}
    for op in ops:
        src = None
        if op.schema.name in _RESIZING:
            pass  # other samples than the source's: no per-sample source_info to follow
        elif op.schema.stage == "source":
            src = op.outputs[0]
        else:
            for n in op.upstream():
                if info_from.get(n) is not None:
                    src = info_from[n]
                    break
        for n in op.outputs:
            info_from[n] = src

    cpu_ops, gpu_ops = _split_devices(ops)
    stages = [Stage("source", [op for op in cpu_ops if op.schema.stage == "source"])]
    stages += _cut(op for op in cpu_ops if op.schema.stage != "source")
    stages = [s for s in stages if s.ops]
    _mark_draws(stages)
    gpu_from = len(stages)
    stages += _cut(gpu_ops)
    _liveness(stages, outputs)
    return Plan(ops, outputs, stages, seeds, info_from, gpu_from, traced)


def _split_devices(ops: list[OpNode]) -> tuple[list[OpNode], list[OpNode]]:
    """(CPU part, GPU part), each in creation order. The GPU part holds the operators on
    the GPU and every operator downstream of one (CPU operators after a ``.cpu()``); the
    CPU part never reads a value of the GPU part, so running it first is a valid order."""
    on_gpu: set[int] = set()
    for op in ops:
        if op.device in ("gpu", "mixed") or any(id(n.op) in on_gpu for n in op.upstream()):
            on_gpu.add(id(op))
    return ([op for op in ops if id(op) not in on_gpu], [op for op in ops if id(op) in on_gpu])


_RESIZING = ("_conditional.split", "_conditional.merge")


def _check_conditional(ops: list[OpNode], outputs: list[DataNode]) -> None:
    for out in outputs:
        if node_scope(out):
            raise GraphError(f"pipeline output {out.name!r} was made inside a branch of a "
                             "conditional; return a variable assigned in both branches")
    for op in ops:
        if op.scope and op.device != "cpu":
            raise GraphError(f"{op.describe()} runs on the {op.device} inside a branch of a "
                             "conditional; stoker runs conditional branches on the CPU only")


def _cut(ops: Any) -> list[Stage]:
    """Stages of a run of operators: a batch operator alone, consecutive per-sample
    operators of one conditional branch together, consecutive GPU operators together."""
    stages: list[Stage] = []
    current: Stage | None = None
    for op in ops:
        kind = "gpu" if op.device in ("gpu", "mixed") else \
            "batch" if op.schema.stage == "batch" else "sample"
        if kind == "batch":
            stages.append(Stage("batch", [op], scope=op.scope))
            current = None
            continue
        if current is None or current.kind != kind or current.scope != op.scope:
            current = Stage(kind, [], scope=op.scope)
            stages.append(current)
        current.ops.append(op)
    return stages


def _mark_draws(stages: list[Stage]) -> None:
    """Marks in each per-sample stage with other work the operators that draw a whole
    batch in one cheap call (no inputs, a batch kernel: random draws, constants) and read
    nothing the stage makes (``Stage.early``): where the executor splits the stage into
    chunks, it runs them once for the batch first. Each chunk would call them again, and
    after a chunk of image work their Python runs from cold caches: a coin flip for 16
    samples took 22 us warm and 80 us there, 2% of the train pipeline's time at two
    threads. A stage run whole keeps them inside (CIFAR: a stage of their own on the
    producer cost 22% of its rate)."""
    for stage in stages:
        if stage.kind != "sample":
            continue
        inside = {id(op) for op in stage.ops}
        early: list[OpNode] = []
        for op in stage.ops:
            if not op.inputs and op.schema.batch_kernel is not None and all(
                    id(n.op) not in inside for n in op.upstream()):
                early.append(op)
                inside.discard(id(op))
        if len(early) < len(stage.ops):
            stage.early = early


def _liveness(stages: list[Stage], outputs: list[DataNode]) -> None:
    needed = set(outputs)
    for stage in reversed(stages):
        made = {n for op in stage.ops for n in op.outputs}
        stage.live_out = [n for op in stage.ops for n in op.outputs if n in needed]
        # A dict, not a list: `in` on a list would call DataNode.__eq__, which records an
        # arithmetic node instead of comparing.
        # A branch's stage also reads its conditions: they give its number of samples.
        reads = dict.fromkeys([*(n for op in stage.ops for n in op.upstream() if n not in made),
                               *(b.predicate for b, _ in stage.scope)])
        stage.reads = list(reads)
        needed = (needed - made) | set(reads)

"""Fusion rules: rewrite chains of operators into one cheaper operator at build time.

A rule only fires when the result equals the unfused chain's (tests compare both), and
only when the intermediate value has no other use. Rules rewrite the traced graph in place.

- ``crop -> crop_mirror_normalize``: the idiomatic "pad, then random crop" (e.g. CIFAR's
  pad 4 + crop 32) reads the final window straight from the original image; the padded
  intermediate is never made.
"""

from __future__ import annotations

from collections import Counter

from stoker.graph.node import DataNode, OpNode

ENABLED = True  # tests switch this off to compare fused and unfused results

_WINDOW_KEYS = ("crop", "crop_h", "crop_w", "crop_pos_x", "crop_pos_y", "out_of_bounds_policy",
                "fill_values", "rounding")


def _uses(ops: list[OpNode], outputs: list[DataNode]) -> Counter:
    uses: Counter = Counter(id(n) for n in outputs)
    for op in ops:
        uses.update(id(n) for n in op.upstream())
    return uses


def _fold_crop_into_cmn(op: OpNode, uses: Counter) -> bool:
    if op.schema.name != "crop_mirror_normalize" or "_pre_crop" in op.args:
        return False
    src = op.inputs[0]
    crop = src.op
    if crop.schema.name != "crop" or uses[id(src)] != 1 or crop.arg_nodes or \
            crop.args.get("preserve") or crop.device != "cpu" or op.device != "cpu":
        return False
    if crop.args["out_of_bounds_policy"] not in ("error", "pad") or \
            op.args["out_of_bounds_policy"] != "error":
        return False
    if "mean" in op.arg_nodes or "std" in op.arg_nodes:  # the fill is normalized once
        return False
    op.inputs = [crop.inputs[0]]
    op.args = {**op.args, "_pre_crop": {k: crop.args[k] for k in _WINDOW_KEYS if k in crop.args}}
    return True


RULES = (_fold_crop_into_cmn,)


def fuse(ops: list[OpNode], outputs: list[DataNode]) -> bool:
    """Applies every rule once per operator; True when the graph changed."""
    if not ENABLED:
        return False
    uses = _uses(ops, outputs)
    changed = False
    for op in ops:
        for rule in RULES:
            if rule(op, uses):
                changed = True
                uses = _uses(ops, outputs)
    return changed

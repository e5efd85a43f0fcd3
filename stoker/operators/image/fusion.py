"""The image family's fusion rules: chains of image operators rewritten into one cheaper
operator at build time (``graph/fuse.py`` applies them).

A rule only fires when the result equals the unfused chain's (tests compare both), and
only when the intermediate value has no other use. Rules rewrite the traced graph in place.

- ``crop -> crop_mirror_normalize``: the idiomatic "pad, then random crop" (e.g. CIFAR's
  pad 4 + crop 32) reads the final window straight from the original image; the padded
  intermediate is never made.
- ``decoders.image -> crop`` / ``-> slice`` / ``-> crop_mirror_normalize(crop=...)``: the
  decoder decodes only the window (region-of-interest JPEG decoding: rows above skipped,
  rows below never read, columns beside not transformed). Exact.
- ``decoders.image`` (or ``image_random_crop``) ``-> resize`` and ``decoders.image ->
  random_resized_crop``: one operator decodes only the source region the resampling reads
  (the random window is drawn as the fused operator draws it). Exact, except that a
  resize shrinking the region 2x or more decodes JPEGs at a DCT scale (a few levels off).
- ``resize`` / ``random_resized_crop`` (decoded or not) ``-> crop_mirror_normalize``: the
  resampler's last pass writes the normalized, mirrored output window, nothing else. Exact.
"""

from __future__ import annotations

from collections import Counter

from stoker.graph.fuse import add_rules, seed_origin
from stoker.graph.node import DataNode, OpNode
from stoker.operators.machinery.registry import REGISTRY, all_args

_WINDOW_KEYS = ("crop", "crop_h", "crop_w", "crop_pos_x", "crop_pos_y", "out_of_bounds_policy",
                "fill_values", "rounding")


_PLANE_IMAGES = ("HWC", "CHW", "HW")


def _depth_window(op: OpNode) -> bool:
    """Whether a crop's arguments may ask for a depth window (crop_d, or 3 crop values)."""
    crop = op.args.get("crop")
    return "crop_d" in op.arg_nodes or bool(op.args.get("crop_d")) or "crop" in op.arg_nodes \
        or (crop is not None and len(crop) == 3)


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
    if crop.inputs[0].layout not in _PLANE_IMAGES or _depth_window(crop) or \
            _depth_window(op) or crop.args.get("dtype") is not None:
        return False  # images only (no sequences, volumes or type conversion)
    op.inputs = [crop.inputs[0]]
    op.args = {**op.args, "_pre_crop": {k: crop.args[k] for k in _WINDOW_KEYS if k in crop.args}}
    return True


# -- decoders: decode only the window that a later crop, slice or normalize keeps -------------
# The window decoders (decoders.image_crop / image_slice) resolve the window exactly as
# fn.crop / fn.slice do, against the image's size read from its header, and libjpeg-turbo's
# region decode equals the same window of a full decode; so these rules change no pixel.

_CROP_WINDOW = ("crop", "crop_h", "crop_w", "crop_pos_x", "crop_pos_y", "rounding")
_SLICE_WINDOW = ("start", "rel_start", "end", "rel_end", "shape", "rel_shape", "axes",
                 "axis_names", "normalized_anchor", "normalized_shape")


def _lone_decoder(src: DataNode, uses: Counter) -> OpNode | None:
    """The CPU decoders.image that made ``src``, if nothing else reads its output."""
    dec = src.op
    if dec.schema.name != "decoders.image" or dec.device != "cpu" or uses[id(src)] != 1 \
            or dec.args.get("preserve") or dec.arg_nodes:
        return None
    return dec


def _window_decoder_args(dec: OpNode, target: str, window: dict) -> tuple:
    """The schema of ``target`` and the decoder's arguments that it takes, plus the window."""
    schema = REGISTRY[target]
    known = all_args(schema)
    args = {k: v for k, v in dec.args.items() if k in known}
    given = set(dec.args.get("_given", ())) | set(window.pop("_given", ()))
    return schema, {**args, **window, "_given": frozenset(given)}


def _fold_crop_into_decoder(op: OpNode, uses: Counter) -> bool:
    """decoders.image -> crop becomes decoders.image_crop (the crop op turns into it)."""
    if op.schema.name != "crop" or op.device != "cpu" or \
            op.args.get("out_of_bounds_policy") != "error" or op.args.get("dtype") is not None:
        return False
    dec = _lone_decoder(op.inputs[0], uses)
    if dec is None:
        return False
    window = {k: op.args[k] for k in _CROP_WINDOW if k in op.args}
    window["_given"] = {k for k in op.args.get("_given", ()) if k in _CROP_WINDOW}
    op.schema, op.args = _window_decoder_args(dec, "decoders.image_crop", window)
    op.inputs = [dec.inputs[0]]
    op.where = dec.where  # decode errors point at the user's decoder line
    return True


def _fold_slice_into_decoder(op: OpNode, uses: Counter) -> bool:
    """decoders.image -> slice (of H and W) becomes decoders.image_slice."""
    if op.schema.name != "slice" or op.device != "cpu" or \
            op.args.get("out_of_bounds_policy") != "error" or op.args.get("dtype") is not None \
            or "axes" in op.arg_nodes:
        return False
    given = set(op.args.get("_given", ()))
    if "axes" in given and "axis_names" not in given:
        if any(int(a) in (2, -1) for a in op.args["axes"]):
            return False  # slices channels: not a window of the image
    elif any(c not in "HW" for c in op.args.get("axis_names", "WH")):
        return False
    dec = _lone_decoder(op.inputs[0], uses)
    if dec is None:
        return False
    window = {k: op.args[k] for k in _SLICE_WINDOW if k in op.args}
    window["_given"] = {k for k in given if k in _SLICE_WINDOW}
    op.schema, op.args = _window_decoder_args(dec, "decoders.image_slice", window)
    op.inputs = [dec.inputs[0], *op.inputs[1:]]
    op.where = dec.where
    return True


def _fold_cmn_window_into_decoder(op: OpNode, uses: Counter) -> bool:
    """decoders.image -> crop_mirror_normalize(crop=...): the decoder becomes
    decoders.image_crop with the window, and crop_mirror_normalize keeps only mirror,
    normalize and layout (it receives exactly the window it would have cut)."""
    if op.schema.name != "crop_mirror_normalize" or op.device != "cpu" or \
            "_pre_crop" in op.args or op.args.get("out_of_bounds_policy") != "error":
        return False
    crops = op.args.get("crop") is not None or op.args.get("crop_h") or \
        op.args.get("crop_w") or any(k in op.arg_nodes for k in ("crop", "crop_h", "crop_w"))
    dec = _lone_decoder(op.inputs[0], uses) if crops else None
    if dec is None:
        return False
    window = {k: op.args[k] for k in _CROP_WINDOW if k in op.args}
    window["_given"] = {k for k in op.args.get("_given", ()) if k in _CROP_WINDOW}
    dec.schema, dec.args = _window_decoder_args(dec, "decoders.image_crop", window)
    dec.arg_nodes = {k: op.arg_nodes.pop(k) for k in _CROP_WINDOW if k in op.arg_nodes}
    # The decoder now reads the window's per-sample arguments, which may have been made
    # after it: it runs just before crop_mirror_normalize instead.
    dec.order = op.order - 0.5
    rest = {k: v for k, v in op.args.items() if k not in _CROP_WINDOW}
    op.args = {**rest, "crop_h": 0.0, "crop_w": 0.0, "crop_pos_x": 0.5, "crop_pos_y": 0.5,
               "rounding": op.args.get("rounding", "round")}
    return True


# -- resampling chains: decode -> resize -> crop_mirror_normalize as one kernel ---------------
# The hidden operators of operators/image/resize_fused.py keep each fused operator's
# arguments as one dict per stage, and its per-sample arguments as "<stage>:<name>". The
# operator that the chain ends with becomes the fused one (so the graph's outputs stay where
# they are); if a random operator was absorbed, "_seed_from" names it and the fused operator
# draws with its seed (graph/compile.py), so fusing never changes a random draw.

_RESAMPLERS = ("resize", "random_resized_crop")


def _retire(op: OpNode) -> None:
    """An absorbed operator: it reads nothing any more, so it counts as no use."""
    op.inputs, op.arg_nodes = [], {}


def _become(op: OpNode, target: str, first: OpNode, inputs: list[DataNode], stages: dict,
            arg_nodes: dict[str, DataNode], origin: OpNode) -> None:
    """``op`` (the chain's last operator) turns into ``target``, standing for the chain
    from ``first`` to itself (named so in errors)."""
    chain = f"{_chain_name(first)} -> {op.schema.fn_name}"
    op.schema = REGISTRY[target]
    op.inputs = inputs
    op.args = {**stages, "seed": -1, "preserve": op.args.get("preserve", False),
               "bytes_per_sample_hint": 0, "_given": frozenset(), "_seed_from": origin,
               "_describe": f"{chain} (fused)"}
    op.arg_nodes = arg_nodes


def _chain_name(op: OpNode) -> str:
    fused = op.args.get("_describe")
    return fused.removesuffix(" (fused)") if fused else op.schema.fn_name


def _prefixed(stage: str, arg_nodes: dict[str, DataNode]) -> dict[str, DataNode]:
    return {f"{stage}:{k}": v for k, v in arg_nodes.items()}


def _fold_decoder_into_resampler(op: OpNode, uses: Counter) -> bool:
    """decoders.image (or image_random_crop) -> resize, decoders.image ->
    random_resized_crop: one _decode_resize that decodes only the region the resampling
    reads (at a DCT scale where the resize shrinks 2x or more)."""
    if op.schema.name not in _RESAMPLERS or op.device != "cpu" or op.args.get("save_attrs"):
        return False
    src = op.inputs[0]
    dec = src.op
    kinds = ("decoders.image", "decoders.image_random_crop") if op.schema.name == "resize" \
        else ("decoders.image",)  # one random draw per fused operator
    if dec.schema.name not in kinds or dec.device != "cpu" or uses[id(src)] != 1 or \
            dec.args.get("preserve") or dec.arg_nodes:
        return False
    origin = seed_origin(dec) if dec.schema.random else op
    stages = {"decode": {**dec.args, "kind": dec.schema.name}, op.schema.name: op.args}
    _become(op, "_decode_resize", dec, [dec.inputs[0]], stages,
            _prefixed(op.schema.name, op.arg_nodes), origin)
    op.where = dec.where  # decode errors point at the user's decoder line
    _retire(dec)
    return True


def _fold_resampler_into_cmn(op: OpNode, uses: Counter) -> bool:
    """resize / random_resized_crop (decoded or not) -> crop_mirror_normalize: the last
    resampling pass writes the normalized, mirrored window; nothing outside it is made."""
    if op.schema.name != "crop_mirror_normalize" or op.device not in ("cpu", "gpu") or \
            "_pre_crop" in op.args:
        return False
    src = op.inputs[0]
    prod = src.op
    if uses[id(src)] != 1 or prod.device != op.device or prod.args.get("preserve"):
        return False
    if prod.schema.name in _RESAMPLERS:  # on the GPU too: one batched resampling
        if prod.args.get("save_attrs") or prod.inputs[0].layout != "HWC":
            return False
        target, stages = "_resize_normalize", {prod.schema.name: prod.args}
        nodes = _prefixed(prod.schema.name, prod.arg_nodes)
    elif prod.schema.name == "_decode_resize" and prod.args.get("normalize") is None and \
            op.device == "cpu":
        target = "_decode_resize"
        stages = {k: prod.args[k] for k in ("decode", "resize", "random_resized_crop")
                  if k in prod.args}
        nodes = dict(prod.arg_nodes)
    else:
        return False
    stages["normalize"] = op.args
    _become(op, target, prod, list(prod.inputs), stages,
            {**nodes, **_prefixed("normalize", op.arg_nodes)}, seed_origin(prod))
    op.where = prod.where
    _retire(prod)
    return True


add_rules(_fold_crop_into_cmn, _fold_crop_into_decoder, _fold_slice_into_decoder,
          _fold_cmn_window_into_decoder, _fold_decoder_into_resampler, _fold_resampler_into_cmn)

"""The operator registry and the ``fn`` namespace generated from it.

``register`` files a schema; ``fn_module`` builds ``stoker.fn`` (and its sub-namespaces
``fn.random``, ``fn.readers``, ...) with one function per schema, each carrying a real
signature and a docstring made from the schema. ``call_op`` is what those functions do:
check the arguments at once, then record an ``OpNode`` in the current pipeline.
"""

from __future__ import annotations

import inspect
import sys
import types as pytypes
import warnings
from typing import Any

from stoker.errors import (
    ArgumentError,
    ArgumentTypeError,
    DeviceError,
    GpuFallbackWarning,
    GraphError,
    MissingArgumentError,
)
from stoker.graph.node import DataNode, OpNode, check_same_pipeline, current_pipeline
from stoker.operators.machinery.schema import (
    COMMON_ARGS,
    REQUIRED,
    OpSchema,
    check_arg,
    unknown_arg_error,
)

REGISTRY: dict[str, OpSchema] = {}
# Operator -> the module that registered it: its family is the folder (stoker docs, and the
# test that checks each family's list of operators).
REGISTERED_BY: dict[str, str] = {}

DEVICES = ("cpu", "gpu", "mixed")


def register(schema: OpSchema) -> OpSchema:
    if schema.name in REGISTRY:
        raise ValueError(f"operator {schema.name!r} registered twice")
    REGISTRY[schema.name] = schema
    REGISTERED_BY[schema.name] = sys._getframe(1).f_globals.get("__name__", "")
    return schema


def all_args(schema: OpSchema) -> dict[str, Any]:
    merged = {a.name: a for a in COMMON_ARGS}
    merged.update({a.name: a for a in schema.args})
    return merged


def gpu_backend_available() -> bool:
    from stoker.kernels import gpu

    return gpu.available()


def _resolve_device(schema: OpSchema, device: str | None, inputs: list[DataNode]) -> str:
    if device is None:
        device = "gpu" if any(n.device == "gpu" for n in inputs) else "cpu"
        if device not in schema.devices:
            device = schema.devices[0]
    if device not in DEVICES:
        raise ArgumentError(
            f"{schema.fn_name}: argument 'device' must be one of 'cpu', 'gpu', 'mixed', "
            f"got {device!r}"
        )
    if device not in schema.devices:
        allowed = ", ".join(repr(d) for d in schema.devices)
        raise DeviceError(f"{schema.fn_name}: device={device!r} is not supported; "
                          f"this operator runs on {allowed}")
    if device != "cpu" and not gpu_backend_available():
        device = _cpu_in_place_of_gpu(device)
    for n in inputs:
        if n.device == "gpu" and device == "cpu":
            raise GraphError(
                f"{schema.fn_name}: input {n.name!r} is on the GPU but the operator runs on "
                "the CPU; data moves only CPU -> GPU (call .cpu() explicitly to copy back)"
            )
    return device


_warned_no_gpu = False


def _cpu_in_place_of_gpu(device: str) -> str:
    """No usable GPU here: a "gpu" or "mixed" operator runs on the CPU, as the same pipeline
    written for the CPU would (its CPU kernel, and the fusion rules of the CPU path), after
    one warning per process. Most DALI pipelines name the GPU; they now run on a laptop or
    in CI. A pipeline created with ``device_id=None`` keeps the device it asked for, so that
    ``build()`` refuses it as DALI does."""
    global _warned_no_gpu
    pipe = current_pipeline()
    if pipe is not None and pipe.device_id is None:
        return device
    if not _warned_no_gpu:
        _warned_no_gpu = True
        warnings.warn(
            f"stoker: no CUDA GPU is usable here, so operators placed on device={device!r} "
            "(and every other GPU operator) run on the CPU, with the same results as the CPU "
            "pipeline; set STOKER_GPU_ON_CPU=1 to run the GPU kernels on torch CPU tensors "
            "instead", GpuFallbackWarning, stacklevel=5)
    return "cpu"


def call_op(name: str, inputs: list[Any], kwargs: dict[str, Any]) -> Any:
    """Validates one ``fn.<name>(*inputs, **kwargs)`` call and records it in the graph."""
    schema = REGISTRY[name]
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    op_name = kwargs.pop("name", None)
    known = all_args(schema)

    inputs = [_as_node(schema, i, x) for i, x in enumerate(inputs)]
    n_in = len(inputs)
    if n_in < schema.min_inputs or n_in > schema.max_inputs:
        want = (str(schema.min_inputs) if schema.min_inputs == schema.max_inputs
                else f"at least {schema.min_inputs}" if schema.max_inputs == float("inf")
                else f"{schema.min_inputs} to {int(schema.max_inputs)}")
        raise ArgumentTypeError(f"{schema.fn_name}: expects {want} input(s), got {n_in}")

    for old, new in schema.renamed.items():
        if old in kwargs:
            value = kwargs.pop(old)
            if new is not None:
                if new in kwargs:
                    raise ArgumentTypeError(f"{schema.fn_name}: '{old}' is the old name of "
                                            f"'{new}'; give only one of them")
                kwargs[new] = value
    args: dict[str, Any] = {}
    arg_nodes: dict[str, DataNode] = {}
    for key, value in kwargs.items():
        arg = known.get(key)
        if arg is None:
            raise unknown_arg_error(schema, key, list(known) + ["device", "name"])
        if isinstance(value, DataNode):
            if not arg.per_sample:
                raise ArgumentTypeError(
                    f"{schema.fn_name}: argument '{key}' takes a constant, not a per-sample "
                    f"DataNode ({value.name!r})"
                )
            arg_nodes[key] = value
        elif value is None:
            # DALI reads `arg=None` as "not given": the default applies (a required
            # argument is then reported missing below).
            continue
        else:
            args[key] = check_arg(schema, arg, value)
    for arg in schema.args:
        if arg.name in args or arg.name in arg_nodes:
            continue
        if arg.required:
            raise MissingArgumentError(
                f"{schema.fn_name}: missing required argument '{arg.name}'"
            )
        if arg.default is not None:
            # A copy: a kernel that changes its list must not change the schema's default.
            default = arg.default
            args[arg.name] = list(default) if isinstance(default, list) else default
    for arg in COMMON_ARGS:
        args.setdefault(arg.name, arg.default)
    # Which arguments the user gave: some rules depend on it (slice's axes vs axis_names).
    # (`arg=None` is "not given" here too.)
    args["_given"] = frozenset(k for k in (*args, *arg_nodes) if kwargs.get(k) is not None)
    # Operators whose outputs depend on their optional inputs (random_bbox_crop's labels).
    args["_n_inputs"] = n_in
    if schema.check is not None:
        schema.check({**args, **{k: v for k, v in arg_nodes.items()}})

    upstream = [*inputs, *arg_nodes.values()]
    pipe = check_same_pipeline(schema, upstream)
    device = _resolve_device(schema, device, list(inputs))
    if device != "cpu" and schema.gpu_split is not None:
        return schema.gpu_split(dict(kwargs), device, op_name)
    if schema.name == "_to_device" and device == "cpu":
        return inputs[0]  # .gpu() where the GPU operators run on the CPU: nothing to move
    # Argument inputs are CPU data on every device, as in DALI: GPU operators take their
    # per-sample argument values as numpy arrays.
    for key, node in arg_nodes.items():
        if node.device != "cpu":
            raise GraphError(f"{schema.fn_name}: argument '{key}' must be a CPU node, "
                             f"got {node.name!r} on the {node.device}")
    op = OpNode(schema, list(inputs), args, arg_nodes, device, pipe, op_name)
    n_out = schema.outputs_for(args)
    layouts = _output_layouts(schema, inputs, {**args, **arg_nodes}, n_out)
    out_device = "gpu" if device in ("gpu", "mixed") else "cpu"
    op.outputs = [DataNode(op, i, out_device, layouts[i]) for i in range(n_out)]
    if pipe is not None:
        pipe._adopt(op)
    # One output is returned bare, unless num_outputs was asked for (DALI returns a list).
    if n_out == 1 and args.get("num_outputs") is None:
        return op.outputs[0]
    return op.outputs


def _as_node(schema: OpSchema, i: int, value: Any) -> DataNode:
    """An input as a DataNode; numbers and arrays become constants, as DALI converts them."""
    if isinstance(value, DataNode):
        return value
    import numpy as np

    from stoker import types

    if isinstance(value, types.ScalarConstant):
        # As in DALI: a constant node of the scalar's declared type, one 0-d value per sample.
        return types.Constant(np.asarray(value.value), dtype=value.dtype, shape=[])
    if isinstance(value, bool | int | float | np.generic | list | tuple | np.ndarray) and \
            np.asarray(value).dtype.kind in "biuf":
        arr = np.asarray(value)
        if not isinstance(value, np.ndarray):  # Python values: int32 / float32, as in DALI
            arr = arr.astype(np.int32 if arr.dtype.kind in "iu" else
                             np.float32 if arr.dtype.kind == "f" else arr.dtype)
        return types.Constant(arr, dtype=types.to_dali(arr.dtype), shape=list(arr.shape))
    raise ArgumentTypeError(
        f"{schema.fn_name}: input {i} must be a DataNode (an output of another operator) or "
        f"a constant, got {type(value).__name__}"
    )


def _output_layouts(schema: OpSchema, inputs: list[DataNode], args: dict, n: int) -> list:
    # Layouts that a source decides at run time are resolved then (stoker/graph/layouts.py).
    from stoker.graph.layouts import output_layouts

    return output_layouts(schema, inputs, args, n)


# -- the generated fn namespace ---------------------------------------------------------------


def _signature(schema: OpSchema) -> inspect.Signature:
    params = []
    for inp in schema.inputs:
        kind = (inspect.Parameter.VAR_POSITIONAL if inp.variadic
                else inspect.Parameter.POSITIONAL_ONLY)
        default = (None if inp.optional and not inp.variadic else inspect.Parameter.empty)
        params.append(inspect.Parameter(inp.name, kind, default=default))
    for key in schema.positional:
        params.append(inspect.Parameter(key, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=schema.arg(key).default))
    for arg in (*schema.args, *COMMON_ARGS):
        if arg.name in schema.positional:
            continue
        default = inspect.Parameter.empty if arg.required else arg.default
        params.append(inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY,
                                        default=default))
    params.append(inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None))
    params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _docstring(schema: OpSchema) -> str:
    lines = [schema.doc.strip(), ""]
    lines.append(f"Devices: {', '.join(schema.devices)}.")
    if schema.inputs:
        lines += ["", "Inputs:"]
        for inp in schema.inputs:
            extra = " (optional)" if inp.optional else " (any number)" if inp.variadic else ""
            lines.append(f"    {inp.name}{extra}: {inp.doc}")
    lines += ["", "Arguments:"]
    for arg in schema.args:
        default = "required" if arg.required else f"default {arg.default!r}"
        bits = [arg.type, default]
        if arg.range is not None:
            bits.append(f"range [{arg.range[0]}, {arg.range[1]}]")
        if arg.choices is not None:
            bits.append("one of " + ", ".join(repr(c) for c in arg.choices))
        if arg.per_sample:
            bits.append("per-sample input accepted")
        lines.append(f"    {arg.name} ({'; '.join(bits)}): {arg.doc}")
    return "\n".join(lines)


def make_fn(schema: OpSchema) -> Any:
    name = schema.name

    n_inputs = schema.max_inputs
    positional = schema.positional

    def op(*inputs: Any, **kwargs: Any) -> Any:
        if positional and len(inputs) > n_inputs:
            extra = inputs[int(n_inputs):]
            if len(extra) > len(positional):
                raise ArgumentTypeError(f"{schema.fn_name}: too many positional arguments")
            for key, value in zip(positional, extra, strict=False):
                if key in kwargs:
                    raise ArgumentTypeError(f"{schema.fn_name}: argument '{key}' given twice")
                kwargs[key] = value
            inputs = inputs[: int(n_inputs)]
        out = call_op(name, list(inputs), kwargs)
        return out if schema.result is None else schema.result(out)

    op.__name__ = op.__qualname__ = name.rsplit(".", 1)[-1]
    op.__doc__ = _docstring(schema)
    op.__signature__ = _signature(schema)  # type: ignore[attr-defined]
    op.__module__ = "stoker.fn"
    return op


def _namespace(root: pytypes.ModuleType, parents: list[str]) -> pytypes.ModuleType:
    """``root.<parents>``, made (and put in sys.modules) where it does not exist yet."""
    module = root
    path = root.__name__
    for part in parents:
        path = f"{path}.{part}"
        child = getattr(module, part, None)
        if child is None:
            child = pytypes.ModuleType(path, f"stoker's fn.{path[len('stoker.fn.'):]} "
                                             "operators")
            sys.modules[path] = child
            setattr(module, part, child)
        module = child
    return module


def fill_namespace(root: pytypes.ModuleType) -> None:
    """Adds a function per public schema to ``root`` and its sub-namespaces, then DALI's
    deprecated names of those operators (``operators/machinery/aliases.py``)."""
    from stoker.operators.machinery.aliases import add_aliases

    for name, schema in sorted(REGISTRY.items()):
        if name.startswith("_"):
            continue
        *parents, leaf = name.split(".")
        setattr(_namespace(root, parents), leaf, make_fn(schema))
    add_aliases(root, lambda parents: _namespace(root, parents))


__all__ = ["REGISTRY", "REQUIRED", "register", "call_op", "fill_namespace"]

"""``stoker.ops``: DALI's legacy operator classes, made from the same registry as ``fn``.

Older DALI code (and the source documents) builds pipelines from objects: an operator is
created with its constant arguments, then called on its inputs, usually inside a
``Pipeline`` subclass's ``define_graph``::

    class Train(Pipeline):
        def __init__(self, root):
            super().__init__(batch_size=64, num_threads=8, device_id=0, seed=42)
            self.reader = ops.readers.File(file_root=root, random_shuffle=True)
            self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
            self.flip = ops.random.CoinFlip()

        def define_graph(self):
            jpegs, labels = self.reader(name="Reader")
            return self.decode(jpegs), labels

Each class here is ``fn.<path>`` with its arguments split in two: the constructor takes
them and checks them at once (an unknown or mistyped one raises there, as in DALI); a
call may add or override any of them (a DataNode for a per-sample argument, a constant,
or ``None``, which is ignored) and records ``fn.<path>`` in the pipeline being defined.
Class names are DALI's: ``fn.crop_mirror_normalize`` is ``ops.CropMirrorNormalize``,
``fn.readers.file`` is ``ops.readers.File``, and DALI's deprecated names
(``ops.FileReader``, ``ops.ImageDecoder``, ``ops.CoinFlip``...) still work.
"""

from __future__ import annotations

import sys
import types as pytypes
import warnings
from typing import Any

import stoker.fn as _fn
from stoker.graph.node import DataNode
from stoker.operators.machinery.aliases import FN_ALIASES, deprecation_message
from stoker.operators.machinery.registry import REGISTRY, all_args
from stoker.operators.machinery.schema import OpSchema, check_arg, unknown_arg_error

# Words DALI spells in capitals where plain capitalisation would not (``RandomBBoxCrop``).
_WORDS = {"bbox": "BBox", "dl": "DL", "mfcc": "MFCC", "roi": "ROI", "coco": "COCO",
          "mxnet": "MXNet", "tfrecord": "TFRecord", "rms": "RMS", "ssd": "SSD"}

def class_path(fn_path: str) -> str:
    """DALI's class path for an ``fn`` path: ``readers.file`` -> ``readers.File``."""
    *parents, leaf = fn_path.split(".")
    camel = "".join(_WORDS.get(w, w.capitalize()) for w in leaf.split("_"))
    return ".".join([*parents, camel])


# DALI 2.4's deprecated class names (ops.FileReader, ops.CoinFlip, ...) are its deprecated
# fn names in class form: one table serves both (tests/test_legacy_ops.py checks the
# classes against the ones recorded from DALI). Names of operators stoker does not have
# yet appear once they are registered.
LEGACY_CLASSES = {class_path(old): new for old, new in FN_ALIASES.items()}


class Operator:
    """One legacy operator: constant arguments now, inputs and the rest at each call."""

    _fn_path = ""  # set on each generated class
    _deprecated = ""  # the warning a call gives, for DALI's deprecated class names

    def __init__(self, *args: Any, device: str | None = None, name: str | None = None,
                 **kwargs: Any):
        schema = self.schema
        if len(args) > len(schema.positional):
            raise TypeError(f"ops.{class_path(self._fn_path)}() takes its arguments by "
                            f"keyword, got {len(args)} positional")
        for key, value in zip(schema.positional, args, strict=False):
            if key in kwargs:
                raise TypeError(f"{schema.fn_name}: argument '{key}' given twice")
            kwargs[key] = value
        _check_constants(schema, kwargs)
        self._device = device
        self._name = name
        self._init_args = kwargs

    @property
    def schema(self) -> OpSchema:
        return REGISTRY[self._fn_path]

    @property
    def schema_name(self) -> str:
        return class_path(self._fn_path).replace(".", "__")

    @property
    def device(self) -> str:
        return self._device or "cpu"

    @property
    def preserve(self) -> bool:
        return bool(self._init_args.get("preserve", False))

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._deprecated:  # as in DALI: at the call, not at construction
            warnings.warn(self._deprecated, DeprecationWarning, stacklevel=2)
        args = {"device": self._device, "name": self._name, **self._init_args}
        # As in DALI, a call's argument given as None leaves the constructor's value.
        args.update((k, v) for k, v in kwargs.items() if v is not None)
        func: Any = _fn
        for part in self._fn_path.split("."):
            func = getattr(func, part)
        return func(*inputs, **args)

    def __repr__(self) -> str:
        return f"ops.{class_path(self._fn_path)}(device={self.device!r})"


def _check_constants(schema: OpSchema, kwargs: dict[str, Any]) -> None:
    """What ``fn`` checks of each constant argument, at construction as DALI does; the
    rules that involve inputs or several arguments wait for the call."""
    known = all_args(schema)
    for key, value in kwargs.items():
        key = schema.renamed.get(key, key) or key
        arg = known.get(key)
        if arg is None:
            raise unknown_arg_error(schema, key, [*known, "device", "name"])
        if value is not None and not isinstance(value, DataNode):
            check_arg(schema, arg, value)


def _make_class(fn_path: str, path: str, module: str) -> type:
    schema = REGISTRY[fn_path]
    doc = (f"Legacy class of ``fn.{fn_path}``: arguments at construction, inputs at the "
           f"call.\n\n{schema.doc.strip()}")
    deprecated = (deprecation_message(path, fn_path, api="ops")
                  if path in LEGACY_CLASSES else "")
    return type(path.rsplit(".", 1)[-1], (Operator,),
                {"_fn_path": fn_path, "_deprecated": deprecated, "__doc__": doc,
                 "__module__": module})


def _namespace(root: pytypes.ModuleType, parents: list[str]) -> pytypes.ModuleType:
    module = root
    for part in parents:
        child = getattr(module, part, None)
        if child is None:
            child = pytypes.ModuleType(f"{module.__name__}.{part}",
                                       f"stoker's ops.{part} legacy operator classes")
            sys.modules[child.__name__] = child
            setattr(module, part, child)
        module = child
    return module


def _fill(root: pytypes.ModuleType) -> None:
    names = {class_path(p): p for p in REGISTRY if not p.startswith("_")}
    names.update((c, p) for c, p in LEGACY_CLASSES.items() if p in REGISTRY)
    for path, fn_path in sorted(names.items()):
        *parents, leaf = path.split(".")
        space = _namespace(root, parents)
        setattr(space, leaf, _make_class(fn_path, path, space.__name__))


_fill(sys.modules[__name__])

# The operator machinery lived at stoker.ops.* before this package took DALI's name;
# code written against it (the DALI test harness among others) still imports it there:
# stoker.ops.registry, stoker.ops.schema, ... and stoker.ops.tensor (constant_node).
for _name, _module in list(sys.modules.items()):
    if _name.startswith("stoker.operators.machinery."):
        sys.modules.setdefault("stoker.ops." + _name.rsplit(".", 1)[1], _module)
sys.modules.setdefault("stoker.ops.tensor", sys.modules["stoker.operators.tensor.tensor"])

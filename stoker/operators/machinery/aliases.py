"""DALI's deprecated operator names, as data, and the ``fn`` functions made from them.

DALI 2.4 still answers to the names its operators had before they moved into families
(``fn.file_reader`` is ``fn.readers.file``, ``fn.coin_flip`` is ``fn.random.coin_flip``,
...): each runs the current operator and warns with a ``DeprecationWarning``. ``FN_ALIASES``
is that table, recorded from DALI (``tests/data/dali_fn_aliases.json``, checked by
``tests/machinery/test_aliases.py``); an alias appears in ``stoker.fn`` once stoker has the
operator it names, so the table also lists operators stoker does not have yet.
``DEPRECATED_OPERATORS`` are operators DALI deprecates outright (``fn.shapes``): they run
and warn.
"""

from __future__ import annotations

import functools
import types as pytypes
import warnings
from collections.abc import Callable
from typing import Any

# Old fn path -> current fn path (DALI 2.4: the schema's DeprecatedInFavorOf).
FN_ALIASES: dict[str, str] = {
    "audio_decoder": "decoders.audio",
    "caffe2_reader": "readers.caffe2",
    "caffe_reader": "readers.caffe",
    "coco_reader": "readers.coco",
    "coin_flip": "random.coin_flip",
    "experimental.audio_resample": "audio_resample",
    "experimental.debayer": "debayer",
    "experimental.decoders.image": "decoders.image",
    "experimental.decoders.image_crop": "decoders.image_crop",
    "experimental.decoders.image_random_crop": "decoders.image_random_crop",
    "experimental.decoders.image_slice": "decoders.image_slice",
    "experimental.decoders.video": "decoders.video",
    "experimental.equalize": "equalize",
    "experimental.filter": "filter",
    "experimental.inflate": "decoders.inflate",
    "experimental.peek_image_shape": "peek_image_shape",
    "experimental.tensor_resize": "tensor_resize",
    "fast_resize_crop_mirror": "resize_crop_mirror",
    "file_reader": "readers.file",
    "image_decoder": "decoders.image",
    "image_decoder_crop": "decoders.image_crop",
    "image_decoder_random_crop": "decoders.image_random_crop",
    "image_decoder_slice": "decoders.image_slice",
    "mxnet_reader": "readers.mxnet",
    "nemo_asr_reader": "readers.nemo_asr",
    "normal_distribution": "random.normal",
    "numpy_reader": "readers.numpy",
    "sequence_reader": "readers.sequence",
    "ssd_random_crop": "random_bbox_crop",
    "tfrecord_reader": "readers.tfrecord",
    "transform_translation": "transforms.translation",
    "uniform": "random.uniform",
    "video_reader": "readers.video",
    "video_reader_resize": "readers.video_resize",
}


# Operators DALI 2.4 deprecates without a replacement operator: name -> DALI's advice.
DEPRECATED_OPERATORS: dict[str, str] = {
    "readers.sequence": "use fn.external_source or a video reader",
    "shapes": "use DataNode.shape()",
}


def deprecation_message(old: str, new: str, api: str = "fn") -> str:
    """The warning for ``<api>.<old>``; it quotes DALI's own words (which name DALI's
    module), so that code matching DALI's warning matches stoker's too."""
    return (f"{api}.{old} is DALI's deprecated name of fn.{new}, which it runs; use "
            f"fn.{new} (DALI 2.4 warns: WARNING: `nvidia.dali.{api}.{old}` is now "
            f"deprecated. Use `nvidia.dali.fn.{new}` instead.)")


def alias_function(old: str, new: str, target: Callable[..., Any]) -> Callable[..., Any]:
    """``fn.<old>``: ``target`` (``fn.<new>``) behind a DeprecationWarning, as in DALI."""
    message = deprecation_message(old, new)

    @functools.wraps(target)
    def alias(*inputs: Any, **kwargs: Any) -> Any:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return target(*inputs, **kwargs)

    alias.__name__ = alias.__qualname__ = old.rsplit(".", 1)[-1]
    alias.__doc__ = f"Deprecated: DALI's old name of ``fn.{new}``.\n\n{target.__doc__ or ''}"
    return alias


def deprecated_function(name: str, target: Callable[..., Any]) -> Callable[..., Any]:
    """``fn.<name>`` warning as DALI does that the operator is deprecated."""
    message = (f"fn.{name} is deprecated in DALI 2.4: {DEPRECATED_OPERATORS[name]} (DALI "
               f"warns: WARNING: `nvidia.dali.fn.{name}` is now deprecated.)")

    @functools.wraps(target)
    def deprecated(*inputs: Any, **kwargs: Any) -> Any:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return target(*inputs, **kwargs)

    return deprecated


def _resolve(root: pytypes.ModuleType, path: str) -> Any:
    obj: Any = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def add_aliases(root: pytypes.ModuleType, namespace: Callable[[list[str]], Any]) -> None:
    """Adds each alias whose operator ``root`` has; ``namespace(parents)`` gives (making
    it if needed) the sub-namespace ``root.<parents>``."""
    for old, new in FN_ALIASES.items():
        target = _resolve(root, new)
        if target is None:
            continue
        *parents, leaf = old.split(".")
        space = namespace(parents)
        if getattr(space, leaf, None) is None:  # never hide a current operator
            setattr(space, leaf, alias_function(old, new, target))
    for name in DEPRECATED_OPERATORS:
        target = _resolve(root, name)
        if target is not None:
            *parents, leaf = name.split(".")
            setattr(namespace(parents), leaf, deprecated_function(name, target))

"""DALI's legacy ``ops.*`` classes (stoker.ops), against DALI 2.4's names and fn pipelines.

The class names were recorded from DALI (tests/data/dali_ops_names.json, by
tests/data/record/ops_names.py); outputs are compared with the same pipeline written
with ``fn``, which the rest of the suite checks against references.
"""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from helpers import gradient_jpeg

import stoker
from stoker import Pipeline, fn, ops, pipeline_def, types
from stoker.errors import ArgumentError, ArgumentTypeError
from stoker.operators.machinery.registry import REGISTRY

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "dali_ops_names.json")
                      .read_text())["classes"]


def _lookup(path: str):
    obj = ops
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("path", sorted(p for p, r in RECORDED.items() if r["fn"] in REGISTRY))
def test_every_dali_class_of_an_operator_stoker_has_is_there(path):
    cls = _lookup(path)
    assert cls._fn_path == RECORDED[path]["fn"]


def test_deprecated_names_are_dalis():
    # Deprecated without a new name (Shapes, readers.Sequence): named by the usual rule.
    recorded = {p: r["fn"] for p, r in RECORDED.items()
                if r["deprecated"] and r["fn"] and ops.class_path(r["fn"]) != p}
    assert ops.LEGACY_CLASSES == recorded


def test_deprecated_names_warn_at_the_call_as_dali_does(root):
    reader = ops.FileReader(file_root=root)  # no warning here, as in DALI
    with Pipeline(batch_size=1, num_threads=1, device_id=None):
        with pytest.warns(DeprecationWarning, match=r"`nvidia\.dali\.ops\.FileReader` is now "
                          r"deprecated\. Use `nvidia\.dali\.fn\.readers\.file`"):
            reader()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ops.readers.File(file_root=root)()


def test_names_of_operators_dali_lacks_follow_its_rule():
    assert ops.class_path("random_bbox_crop") == "RandomBBoxCrop"
    assert ops.class_path("readers.tfrecord") == "readers.TFRecord"
    assert ops.class_path("io.file.read") == "io.file.Read"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    top = tmp_path_factory.mktemp("jpegs")
    for i, (h, w) in enumerate([(61, 83), (100, 77), (64, 64), (120, 90), (48, 130), (70, 70)]):
        d = top / f"class{i % 3}"
        d.mkdir(exist_ok=True)
        (d / f"img{i}.jpg").write_bytes(gradient_jpeg(h, w, seed=i).tobytes())
    return str(top)


MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


class LegacyTrain(Pipeline):
    """The ResNet-50 training pipeline as DALI's older examples write it."""

    def __init__(self, root, reader_class="readers.File", decoder_class="decoders.ImageRandomCrop"):
        super().__init__(batch_size=3, num_threads=2, device_id=None, seed=11)
        self.input = _lookup(reader_class)(file_root=root, random_shuffle=True)
        self.decode = _lookup(decoder_class)(output_type=types.RGB)
        self.res = ops.Resize(resize_x=40)
        self.cmn = ops.CropMirrorNormalize(dtype=types.FLOAT, output_layout="CHW",
                                           crop=(32, 32), mean=MEAN, std=STD)
        self.coin = ops.random.CoinFlip(probability=0.5)

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        images = self.res(images, resize_y=36)  # a call adds an argument
        images = self.cmn(images, mirror=self.coin(), crop_pos_x=None)  # None: ignored
        return images, labels


@pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=11)
def fn_train(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=40, resize_y=36)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      crop=(32, 32), mean=MEAN, std=STD,
                                      mirror=fn.random.coin_flip(probability=0.5))
    return images, labels


def _batches(pipe, n=3):
    pipe.build()
    out = [[np.asarray(t.as_array()) for t in pipe.run()] for _ in range(n)]
    pipe.close()
    return out


@pytest.mark.parametrize("reader,decoder", [("readers.File", "decoders.ImageRandomCrop"),
                                            ("FileReader", "ImageDecoderRandomCrop")])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_legacy_pipeline_equals_the_fn_pipeline(root, reader, decoder):
    got = _batches(LegacyTrain(root, reader, decoder))
    want = _batches(fn_train(root))
    for g_batch, w_batch in zip(got, want, strict=True):
        for g, w in zip(g_batch, w_batch, strict=True):
            np.testing.assert_array_equal(g, w)
    assert got[0][0].shape == (3, 3, 32, 32)


def test_constructor_checks_each_argument_at_once():
    with pytest.raises(ArgumentTypeError, match="unknown argument 'resize_q'; did you mean"):
        ops.Resize(resize_q=3)
    with pytest.raises(ArgumentTypeError, match="argument 'resize_x' must be a number"):
        ops.Resize(resize_x="a")
    with pytest.raises(ArgumentError, match=r"'probability' must be in \[0"):
        ops.random.CoinFlip(probability=1.5)
    with pytest.raises(TypeError, match="by keyword"):
        ops.Resize(3)


def test_external_source_class_takes_source_and_num_outputs_positionally():
    data = [np.arange(6, dtype=np.int32).reshape(2, 3), np.ones((2, 3), np.int32)]

    class P(Pipeline):
        def __init__(self):
            super().__init__(batch_size=2, num_threads=1, device_id=None)
            self.src = ops.ExternalSource(lambda: (data, data), 2)

        def define_graph(self):
            a, b = self.src()
            return a + b

    p = P()
    p.build()
    (out,) = p.run()
    for i in range(2):
        np.testing.assert_array_equal(out.at(i), 2 * data[i])


def test_class_attributes_match_dali():
    op = ops.decoders.Image(device="cpu", output_type=types.RGB)
    assert op.device == "cpu" and op.schema_name == "decoders__Image" and not op.preserve
    assert op.schema is REGISTRY["decoders.image"]
    assert ops.FileReader.__module__ == "stoker.ops"
    assert ops.readers.File.__module__ == "stoker.ops.readers"
    assert stoker.ops is ops


def test_internal_machinery_keeps_its_old_import_path():
    # The DALI test harness imports these four by their old names.
    import stoker.ops.registry as old
    import stoker.ops.schema as schema
    import stoker.ops.tensor as tensor
    import stoker.ops.tensor_util as tensor_util

    import stoker.operators.machinery.registry as new

    assert old is new
    assert schema.OpSchema and tensor_util.batch_stage and tensor.constant_node

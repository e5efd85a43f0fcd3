"""Checkpoints of pipelines that fusion rewrote (operators/image/fusion.py, resize_fused.py).

Fusion rewrites operators in place at build(); a checkpoint must still describe the
user's graph, or a pipeline restored from it (checked before its own build) is refused
as "another pipeline". For every fusion rule, a pipeline that fires it is checkpointed
after each call of a script of run() and reset() calls, a fresh pipeline is restored
from each checkpoint, and the rest of the script must give the same batches bit for bit
as the uninterrupted run. The same through the PyTorch iterator's checkpoints().
"""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from helpers import as_samples, play

from stoker import fn, pipeline_def, types
from stoker.graph import fuse
from stoker.operators.image import decode_resize

BATCH = 3
MEAN, STD = [120.0, 110.0, 100.0], [60.0, 61.0, 62.0]


@pytest.fixture(scope="module")
def jpegs(tmp_path_factory) -> list[str]:
    """Nine JPEGs of different sizes (two EXIF-free colour photos' worth of structure)."""
    root = tmp_path_factory.mktemp("fused_ckpt")
    rng = np.random.default_rng(4)
    paths = []
    for i in range(9):
        h, w = 40 + 5 * i, 56 + 3 * i
        yy, xx = np.mgrid[0:h, 0:w]
        img = np.stack([xx * 4 % 256, yy * 5 % 256, (xx + yy) * 3 % 256], -1)
        img = np.clip(img + rng.integers(-30, 30, img.shape), 0, 255).astype(np.uint8)
        path = root / f"c{i % 2}" / f"{i}.jpg"
        path.parent.mkdir(exist_ok=True)
        cv2.imwrite(str(path), img)
        paths.append(str(path))
    return sorted(paths)


def _image(info: types.SampleInfo) -> np.ndarray:
    """Decoded-image stand-in for the rules that start from a decoded HWC image."""
    rng = np.random.default_rng(info.idx_in_epoch)
    return rng.integers(0, 256, (30 + info.idx_in_epoch % 4, 40, 3), dtype=np.uint8)


def _position():
    return fn.random.uniform(range=[0.0, 1.0])


def _files(paths):
    return fn.readers.file(files=paths, random_shuffle=True, name="Reader")


def _cmn(image, **kw):
    return fn.crop_mirror_normalize(image, mean=MEAN, std=STD,
                                    mirror=fn.random.coin_flip(), **kw)


# One pipeline body per rule (the rule it fires, as the operator it builds, in the id).
def _crop_into_cmn(paths):  # crop -> crop_mirror_normalize (pad, then random crop)
    jpegs, labels = _files(paths)
    padded = fn.crop(fn.decoders.image(jpegs), crop=(48, 64), out_of_bounds_policy="pad")
    return _cmn(padded, crop=(40, 40), crop_pos_x=_position()), labels


def _crop_into_decoder(paths):  # decoders.image -> crop = decoders.image_crop
    jpegs, labels = _files(paths)
    return fn.crop(fn.decoders.image(jpegs), crop=(20, 30),
                   crop_pos_y=_position()), labels


def _slice_into_decoder(paths):  # decoders.image -> slice = decoders.image_slice
    jpegs, labels = _files(paths)
    return fn.slice(fn.decoders.image(jpegs), rel_start=[0.1, 0.2], rel_shape=[0.5, 0.6]), \
        labels, fn.random.uniform()


def _cmn_window_into_decoder(paths):  # decoders.image -> crop_mirror_normalize(crop=...)
    jpegs, labels = _files(paths)
    return _cmn(fn.decoders.image(jpegs), crop=(24, 24), crop_pos_x=_position()), labels


def _decode_resize(paths):  # decoders.image -> resize = _decode_resize
    jpegs, labels = _files(paths)
    return fn.resize(fn.decoders.image(jpegs), resize_x=17, resize_y=15), labels, \
        fn.random.coin_flip()


def _random_crop_resize(paths):  # decoders.image_random_crop -> resize
    jpegs, labels = _files(paths)
    return fn.resize(fn.decoders.image_random_crop(jpegs), size=(24, 24)), labels


def _decode_random_resized_crop(paths):  # decoders.image -> random_resized_crop
    jpegs, labels = _files(paths)
    return fn.random_resized_crop(fn.decoders.image(jpegs), size=(20, 22)), labels


def _resize_into_cmn(paths):  # resize -> crop_mirror_normalize = _resize_normalize
    image = fn.external_source(source=_image, batch=False, layout="HWC")
    return _cmn(fn.resize(image, resize_shorter=24), crop=(20, 20)), fn.random.uniform()


def _rrc_into_cmn(paths):  # random_resized_crop -> crop_mirror_normalize
    image = fn.external_source(source=_image, batch=False, layout="HWC")
    return (_cmn(fn.random_resized_crop(image, size=(18, 18))),)


def _train_chain(paths):  # the ResNet-50 train chain: the compiled _decode_resize lane
    jpegs, labels = _files(paths)
    image = fn.resize(fn.decoders.image_random_crop(jpegs), size=(32, 32))
    return _cmn(image, crop=(28, 28), dtype=types.FLOAT), labels


def _val_chain(paths):  # decoders.image -> resize_shorter -> center crop, normalized
    jpegs, labels = _files(paths)
    return _cmn(fn.resize(fn.decoders.image(jpegs), resize_shorter=30), crop=(24, 24)), labels


def _rrc_chain(paths):  # decoders.image -> random_resized_crop -> crop_mirror_normalize
    jpegs, labels = _files(paths)
    return _cmn(fn.random_resized_crop(fn.decoders.image(jpegs), size=(26, 26))), labels


BODIES = {
    "crop->cmn": (_crop_into_cmn, "crop_mirror_normalize"),
    "decode->crop": (_crop_into_decoder, "decoders.image_crop"),
    "decode->slice": (_slice_into_decoder, "decoders.image_slice"),
    "decode->cmn(crop)": (_cmn_window_into_decoder, "decoders.image_crop"),
    "decode->resize": (_decode_resize, "_decode_resize"),
    "random_crop->resize": (_random_crop_resize, "_decode_resize"),
    "decode->random_resized_crop": (_decode_random_resized_crop, "_decode_resize"),
    "resize->cmn": (_resize_into_cmn, "_resize_normalize"),
    "random_resized_crop->cmn": (_rrc_into_cmn, "_resize_normalize"),
    "train chain": (_train_chain, "_decode_resize"),
    "val chain": (_val_chain, "_decode_resize"),
    "decode->random_resized_crop->cmn": (_rrc_chain, "_decode_resize"),
}


def make(body: str, paths: list[str], **kw):
    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=77)
    def pipe():
        return BODIES[body][0](paths)

    return pipe(enable_checkpointing=True, **kw)


CALLS = ["run"] * 4 + ["reset"] + ["run"] * 4  # the reset is mid-way through an epoch


@pytest.mark.parametrize("body", list(BODIES))
def test_a_fused_pipeline_resumes_bit_identical_from_every_checkpoint(jpegs, body):
    original = make(body, jpegs, prefetch_queue_depth=2)
    checkpoints = [original.checkpoint()]
    expected = play(original, CALLS, checkpoints)
    fused = [op.schema.name for op in original._plan.ops]
    assert BODIES[body][1] in fused, f"the rule did not fire: {fused}"
    for k, text in enumerate(checkpoints):
        resumed = make(body, jpegs, prefetch_queue_depth=2, checkpoint=text)
        assert play(resumed, CALLS[k:]) == expected[k:], f"resumed after call {k}"
        resumed.close()
    original.close()


def test_a_checkpoint_names_the_users_operators_not_the_fused_ones(jpegs):
    pipe = make("train chain", jpegs)
    pipe.run()
    graph = json.loads(pipe.checkpoint())["graph"]
    assert graph == ["readers.file", "decoders.image_random_crop", "resize",
                     "random.coin_flip", "crop_mirror_normalize"]


def test_a_checkpoint_restores_whether_fusion_fired_or_not(jpegs, monkeypatch):
    """The user's graph is the same with fusion off; so is every batch but those decoded
    at a DCT scale, which is switched off here to compare bit for bit."""
    monkeypatch.setattr(decode_resize, "DCT_SCALING", False)
    fused = make("val chain", jpegs)
    fused.run()
    text = fused.checkpoint()
    expected = [as_samples(fused.run()) for _ in range(3)]
    monkeypatch.setattr(fuse, "ENABLED", False)
    plain = make("val chain", jpegs, checkpoint=text)
    assert [as_samples(plain.run()) for _ in range(3)] == expected
    assert "_decode_resize" not in [op.schema.name for op in plain._plan.ops]


def test_the_pytorch_iterator_resumes_a_fused_train_pipeline(jpegs):
    pytest.importorskip("torch")
    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    def iterator(saved):
        pipe = make("train chain", jpegs, checkpoint=saved)
        return DALIGenericIterator([pipe], ["image", "label"], reader_name="Reader",
                                   last_batch_policy=LastBatchPolicy.PARTIAL)

    def batches(it, n):
        out = []
        while len(out) < n:
            try:
                out.append([(k, v.numpy().tobytes()) for k, v in next(it)[0].items()])
            except StopIteration:
                it.reset()
                out.append("end")
        return out

    original = iterator(None)
    batches(original, 3)  # three batches in, as the report's ResNet-50 run
    saved = original.checkpoints()
    expected = batches(original, 6)
    assert batches(iterator(saved[0]), 6) == expected

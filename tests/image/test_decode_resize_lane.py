"""The train chains' compiled call (``kernels/cpu/image/decode_resize_loop.py``, run by
``decode_resize._Lane``): the Python driver's outputs and errors, bit for bit, on the images
it does; the images it does not cover handed back to the driver."""

from __future__ import annotations

import io
import math
import re
import struct

import numpy as np
import pytest
from helpers import photo as _photo
from PIL import Image

import stoker.operators.image.decode_resize as DR
from stoker import fn, pipeline_def, types
from stoker.cli.pipelines import MEAN, STD
from stoker.errors import SampleError
from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.image import decode as D
from stoker.kernels.cpu.image import decode_header
from stoker.kernels.cpu.image import resize as R
from stoker.kernels.cpu.image import resize_geometry as G


def _encode(img: Image.Image, fmt: str = "JPEG", **opts) -> np.ndarray:
    buf = io.BytesIO()
    img.save(buf, fmt, **opts)
    return np.frombuffer(buf.getvalue(), np.uint8)


def _exif(orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def _rgb(h: int, w: int, seed: int) -> Image.Image:
    return Image.fromarray(_photo(h, w, seed))


# (name, data, whether the compiled call does it). Small first, so the scratch grows.
INPUTS = [
    ("420", _encode(_rgb(150, 170, 0), quality=90), True),
    ("444 wide", _encode(_rgb(240, 420, 1), quality=90, subsampling=0), True),
    ("422 tall", _encode(_rgb(400, 230, 2), quality=85, subsampling=1), True),
    ("gray", _encode(_rgb(260, 300, 3).convert("L"), quality=90), True),
    ("progressive", _encode(_rgb(330, 290, 4), quality=90, progressive=True), True),
    ("exif 1", _encode(_rgb(210, 350, 5), quality=90, exif=_exif(1)), True),
    ("exif 6", _encode(_rgb(210, 350, 6), quality=90, exif=_exif(6)), False),
    ("cmyk", _encode(_rgb(200, 240, 7).convert("CMYK"), quality=90), False),
    ("png", _encode(_rgb(190, 250, 8), "PNG"), False),
    ("large", _encode(_rgb(700, 900, 9), quality=90), True),
]


def _pipeline(data, kind, resize_args, mirror, seed=3, decode_args=None, crop=(180, 190),
              cmn_args=None, shorter=200, num_threads=2):
    """kind: "train" (image_random_crop, resize to 200x224), "rrc" (random_resized_crop),
    "val" (decoders.image, resize_shorter), "val fixed" (decoders.image, resize to
    200x224) or "train shorter" (image_random_crop, resize_shorter)."""
    @pipeline_def(batch_size=len(data), num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        encoded = fn.external_source(source=lambda: data)
        if kind in ("train", "train shorter"):
            images = fn.decoders.image_random_crop(encoded, output_type=types.RGB,
                                                   **(decode_args or {}))
        else:
            images = fn.decoders.image(encoded, output_type=types.RGB, **(decode_args or {}))
        if kind in ("train", "val fixed"):
            images = fn.resize(images, resize_x=224, resize_y=200, **resize_args)
        elif kind == "rrc":
            images = fn.random_resized_crop(images, size=[200, 224], **resize_args)
        else:
            images = fn.resize(images, resize_shorter=shorter, **resize_args)
        m = fn.random.coin_flip() if mirror == "random" else mirror
        cmn = {"dtype": types.FLOAT, "output_layout": "CHW", **(cmn_args or {})}
        return fn.crop_mirror_normalize(images, mean=MEAN, std=STD, mirror=m, crop=crop, **cmn)

    p = pipe()
    p.build()
    return p


def _run(monkeypatch, lane, *args, batches=2, **kwargs):
    """The outputs, and per sample whether the compiled call did it (None: not asked)."""
    done: list = []
    made: list = []  # (pipelines of earlier tests may still be making batches ahead)
    with monkeypatch.context() as m:
        m.setattr(DR, "LANE", lane)
        finished, make = DR._Lane.done, DR._Lane.make

        def counted(self, claims):
            outs, handed_back = finished(self, claims)
            if any(self is lane for lane in made):
                first = claims.ctx.batch.first_index + claims.ctx.lo
                done.extend((first + j, j not in handed_back) for j in range(claims.n))
            return outs, handed_back

        def remembered(prep):
            made.append(make(prep))
            return made[-1]

        m.setattr(DR._Lane, "done", counted)
        m.setattr(DR._Lane, "make", staticmethod(remembered))
        p = _pipeline(*args, **kwargs)
        outs = [[np.array(s) for s in p.run()[0]] for _ in range(batches)]
    return outs, dict(done)


@pytest.mark.parametrize("kind", ["train", "rrc", "val", "val fixed", "train shorter"])
@pytest.mark.parametrize("resize_args,mirror", [
    ({}, "random"),
    ({"interp_type": types.INTERP_CUBIC}, 1),
    ({"interp_type": types.INTERP_LANCZOS3}, 0),
    ({"antialias": False}, "random"),
    ({"min_filter": types.INTERP_TRIANGULAR, "mag_filter": types.INTERP_CUBIC}, 1),
])
def test_compiled_call_equals_the_driver_bit_for_bit(kind, resize_args, mirror, monkeypatch):
    monkeypatch.setattr(DR, "DCT_SCALING", False)
    data = [d for _, d, _ in INPUTS]
    want, asked = _run(monkeypatch, False, data, kind, resize_args, mirror)
    got, done = _run(monkeypatch, True, data, kind, resize_args, mirror)
    assert asked == {}
    for batch_want, batch_got in zip(want, got, strict=True):
        for w, g in zip(batch_want, batch_got, strict=True):
            assert g.shape == w.shape == (3, 180, 190) and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    n = len(INPUTS)  # (samples of batches made ahead are asked too)
    assert set(range(2 * n)) <= set(done)
    assert {i for i, ok in done.items() if ok} == {i for i in done if INPUTS[i % n][2]}


def _shared_calls(monkeypatch) -> list:
    """Each batch the executor shares among the threads, as (operator instance, inputs,
    arguments, context) of its ``_DecodeResizeOp.shared`` call."""
    calls: list = []
    shared = DR._DecodeResizeOp.shared

    def kept(self, ins, argv, ctx):
        calls.append((self, ins, argv, ctx))
        return shared(self, ins, argv, ctx)

    monkeypatch.setattr(DR._DecodeResizeOp, "shared", kept)
    return calls


def test_threads_share_a_batch_and_do_each_sample_once(monkeypatch):
    """The stage's threads share the whole batch (executor._run_shared: each thread's
    call takes samples one at a time): the same outputs at 1, 2, 3 and 7 threads as the
    driver's, every sample asked of the call once a batch, the handed-back ones made by
    the driver."""
    monkeypatch.setattr(DR, "DCT_SCALING", False)
    data = [d for _, d, _ in INPUTS] * 3
    want, _ = _run(monkeypatch, False, data, "train", {}, "random", num_threads=2)
    calls = _shared_calls(monkeypatch)
    for threads in (1, 2, 3, 7):
        calls.clear()
        got, done = _run(monkeypatch, True, data, "train", {}, "random", batches=2,
                         num_threads=threads)
        assert {(c[3].lo, c[3].hi) for c in calls} == {(0, len(data))}
        for batch_want, batch_got in zip(want, got, strict=True):
            for w, g in zip(batch_want, batch_got, strict=True):
                np.testing.assert_array_equal(g, w)
        n = len(INPUTS)
        assert {i for i, ok in done.items() if ok} == {i for i in done if INPUTS[i % n][2]}


def test_a_shared_batch_then_the_stage_s_other_operators(monkeypatch):
    """The stage's other operators (a cast of the images, one of the mirror flags) run in
    chunks after the threads' shared batch, reading its outputs: the driver's results at
    1, 2 and 3 threads."""
    monkeypatch.setattr(DR, "DCT_SCALING", False)
    data = [d for _, d, _ in INPUTS] * 2
    calls = _shared_calls(monkeypatch)

    def outputs(lane: bool, threads: int) -> list:
        monkeypatch.setattr(DR, "LANE", lane)

        @pipeline_def(batch_size=len(data), num_threads=threads, device_id=None, seed=5)
        def pipe():
            encoded = fn.external_source(source=lambda: data)
            images = fn.decoders.image_random_crop(encoded, output_type=types.RGB)
            images = fn.resize(images, resize_x=224, resize_y=200)
            m = fn.random.coin_flip()
            images = fn.crop_mirror_normalize(images, mean=MEAN, std=STD, mirror=m,
                                              crop=(180, 190), dtype=types.FLOAT)
            return fn.cast(images, dtype=types.FLOAT16), fn.cast(m, dtype=types.INT32)

        p = pipe()
        p.build()
        return [[np.array(x) for x in out] for out in (p.run() + p.run())]

    want = outputs(False, 2)
    for threads in (1, 2, 3):
        calls.clear()
        got = outputs(True, threads)
        assert calls and {(c[3].lo, c[3].hi) for c in calls} == {(0, len(data))}
        assert got[0][0].dtype == np.float16 and len(got[1]) == len(data)
        for w, g in zip(want, got, strict=True):
            for a, b in zip(w, g, strict=True):
                np.testing.assert_array_equal(b, a)


def test_a_batch_given_as_one_2d_array_equals_the_list():
    """Encoded samples of one length may come as one (n, length) array (external_source):
    its rows are views made on the fly, so the call finds their bytes through the array,
    not through the objects' addresses."""
    images = [_encode(_rgb(200, 230, seed), quality=90) for seed in (20, 21, 22)]
    length = max(len(d) for d in images) + 4
    # (each padded to one length with a comment segment after its start marker)
    rows = [np.concatenate([d[:2], np.frombuffer(b"\xff\xfe" + struct.pack(
        ">H", length - len(d) - 2) + bytes(length - len(d) - 4), np.uint8), d[2:]])
        for d in images]
    rows = [rows[0], rows[1], rows[2], rows[1], rows[0]]
    want = np.array(_pipeline(rows, "train", {}, "random").run()[0].as_array())
    got = np.array(_pipeline(np.stack(rows), "train", {}, "random").run()[0].as_array())
    assert want.shape == (5, 3, 180, 190) and len({w.tobytes() for w in want}) > 1
    np.testing.assert_array_equal(got, want)


def test_a_thread_leaves_samples_for_the_others(monkeypatch):
    """``_Lane.work(claims, leave)`` stops taking samples when that many are left; another
    call takes the rest; the outputs are those of one call doing all."""
    monkeypatch.setattr(DR, "DCT_SCALING", False)
    data = [d for _, d, ok in INPUTS if ok] * 2
    calls = _shared_calls(monkeypatch)
    p = _pipeline(data, "train", {}, "random", num_threads=1)
    want = np.array(p.run()[0].as_array())
    op, ins, argv, ctx = calls[0]
    lane = DR.lane_of(op.args["_prepared"])
    claims = lane.start(ins[0], argv, ctx)
    counter = claims.head[4]
    lane.work(claims, leave=5)
    assert counter[0] == len(data) - 5
    lane.work(claims)
    assert counter[0] >= len(data)
    outs, handed_back = lane.done(claims)
    assert handed_back == []
    np.testing.assert_array_equal(outs, want)


@pytest.mark.parametrize("kind", ["train", "rrc", "val"])
@pytest.mark.parametrize("dtype,layout", [(types.FLOAT16, "CHW"), (types.FLOAT16, "HWC"),
                                          (types.FLOAT, "HWC")])
def test_float16_and_hwc_outputs_equal_the_driver_bit_for_bit(kind, dtype, layout,
                                                               monkeypatch):
    """The call's float32 (C, h, w) values, converted to float16 as the driver converts
    them (numpy's astype) and stored in the layout asked for."""
    if dtype == types.FLOAT16 and not loops("image.decode_resize_loop").HALF:
        pytest.skip("no float16 conversion in this CPU: the driver does these outputs")
    data = [d for _, d, _ in INPUTS]
    cmn_args = {"dtype": dtype, "output_layout": layout}
    want, _ = _run(monkeypatch, False, data, kind, {}, "random", cmn_args=cmn_args)
    got, done = _run(monkeypatch, True, data, kind, {}, "random", cmn_args=cmn_args)
    shape = (3, 180, 190) if layout == "CHW" else (180, 190, 3)
    for batch_want, batch_got in zip(want, got, strict=True):
        for w, g in zip(batch_want, batch_got, strict=True):
            assert g.shape == w.shape == shape
            assert g.dtype == w.dtype == (np.float16 if dtype == types.FLOAT16 else np.float32)
            np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
    n = len(INPUTS)
    assert {i for i, ok in done.items() if ok} == {i for i in done if INPUTS[i % n][2]}


def test_the_float16_conversion_rounds_as_numpy_does():
    """Every float32 of a million random bit patterns (infinities, NaNs, subnormals and
    the rounding ties around them), and the edges of float16's range."""
    L = loops("image.decode_resize_loop")
    if not L.HALF:
        pytest.skip("no float16 conversion in this CPU")
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    edges = np.array([0x33000000, 0x33000001, 0x33800000, 0x387FEFFF, 0x387FF000,
                      0x38800000, 0x38801000, 0x38803000, 0x477FEFFF, 0x477FF000,
                      0x7F800000, 0x7FC00000], np.uint32)
    values = np.concatenate([bits, edges, edges | np.uint32(1 << 31)]).view(np.float32)
    values = values[~np.isnan(values) | ((values.view(np.uint32) & (1 << 22)) != 0)]
    got = np.empty((1, 1, values.size), np.float16)
    L._store(values.reshape(1, 1, -1), got.ctypes.data, True, False)
    with np.errstate(over="ignore"):
        want = values.astype(np.float16)
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint16), want.view(np.uint16))


def test_no_float16_in_the_call_for_code_made_for_a_cpu_without_it():
    """NUMBA_CPU_NAME=generic compiles for an x86-64 without F16C, where LLVM would call a
    runtime function the compiled code cannot reach: float16 stays the driver's."""
    import os
    import platform
    import subprocess
    import sys

    if platform.machine().lower() in ("aarch64", "arm64"):
        pytest.skip("ARM64 converts to float16 natively")
    code = "from stoker.kernels.cpu.image import decode_resize_loop as L; print(L.HALF)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "NUMBA_CPU_NAME": "generic"}, check=True)
    assert out.stdout.strip() == "False"


def test_both_pass_orders_are_taken():
    """Tall and wide windows: the source transposed (columns first) or not."""
    orders = set()
    for h, w in [(224, 600), (600, 224), (300, 300)]:
        geom = G.ResizeGeometry(224, 224, 0.0, 0.0, float(h), float(w))
        orders.add(R.resize_taps((h, w), geom).rows_first)
    assert orders == {True, False}


# Images whose train windows often shrink 2x or more (4x for the last one).
LARGE = [
    _encode(_rgb(700, 900, 9), quality=90),
    _encode(_rgb(820, 760, 10), quality=90, subsampling=0),
    _encode(_rgb(900, 1000, 11), quality=85, subsampling=1),
    _encode(_rgb(760, 800, 12).convert("L"), quality=90),
    _encode(_rgb(1000, 900, 13), quality=90, progressive=True),
    _encode(_rgb(1500, 1700, 14), quality=90),
]


@pytest.mark.parametrize("kind,decode_args,crop", [
    ("train", {}, (180, 190)),
    ("train", {"random_area": [1.0, 1.0], "num_attempts": 1}, (200, 224)),  # whole image
    ("val", {}, (180, 190)),
    ("val fixed", {}, (180, 190)),
    ("train shorter", {}, (150, 150)),
])
def test_windows_decoded_at_a_dct_scale_equal_the_driver_bit_for_bit(kind, decode_args, crop,
                                                                      monkeypatch):
    """The call decodes such windows at the driver's DCT scale, over the driver's region
    (a part of the scaled image, or all of it), and resamples them with the driver's taps."""
    scaled, real = [], D.decode_scaled

    def recorded(data, min_size, **kw):
        image, window = real(data, min_size, **kw)
        info, (y, x, h, w) = kw["info"], kw["roi"]
        denom = round(h / (window[2] - window[0]))
        full_h, full_w = -(-info.height // denom), -(-info.width // denom)
        whole = -(-(y + h) // denom) - y // denom >= full_h and \
            -(-(x + w) // denom) - x // denom >= full_w
        scaled.append((denom, whole))
        return image, window

    monkeypatch.setattr(D, "decode_scaled", recorded)
    want, _ = _run(monkeypatch, False, LARGE, kind, {}, "random", batches=3,
                   decode_args=decode_args, crop=crop)
    got, done = _run(monkeypatch, True, LARGE, kind, {}, "random", batches=3,
                     decode_args=decode_args, crop=crop)
    for batch_want, batch_got in zip(want, got, strict=True):
        for w, g in zip(batch_want, batch_got, strict=True):
            np.testing.assert_array_equal(g, w)
    assert all(done.values())
    kinds = set(scaled)  # (the driver's run only: the call does its own)
    assert {2, 4} <= {d for d, _ in kinds}
    assert {w for _, w in kinds} == ({True} if decode_args else {False})


@pytest.mark.parametrize("cmn_args,crop", [
    ({"crop_pos_x": 0.0, "crop_pos_y": 1.0}, (180, 190)),
    ({"crop_pos_x": 0.37, "crop_pos_y": 0.81, "rounding": "truncate"}, (171, 193)),
    # 0.7 of 35 rows: 24.5 in float64, 24.4999996 from the float32 argument (rounds to 24)
    ({"crop_pos_x": 0.7, "crop_pos_y": 0.7}, (165, 165)),
    ({"crop_pos_x": 1.0, "crop_pos_y": 0.25, "out_of_bounds_policy": "trim_to_shape"},
     (199, 200)),
    # leaves some resized images (200 x 227, 348 x 200, ...): handed back, padded
    ({"out_of_bounds_policy": "pad"}, (200, 240)),
])
def test_resize_shorter_windows_equal_the_driver_bit_for_bit(cmn_args, crop, monkeypatch):
    """Where crop_mirror_normalize's window lies in each resized image (anchored as it
    anchors it), and handing back the images it leaves."""
    monkeypatch.setattr(DR, "DCT_SCALING", False)
    data = [d for _, d, _ in INPUTS]
    want, _ = _run(monkeypatch, False, data, "val", {}, 0, crop=crop, cmn_args=cmn_args)
    got, done = _run(monkeypatch, True, data, "val", {}, 0, crop=crop, cmn_args=cmn_args)
    for batch_want, batch_got in zip(want, got, strict=True):
        for w, g in zip(batch_want, batch_got, strict=True):
            assert g.shape == w.shape == (3, *crop)
            np.testing.assert_array_equal(g, w)
    n = len(INPUTS)
    resized = [G.resize_output_size(Image.open(io.BytesIO(d.tobytes())).size[::-1],
                                    resize_shorter=200) for _, d, _ in INPUTS]
    inside = [g.out_h >= crop[0] and g.out_w >= crop[1] for g in resized]
    assert (sum(inside) < n) == (cmn_args.get("out_of_bounds_policy") == "pad")
    assert {i for i, ok in done.items() if ok} == \
        {i for i in done if INPUTS[i % n][2] and inside[i % n]}


def test_a_window_leaving_the_image_fails_as_the_driver_fails_it(monkeypatch):
    """out_of_bounds_policy="error": the call hands the image back, the driver raises."""
    data = [d for _, d, ok in INPUTS if ok][:3]  # 150 x 170 first: resized 200 x 227
    errors = []
    for lane in (False, True):
        with pytest.raises(SampleError) as e:
            _run(monkeypatch, lane, data, "val", {}, 0, batches=1, crop=(200, 240),
                 cmn_args={"out_of_bounds_policy": "error"})
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert re.search(r"200\D{1,3}227", errors[1])  # the 200 x 227 resized image named


def test_a_negative_resize_shorter_is_the_drivers(monkeypatch):
    """A negative resize_shorter flips the image: the driver's, not the call's."""
    monkeypatch.setattr(DR, "DCT_SCALING", False)
    data = [d for _, d, ok in INPUTS if ok]
    want, _ = _run(monkeypatch, False, data, "val", {}, 0, shorter=-200)
    got, done = _run(monkeypatch, True, data, "val", {}, 0, shorter=-200)
    flipped, _ = _run(monkeypatch, True, data, "val", {}, 0, shorter=200)
    assert done == {}
    for batch_want, batch_got, batch_flipped in zip(want, got, flipped, strict=True):
        for w, g, f in zip(batch_want, batch_got, batch_flipped, strict=True):
            np.testing.assert_array_equal(g, w)
            assert not np.array_equal(g, f)


def test_a_truncated_jpeg_fails_as_the_driver_fails_it(monkeypatch):
    good = INPUTS[1][1]
    cut = good[:len(good) * 2 // 3].copy()
    errors = []
    for lane in (False, True):
        with pytest.raises(SampleError) as e:
            _run(monkeypatch, lane, [good, cut, good], "train", {}, 0, batches=1)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert "truncated" in errors[1] or "corrupt" in errors[1]


def test_skip_drops_the_bad_samples_of_a_chunk_as_the_driver_does(tmp_path, monkeypatch):
    """on_error="skip": the chunk's bad files go through the driver, which fails them; the
    good ones around them stay the compiled call's, in order, and equal the driver's."""
    good = [(f"g{i}.jpg", d) for i, (_, d, ok) in enumerate(INPUTS) if ok][:6]
    bad = [("b0.jpg", good[1][1][:len(good[1][1]) // 2]), ("b1.jpg", b""),
           ("b2.jpg", b"not an image at all")]
    files = [good[0], bad[0], good[1], good[2], bad[1], bad[2], good[3], good[4], good[5]]
    for name, data in files:
        (tmp_path / name).write_bytes(bytes(data))

    @pipeline_def(batch_size=6, num_threads=2, device_id=None, seed=4, on_error="skip",
                  exec_pipelined=False, exec_async=False)  # (no batch made ahead)
    def pipe():
        jpegs, _ = fn.readers.file(files=[n for n, _ in files], file_root=str(tmp_path))
        images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB)
        images = fn.resize(images, resize_x=224, resize_y=200)
        return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                        mean=MEAN, std=STD, mirror=fn.random.coin_flip(),
                                        crop=(180, 190))

    finished, done = DR._Lane.done, []

    def counted(self, claims):
        outs, handed_back = finished(self, claims)
        done.extend((info.split("/")[-1], j not in handed_back)
                    for j, info in enumerate(claims.ctx.source_info))
        return outs, handed_back

    monkeypatch.setattr(DR._Lane, "done", counted)
    results = []
    for lane in (False, True):
        monkeypatch.setattr(DR, "LANE", lane)
        p = pipe()
        p.build()
        out = p.run()[0]
        results.append(([out.source_info(i).split("/")[-1] for i in range(len(out))],
                         [np.array(x) for x in out],
                         sorted(s.split("/")[-1] for s, _ in p.skipped_samples())))
    (names, want, skipped), (got_names, got, got_skipped) = results
    assert names == got_names == [n for n, _ in good]
    assert skipped == got_skipped == ["b0.jpg", "b1.jpg", "b2.jpg"]
    assert sorted(done) == sorted((n, n.startswith("g")) for n, _ in files)  # (and top-up)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(g, w)


# -- the compiled parts -------------------------------------------------------------------------

def test_resize_shorter_arithmetic_equals_the_size_rules():
    """The scalar steps the call compiles give resize_output_size's geometry."""
    rng = np.random.default_rng(5)
    sizes = [(256, 256), (256, 512), (512, 256), (375, 500), (1, 7), (7, 1), (333, 333)]
    sizes += [tuple(int(v) for v in rng.integers(1, 3000, 2)) for _ in range(300)]
    for h, w in sizes:
        for shorter in (256.0, 224.0, 200.0, 0.5, 91.3):
            want = G.resize_output_size((h, w), resize_shorter=shorter)
            req = G.shorter_request(h, w, shorter)
            assert list(req) == G._adjust_output_size([shorter] * 2, [float(h), float(w)],
                                                      "not_smaller", None)
            oh, lo_y, hi_y = G.output_extent(req[0], 0.0, float(h), 1, True)
            ow, lo_x, hi_x = G.output_extent(req[1], 0.0, float(w), 1, True)
            assert (oh, ow, lo_y, lo_x, hi_y, hi_x) == tuple(want)
            assert min(oh, ow) == max(1, math.floor(shorter + 0.5))  # (hand-computed)


@pytest.mark.parametrize("h,w", [(1, 1), (1, 9), (9, 1), (8, 8), (16, 24), (17, 9), (37, 53)])
def test_transpose_rgb_equals_numpy(h, w):
    rng = np.random.default_rng(h * 100 + w)
    src = rng.integers(0, 256, (h, w + 3, 3), dtype=np.uint8)  # rows 3 pixels apart
    dst = np.zeros((w, h + 3, 3), np.uint8)
    loops("image.transpose_loops").transpose_rgb(src.reshape(h, -1)[:, :3 * w],
                                          dst.reshape(w, -1)[:, :3 * h])
    np.testing.assert_array_equal(dst[:, :h], src[:, :w].transpose(1, 0, 2))


def _app1(tiff: bytes) -> bytes:
    return b"\xff\xe1" + struct.pack(">H", len(tiff) + 8) + b"Exif\x00\x00" + tiff


def _tiff(order: str, entries: list[tuple[int, int, bytes]], count: int | None = None,
          ifd: int = 8) -> bytes:
    e = "<" if order == "II" else ">"
    body = struct.pack(e + "H", len(entries) if count is None else count)
    for tag, typ, value in entries:
        body += struct.pack(e + "HHI", tag, typ, 1) + value.ljust(4, b"\x00")
    return order.encode() + struct.pack(e + "HI", 42, ifd) + body


def _short(order: str, v: int) -> bytes:
    return struct.pack("<H" if order == "II" else ">H", v)


ORIENTATION_CASES = [
    b"\xff\xd8\xff\xdb\x00\x04\x00\x00\xff\xda",  # no Exif before the scan
    b"\xff\xd8" + _app1(_tiff("II", [(0x0112, 3, _short("II", 6))])),
    b"\xff\xd8\xff\xff" + _app1(_tiff("MM", [(0x010F, 2, b"ab"), (0x0112, 3, _short("MM", 3))])),
    b"\xff\xd8" + _app1(_tiff("II", [(0x0112, 4, _short("II", 6))])),  # not a SHORT
    b"\xff\xd8" + _app1(_tiff("MM", [(0x0112, 3, _short("MM", 9))])),  # out of range
    b"\xff\xd8" + _app1(_tiff("II", [(0x0100, 3, b"\x01")], count=5)),  # IFD cut short
    b"\xff\xd8" + _app1(_tiff("II", [(0x0112, 3, _short("II", 8))], ifd=4000)),
    b"\xff\xd8" + _app1(b"XX" + b"\x00" * 20),
    b"\xff\xd8" + _app1(_tiff("II", [(0x0112, 3, _short("II", 5))]))[:14],  # data ends
    b"\xff\xd8\xff\xe1\x00\x02Exif\x00\x00II*\x00\x08\x00\x00\x00",  # length too small
]


def _reference_orientation(data: bytes) -> int:
    """The Exif orientation read with struct (the header reader's earlier code): the
    reference for the reader that is both interpreted and compiled."""
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return 1
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        if marker == 0xDA:
            return 1
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if marker == 0xE1 and data[pos + 4:pos + 10] == b"Exif\x00\x00":
            tiff = data[pos + 10:pos + 2 + length]
            if len(tiff) < 8 or tiff[:2] not in (b"II", b"MM"):
                return 1
            e = "<" if tiff[:2] == b"II" else ">"
            try:
                (ifd,) = struct.unpack_from(e + "I", tiff, 4)
                (count,) = struct.unpack_from(e + "H", tiff, ifd)
                for i in range(min(count, 512)):
                    tag, typ, _, value = struct.unpack_from(e + "HHI4s", tiff, ifd + 2 + 12 * i)
                    if tag == 0x0112:
                        (o,) = struct.unpack_from(e + "H", value) if typ == 3 else (1,)
                        return o if 1 <= o <= 8 else 1
            except struct.error:
                pass
            return 1
        pos += 2 + length
    return 1


@pytest.mark.parametrize("data,want", list(zip(ORIENTATION_CASES,
                                               [1, 6, 3, 1, 1, 1, 1, 1, 1, 1], strict=True)))
def test_compiled_exif_orientation_equals_the_header_readers(data, want):
    arr = np.frombuffer(data, np.uint8)
    assert _reference_orientation(data) == want
    assert loops("image.decode_resize_loop").orientation(arr) == want
    assert decode_header._jpeg_orientation(memoryview(data)) == want


def test_compiled_exif_orientation_on_mutated_headers():
    rng = np.random.default_rng(0)
    base = np.frombuffer(b"\xff\xd8" + _app1(_tiff(
        "II", [(0x010F, 2, b"ab"), (0x0112, 3, _short("II", 6))])) + b"\xff\xda", np.uint8)
    orient = loops("image.decode_resize_loop").orientation
    seen = set()
    for _ in range(400):
        arr = base.copy()
        at = rng.integers(0, len(arr), 2)
        arr[at] = rng.integers(0, 256, 2)
        arr = arr[:rng.integers(4, len(arr) + 1)]
        want = _reference_orientation(arr.tobytes())
        assert orient(arr) == want
        assert decode_header._jpeg_orientation(memoryview(arr.tobytes())) == want
        seen.add(want)
    assert {1, 6} <= seen


def test_located_takes_what_the_loop_took():
    """The chunk's addresses and sizes: the reader's arrays through the C-level maps, and
    any other chunk (read-only, empty, strided, other dtypes, not arrays) row by row,
    0 for what the call must hand back."""
    from stoker.operators.image.decode_resize import _located

    def expected(datas):
        out = []
        for d in datas:
            ok = type(d) is np.ndarray and d.dtype == np.uint8 and d.ndim == 1 and \
                d.flags.c_contiguous
            out.append((d.ctypes.data, d.size) if ok else (0, 0))
        return [a for a, _ in out], [s for _, s in out]

    plain = [np.arange(n, dtype=np.uint8) for n in (5, 300, 1)]
    frozen = np.arange(7, dtype=np.uint8)
    frozen.flags.writeable = False
    class Sub(np.ndarray):
        pass

    odd = [frozen, np.zeros(0, np.uint8), np.arange(20, dtype=np.uint8)[::2],
           np.arange(6, dtype=np.int16), b"abc", np.zeros((2, 3), np.uint8),
           np.arange(4, dtype=np.uint8).view(Sub), np.arange(3, dtype=">u2").view(np.uint8),
           "a string", 12345, None]
    for datas in (plain, plain + odd[:1], plain + odd[1:2], odd, plain + odd):
        addresses, sizes = _located(datas, len(datas))
        want_a, want_s = expected(datas)
        assert addresses.tolist() == want_a and sizes.tolist() == want_s
        # The compiled locator (reading numpy's array objects): the same, but an empty
        # array's address is 0 (size 0 is handed back either way).
        assert DR._LAYOUT is not None  # (numpy's layout was found on this machine)
        got_a, got_s = np.empty(len(datas), np.int64), np.empty(len(datas), np.int64)
        ids = np.array([id(d) for d in datas], np.int64)
        loops("image.decode_resize_loop").locate(ids, DR._LAYOUT, got_a, got_s)
        assert got_s.tolist() == want_s
        assert got_a.tolist() == [a if n else 0 for a, n in zip(want_a, want_s, strict=True)]

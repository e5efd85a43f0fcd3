"""The decoder operators in pipelines: windows, peek_image_shape, bad input, fusion.

Window placement is pinned to what DALI 2.4 gave on a 61x83 JPEG (measured: crop=(20, 30)
lands at (21, 27); rel_start=[0.106, 0.2], rel_shape=[0.5, 0.4] keeps rows [12, 37) and
columns [9, 50); fractional crop sizes are truncated).
"""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PIL import Image

import stoker.graph.fuse as fuse
from stoker import fn, pipeline_def, types
from stoker.errors import SampleError
from stoker.kernels.cpu.image import decode as K


def jpeg(h: int, w: int, seed: int = 0, **opts) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.stack([(xx * 3) % 256, (yy * 4) % 256, ((xx + yy) * 2) % 256], -1)
    img = np.clip(img + np.random.default_rng(seed).integers(-20, 20, img.shape), 0, 255)
    buf = io.BytesIO()
    Image.fromarray(img.astype(np.uint8)).save(buf, "JPEG", quality=90, **opts)
    return np.frombuffer(buf.getvalue(), np.uint8)


BATCH = [jpeg(61, 83), jpeg(100, 77, seed=1), jpeg(64, 64, seed=2), jpeg(120, 90, seed=3)]


def run(build, data=BATCH, iters: int = 1, seed: int = 5, threads: int = 2):
    @pipeline_def(batch_size=len(data), num_threads=threads, device_id=None, seed=seed)
    def pipe():
        return build(fn.external_source(source=lambda: data))

    p = pipe()
    p.build()
    outs = [[np.asarray(s) for s in p.run()[0]] for _ in range(iters)]
    p.close()
    return outs if iters > 1 else outs[0]


def full(k: int) -> np.ndarray:
    return K.decode(BATCH[k])


def test_decoders_image_gives_hwc_uint8_rgb():
    out = run(lambda x: fn.decoders.image(x))
    for k, o in enumerate(out):
        np.testing.assert_array_equal(o, full(k))


def test_image_crop_places_the_window_as_dali_does():
    out = run(lambda x: fn.decoders.image_crop(x, crop=(20.6, 30.4)))[0]
    np.testing.assert_array_equal(out, full(0)[21:41, 27:57])
    out = run(lambda x: fn.decoders.image_crop(x, crop=(20, 30), crop_pos_x=0.0,
                                               crop_pos_y=1.0))[0]
    np.testing.assert_array_equal(out, full(0)[41:61, 0:30])


def test_image_crop_takes_per_sample_positions():
    def build(x):
        return fn.decoders.image_crop(x, crop=(16, 16), crop_pos_x=fn.random.uniform(
            range=(0, 1)), crop_pos_y=fn.random.uniform(range=(0, 1)))

    first, second = run(build, iters=2)
    assert all(o.shape == (16, 16, 3) for o in first)
    assert any(not np.array_equal(a, b) for a, b in zip(first, second, strict=True))


def test_image_slice_windows_match_dali():
    out = run(lambda x: fn.decoders.image_slice(x, rel_start=[0.106, 0.2],
                                                rel_shape=[0.5, 0.4]))[0]
    np.testing.assert_array_equal(out, full(0)[12:37, 9:50])
    anchor = [np.array([10, 5], np.int32)] * 4
    shape = [np.array([30, 20], np.int32)] * 4

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: BATCH)
        a = fn.external_source(source=lambda: anchor)
        s = fn.external_source(source=lambda: shape)
        return fn.decoders.image_slice(x, a, s, normalized_anchor=False,
                                       normalized_shape=False)

    p = pipe()
    p.build()
    np.testing.assert_array_equal(np.asarray(p.run()[0][0]), full(0)[5:25, 10:40])


def test_image_random_crop_is_reproducible_and_inside_the_ranges():
    def build(x):
        return fn.decoders.image_random_crop(x, random_area=[0.3, 0.6],
                                             random_aspect_ratio=[0.8, 1.25])

    a = run(build, seed=7)
    b = run(build, seed=7, threads=1)
    for k, (o, p) in enumerate(zip(a, b, strict=True)):
        np.testing.assert_array_equal(o, p)
        h, w = full(k).shape[:2]
        assert 0.25 <= o.shape[0] * o.shape[1] / (h * w) <= 0.65
        # the window is a window of the full decode
        found = any(np.array_equal(full(k)[y:y + o.shape[0], x:x + o.shape[1]], o)
                    for y in range(h - o.shape[0] + 1) for x in range(w - o.shape[1] + 1))
        assert found


def test_peek_image_shape_reads_headers_with_orientation():
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    Image.new("RGBA", (30, 20)).save(buf, "PNG")
    rgba = np.frombuffer(buf.getvalue(), np.uint8)
    buf = io.BytesIO()
    Image.new("RGB", (30, 20)).save(buf, "JPEG", exif=exif.tobytes())
    rotated = np.frombuffer(buf.getvalue(), np.uint8)
    data = [rgba, rotated]
    out = run(lambda x: fn.peek_image_shape(x), data=data)
    assert [o.tolist() for o in out] == [[20, 30, 3], [30, 20, 3]]
    assert out[0].dtype == np.int64
    out = run(lambda x: fn.peek_image_shape(x, image_type=types.ANY_DATA, dtype=types.INT32,
                                            adjust_orientation=False), data=data)
    assert [o.tolist() for o in out] == [[20, 30, 4], [20, 30, 3]]
    assert out[0].dtype == np.int32


# -- bad input ------------------------------------------------------------------------------

GOOD = jpeg(61, 83).tobytes()
BAD = {
    "truncated": GOOD[: len(GOOD) * 2 // 3],
    "corrupt_header": GOOD[:200] + b"\xff\x00" * 40 + GOOD[280:],
    "corrupt_data": GOOD[:len(GOOD) // 2] + b"\xff\x00" * 20 + GOOD[len(GOOD) // 2 + 40:],
    "zero": b"",
    "gif": b"GIF89a" + bytes(40),
    "garbage": b"this is not an image" * 5,
    "header_only": GOOD[:300],
}
WHY = {"truncated": "truncated", "corrupt_header": "header could not be decoded",
       "corrupt_data": "corrupt JPEG data", "zero": "empty input",
       "gif": "GIF images are not supported", "garbage": "unrecognised image format",
       "header_only": "could not be decoded"}
TRUNCATED = BAD["truncated"]


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_naming_the_operator_and_the_sample(name):
    data = [np.frombuffer(GOOD, np.uint8), np.frombuffer(BAD[name], np.uint8)]
    with pytest.raises(SampleError) as err:
        run(lambda x: fn.decoders.image(x), data=data)
    msg = str(err.value)
    assert "fn.decoders.image" in msg and "sample 1 of batch 0" in msg
    assert WHY[name] in msg


def test_bad_file_error_names_its_path(tmp_path):
    (tmp_path / "cls0").mkdir()
    (tmp_path / "cls0" / "a.jpg").write_bytes(GOOD)
    (tmp_path / "cls0" / "b.jpg").write_bytes(TRUNCATED)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        data, _ = fn.readers.file(file_root=str(tmp_path))
        return fn.decoders.image_random_crop(data)

    p = pipe()
    p.build()
    with pytest.raises(SampleError, match=r"fn.decoders.image_random_crop .* failed on "
                                          r".*cls0/b.jpg.*truncated"):
        p.run()


def test_image_over_the_size_limit_is_refused(monkeypatch):
    monkeypatch.setattr(K, "MAX_PIXELS", 61 * 83 - 1)
    with pytest.raises(SampleError, match="exceeds the decoded-size limit"):
        run(lambda x: fn.decoders.image_crop(x, crop=(8, 8)), data=BATCH[:1])


def test_bad_input_never_crashes_the_process():
    """Every bad input, every decoder, in a child process: it must exit normally."""
    script = textwrap.dedent(f"""
        import numpy as np
        from stoker import fn, pipeline_def
        from stoker.errors import SampleError
        bad = {sorted(BAD.values())!r}
        for data in bad:
            for op in (fn.decoders.image, fn.decoders.image_random_crop, fn.peek_image_shape):
                @pipeline_def(batch_size=1, num_threads=1, device_id=None)
                def pipe():
                    x = fn.external_source(source=lambda: [np.frombuffer(data, np.uint8)])
                    return op(x)
                p = pipe(); p.build()
                try:
                    p.run()
                except SampleError:
                    pass
        print("survived")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "survived" in done.stdout


# -- fusion ---------------------------------------------------------------------------------

def _both(build, monkeypatch):
    """(fused outputs, fused op names, unfused outputs) of two iterations."""
    def make():
        @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=3)
        def pipe():
            return build(fn.external_source(source=lambda: BATCH))

        p = pipe()
        p.build()
        names = [op.schema.name for op in p._plan.ops]
        outs = [[np.asarray(s) for s in p.run()[0]] for _ in range(2)]
        p.close()
        return outs, names

    fused, names = make()
    monkeypatch.setattr(fuse, "ENABLED", False)
    plain, plain_names = make()
    assert "decoders.image" in plain_names
    return fused, names, plain


FUSIONS = {
    "crop": (lambda x: fn.crop(fn.decoders.image(x), crop=(40, 50), crop_pos_y=0.3,
                               crop_pos_x=fn.random.uniform(range=(0, 1))),
             "decoders.image_crop"),
    "slice": (lambda x: fn.slice(fn.decoders.image(x), rel_start=[0.1, 0.2],
                                 rel_shape=[0.5, 0.6]), "decoders.image_slice"),
    "slice_inputs": (lambda x: fn.slice(fn.decoders.image(x),
                                        fn.random.uniform(range=(0, 0.4), shape=[2]),
                                        fn.random.uniform(range=(0.3, 0.5), shape=[2])),
                     "decoders.image_slice"),
    "crop_mirror_normalize": (
        lambda x: fn.crop_mirror_normalize(
            fn.decoders.image(x), crop=(48, 48), crop_pos_x=fn.random.uniform(range=(0, 1)),
            crop_pos_y=fn.random.uniform(range=(0, 1)), mirror=fn.random.coin_flip(),
            mean=[1.0, 2.0, 3.0], std=[50.0, 60.0, 70.0], dtype=types.FLOAT,
            output_layout="CHW"),
        "decoders.image_crop"),
}


@pytest.mark.parametrize("name", sorted(FUSIONS))
def test_decode_then_window_becomes_a_window_decode_with_equal_results(name, monkeypatch):
    build, fused_op = FUSIONS[name]
    fused, names, plain = _both(build, monkeypatch)
    assert fused_op in names and "decoders.image" not in names
    for a, b in zip(fused, plain, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_decoded_image_used_twice_is_not_fused():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        img = fn.decoders.image(fn.external_source(source=lambda: BATCH))
        return fn.crop(img, crop=(10, 10)), img

    p = pipe()
    p.build()
    assert "decoders.image" in [op.schema.name for op in p._plan.ops]


def test_slice_of_channels_is_not_fused():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        img = fn.decoders.image(fn.external_source(source=lambda: BATCH))
        return fn.slice(img, start=[1], shape=[2], axes=[2])

    p = pipe()
    p.build()
    assert "decoders.image" in [op.schema.name for op in p._plan.ops]
    assert all(np.asarray(s).shape[-1] == 2 for s in p.run()[0])

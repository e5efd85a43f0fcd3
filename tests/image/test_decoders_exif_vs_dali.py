"""EXIF-oriented JPEGs against DALI 2.4's decodes of the same bytes (issue 20, item 4).

tests/data/dali_decoders_exif.npz was recorded by tests/data/record/decoders_exif.py: a
40x30 JPEG (hard colour edges, partial MCUs) for each EXIF orientation 1..8 and chroma
subsampling 4:4:4, 4:2:2, 4:2:0, and DALI's fn.decoders.image outputs for ANY_DATA, RGB,
BGR, GRAY and YCbCr (stored for orientation 1; DALI's others are those turned as EXIF
says, which the recorder checked), its image_crop and image_slice windows, and a
decode -> resize chain. stoker must give the same pixels: exactly for every decode and
window (DALI's YCbCr would be allowed 1 level, as tests/dali measures; these images need
none), within 1 level for the resize (its own tolerance against DALI). The paths covered:
the kernel, decoders.image, the window decoders, the fusion rules that make window
decoders and decode-resizes of decoders.image, and image_random_crop (plain and fused).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.graph import fuse
from stoker.kernels.cpu.image import decode as K
from stoker.operators.image import decode_resize

DATA = np.load(pathlib.Path(__file__).resolve().parents[1] / "data" / "dali_decoders_exif.npz")
SUBSAMPLINGS = ("444", "422", "420")
KEYS = [(o, s) for s in SUBSAMPLINGS for o in range(1, 9)]
TYPES = ("ANY_DATA", "RGB", "BGR", "GRAY", "YCbCr")
# (flip rows, flip columns, transpose) that show an image stored under an orientation
_TURN = {1: (0, 0, 0), 2: (0, 1, 0), 3: (1, 1, 0), 4: (1, 0, 0), 5: (0, 0, 1), 6: (1, 0, 1),
         7: (1, 1, 1), 8: (0, 1, 1)}


def turned(img: np.ndarray, orientation: int) -> np.ndarray:
    flip_y, flip_x, transpose = _TURN[orientation]
    img = img[::-1] if flip_y else img
    img = img[:, ::-1] if flip_x else img
    return img.transpose(1, 0, 2) if transpose else img


def dali(output_type: str, o: int, s: str) -> np.ndarray:
    """DALI's fn.decoders.image output for the file of orientation o, subsampling s."""
    if output_type == "BGR":
        return dali("RGB", o, s)[..., ::-1]
    return turned(DATA[f"{output_type}_o1_{s}"], o)


def jpeg(o: int, s: str) -> np.ndarray:
    return DATA[f"jpeg_o{o}_{s}"]


def run(build, files: list[np.ndarray], seed: int = 1) -> list[np.ndarray]:
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=seed)
    def pipe():
        return build(fn.external_source(source=lambda: files))

    p = pipe()
    p.build()
    return [np.asarray(t) for t in p.run()[0]]


@pytest.mark.parametrize("output_type", TYPES)
@pytest.mark.parametrize("subsampling", SUBSAMPLINGS)
def test_the_decode_kernel_equals_dalis_for_every_orientation(output_type, subsampling):
    for o in range(1, 9):
        got = K.decode(jpeg(o, subsampling), output_type)
        np.testing.assert_array_equal(got, dali(output_type, o, subsampling),
                                      err_msg=f"orientation {o}")


@pytest.mark.parametrize("output_type", TYPES)
def test_decoders_image_equals_dalis(output_type):
    got = run(lambda e: fn.decoders.image(e, output_type=getattr(types, output_type)),
              [jpeg(o, s) for o, s in KEYS])
    for out, (o, s) in zip(got, KEYS, strict=True):
        np.testing.assert_array_equal(out, dali(output_type, o, s), err_msg=f"o{o} {s}")


def _crop(e):
    return dict(crop=(13, 11), crop_pos_x=0.3, crop_pos_y=0.7)


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("chain", ["image_crop", "decoders.image -> crop"])
def test_crop_windows_of_oriented_files_equal_dalis(chain, fused, monkeypatch):
    """The window is placed in the oriented image (fn.crop's arguments, DALI's anchors)."""
    monkeypatch.setattr(fuse, "ENABLED", fused)
    window = dict(crop=(13, 11), crop_pos_x=0.3, crop_pos_y=0.7)
    if chain == "image_crop":
        def build(e):
            return fn.decoders.image_crop(e, output_type=types.ANY_DATA, **window)
    else:
        def build(e):
            return fn.crop(fn.decoders.image(e, output_type=types.ANY_DATA), **window)
    got = run(build, [jpeg(o, s) for o, s in KEYS])
    for out, (o, s) in zip(got, KEYS, strict=True):
        y, x = DATA[f"crop_at_o{o}_{s}"]
        np.testing.assert_array_equal(out, dali("ANY_DATA", o, s)[y:y + 13, x:x + 11],
                                      err_msg=f"o{o} {s}")


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("chain", ["image_slice", "decoders.image -> slice"])
def test_slice_windows_of_oriented_files_equal_dalis(chain, fused, monkeypatch):
    monkeypatch.setattr(fuse, "ENABLED", fused)
    window = dict(rel_start=(0.2, 0.3), rel_shape=(0.5, 0.4))
    if chain == "image_slice":
        def build(e):
            return fn.decoders.image_slice(e, output_type=types.RGB, **window)
    else:
        def build(e):
            return fn.slice(fn.decoders.image(e, output_type=types.RGB), **window)
    got = run(build, [jpeg(o, s) for o, s in KEYS])
    for out, (o, s) in zip(got, KEYS, strict=True):
        y, x, h, w = DATA[f"slice_at_o{o}_{s}"]
        np.testing.assert_array_equal(out, dali("RGB", o, s)[y:y + h, x:x + w],
                                      err_msg=f"o{o} {s}")


@pytest.mark.parametrize("fused", [False, True])
def test_decode_then_resize_of_oriented_files_is_within_a_level_of_dalis(fused, monkeypatch):
    monkeypatch.setattr(fuse, "ENABLED", fused)
    files = [jpeg(o, "420") for o in range(1, 9)]
    got = run(lambda e: fn.resize(fn.decoders.image(e, output_type=types.ANY_DATA),
                                  resize_x=33, resize_y=27), files)
    for o, out in zip(range(1, 9), got, strict=True):
        want = DATA[f"resize_o{o}_420"]
        diff = np.abs(out.astype(int) - want)
        assert diff.max() <= 1 and (diff > 0).mean() < 0.01, f"orientation {o}"


@pytest.mark.parametrize("output_type", ["ANY_DATA", "RGB"])
def test_random_crop_windows_are_windows_of_the_oriented_image(output_type):
    """image_random_crop draws its window in the oriented image: each output is a part of
    DALI's full decode, and the windows of one draw agree across orientations."""
    files = [jpeg(o, s) for o, s in KEYS]
    got = run(lambda e: fn.decoders.image_random_crop(
        e, output_type=getattr(types, output_type), random_area=[0.2, 0.5]), files, seed=3)
    for out, (o, s) in zip(got, KEYS, strict=True):
        full = dali(output_type, o, s)
        h, w = out.shape[:2]
        assert any(np.array_equal(full[y:y + h, x:x + w], out)
                   for y in range(full.shape[0] - h + 1) for x in range(full.shape[1] - w + 1)
                   ), f"o{o} {s}: not a window of the oriented image"


@pytest.mark.parametrize("decoder", ["image", "image_random_crop"])
def test_fused_decode_resize_of_oriented_files_equals_the_unfused_chain(decoder, monkeypatch):
    """Without DCT scaling the fused decode-resize reads the oriented image exactly as the
    unfused decoder hands it to resize."""
    monkeypatch.setattr(decode_resize, "DCT_SCALING", False)
    outs = {}
    for fused in (True, False):
        monkeypatch.setattr(fuse, "ENABLED", fused)
        outs[fused] = run(lambda e: _resized(getattr(fn.decoders, decoder)(
            e, output_type=types.ANY_DATA), (24, 18)), [jpeg(o, s) for o, s in KEYS], seed=5)
    for a, b, (o, s) in zip(outs[True], outs[False], KEYS, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=f"o{o} {s}")


def _resized(images, size):
    return fn.crop_mirror_normalize(fn.resize(images, size=size), dtype=types.UINT8,
                                    output_layout="HWC", mirror=0)


def test_dct_scaled_decodes_of_oriented_files_are_the_unrotated_ones_turned():
    """A shrink of 2x or more decodes at a DCT scale (a few levels from the unfused
    chain, by design); the file of each orientation gives orientation 1's result turned,
    up to the resampler's rounding."""
    files = [jpeg(o, s) for o, s in KEYS]
    got = run(lambda e: _resized(fn.decoders.image(e, output_type=types.ANY_DATA), (8, 8)),
              files)
    for out, (o, s) in zip(got, KEYS, strict=True):
        first = got[KEYS.index((1, s))]
        assert np.abs(out.astype(int) - turned(first, o)).max() <= 1, f"o{o} {s}"

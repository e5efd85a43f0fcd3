"""Records DALI 2.4's decodes of EXIF-oriented JPEGs (issue 20, item 4).

Run with DALI installed (CPU is enough), from the repository root:
    /work/dali-venv/bin/python tests/data/record/decoders_exif.py

Makes one 40x30 photo-like image (gradients, noise, hard colour edges: where chroma
upsampling and edge handling show), encodes it with Pillow as a JPEG with an EXIF block
for each orientation 1..8 and each chroma subsampling 4:4:4, 4:2:2, 4:2:0 (40x30 is not a
whole number of MCUs: the partial MCUs at the right and bottom edges are covered), and
runs DALI's fn.decoders.image (ANY_DATA, RGB, BGR, GRAY, YCbCr), image_crop(ANY_DATA,
crop=(13, 11), crop_pos_x=0.3, crop_pos_y=0.7), image_slice(RGB, rel_start=(0.2, 0.3),
rel_shape=(0.5, 0.4)) and resize(decoders.image(ANY_DATA), resize_x=33, resize_y=27) (a
chain stoker fuses into one decode-resize; a shrink under 2x: no DCT scaling) on them,
and stores in tests/data/dali_decoders_exif.npz (key suffix ``_o{1..8}_{444,422,420}``):

- ``jpeg``: each file's bytes (tests decode these very bytes, never a re-encoding);
- ``ANY_DATA``, ``RGB``, ``GRAY``, ``YCbCr`` of orientation 1. Every other orientation's
  decode is orientation 1's turned as EXIF says, and BGR is RGB reversed: checked here,
  not stored (so the file stays small);
- ``crop_at`` (y, x), ``slice_at`` (y, x, h, w): where DALI's windows lie in its full
  decode (each window equals that part of it: checked here);
- ``resize``: the decode-resize chain's output, for the 4:2:0 files.

The replay test: tests/image/test_decoders_exif_vs_dali.py.
"""

from __future__ import annotations

import io
import pathlib

import numpy as np
from nvidia.dali import fn, pipeline_def, types
from PIL import Image

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_decoders_exif.npz"
H, W = 30, 40
SUBSAMPLINGS = {"444": 0, "422": 1, "420": 2}
TYPES = ("ANY_DATA", "RGB", "BGR", "GRAY", "YCbCr")


def photo() -> np.ndarray:
    yy, xx = np.mgrid[0:H, 0:W]
    img = np.stack([xx * 6, yy * 8, (xx + yy) * 4], -1).astype(np.int32)
    img += np.random.default_rng(4).integers(-3, 4, img.shape)
    img[5:14, 22:31] = (240, 20, 20)  # hard chroma edges, off the MCU grid
    img[17:, :7] = (20, 200, 60)
    img[24:27, 30:] = (30, 40, 220)
    return np.clip(img, 0, 255).astype(np.uint8)


def jpeg(orientation: int, subsampling: int) -> np.ndarray:
    exif = Image.Exif()
    exif[0x0112] = orientation
    buf = io.BytesIO()
    Image.fromarray(photo()).save(buf, "JPEG", quality=90, subsampling=subsampling,
                                  exif=exif.tobytes())
    return np.frombuffer(buf.getvalue(), np.uint8)


def run(files: list[np.ndarray], build) -> list[np.ndarray]:
    @pipeline_def(batch_size=len(files), num_threads=1, device_id=None)
    def pipe():
        return build(fn.external_source(source=lambda: files, batch=True))

    p = pipe()
    p.build()
    return [np.array(t) for t in p.run()[0]]


def turned(img: np.ndarray, orientation: int) -> np.ndarray:
    """The stored image as displayed under an EXIF orientation (the TIFF/EXIF definition;
    Pillow's ImageOps.exif_transpose does the same)."""
    flip_y, flip_x, transpose = {1: (0, 0, 0), 2: (0, 1, 0), 3: (1, 1, 0), 4: (1, 0, 0),
                                 5: (0, 0, 1), 6: (1, 0, 1), 7: (1, 1, 1), 8: (0, 1, 1)}[
        orientation]
    img = img[::-1] if flip_y else img
    img = img[:, ::-1] if flip_x else img
    return img.transpose(1, 0, 2) if transpose else img


def window_of(full: np.ndarray, part: np.ndarray) -> list[int]:
    """Where ``part`` lies in ``full`` (the one place it does)."""
    h, w = part.shape[:2]
    places = [[y, x] for y in range(full.shape[0] - h + 1) for x in range(full.shape[1] - w + 1)
              if np.array_equal(full[y:y + h, x:x + w], part)]
    assert len(places) == 1, places
    return places[0]


def main() -> None:
    keys = [(o, s) for s in SUBSAMPLINGS for o in range(1, 9)]
    files = [jpeg(o, SUBSAMPLINGS[s]) for o, s in keys]
    builds = {t: (lambda e, t=t: fn.decoders.image(e, output_type=getattr(types, t)))
              for t in TYPES}
    builds["crop"] = lambda e: fn.decoders.image_crop(
        e, output_type=types.ANY_DATA, crop=(13, 11), crop_pos_x=0.3, crop_pos_y=0.7)
    builds["slice"] = lambda e: fn.decoders.image_slice(
        e, output_type=types.RGB, rel_start=(0.2, 0.3), rel_shape=(0.5, 0.4))
    builds["resize"] = lambda e: fn.resize(fn.decoders.image(e, output_type=types.ANY_DATA),
                                           resize_x=33, resize_y=27)
    outs = {name: dict(zip(keys, run(files, build), strict=True))
            for name, build in builds.items()}
    arrays: dict[str, np.ndarray] = {}
    for (o, s), data in zip(keys, files, strict=True):
        arrays[f"jpeg_o{o}_{s}"] = data
        # Kept small: what follows from orientation 1's decode is checked, not stored.
        for t in TYPES:
            if o == 1 and t != "BGR":
                arrays[f"{t}_o1_{s}"] = outs[t][o, s]
            assert np.array_equal(outs[t][o, s], turned(outs[t][1, s], o)), (t, o, s)
        assert np.array_equal(outs["BGR"][o, s], outs["RGB"][o, s][..., ::-1])
        arrays[f"crop_at_o{o}_{s}"] = np.array(window_of(outs["ANY_DATA"][o, s],
                                                         outs["crop"][o, s]))
        arrays[f"slice_at_o{o}_{s}"] = np.array(window_of(outs["RGB"][o, s],
                                                          outs["slice"][o, s]) +
                                                list(outs["slice"][o, s].shape[:2]))
        if s == "420":
            arrays[f"resize_o{o}_{s}"] = outs["resize"][o, s]
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(arrays)} arrays)")


if __name__ == "__main__":
    main()

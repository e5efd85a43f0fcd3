"""fn.experimental.readers.fits against astropy: plain images of every BITPIX (and the
unsigned conventions), several HDUs a file, 1-D to 3-D and odd shapes; tile-compressed
images (RICE_1, GZIP_1, GZIP_2, several tile shapes, quantized and dithered floats);
BSCALE/BZERO as CFITSIO applies them for DALI (hand-computed types and values); bad
files named with their HDU, or skipped under on_error="skip"; DALI's argument checks.

DALI 2.4's CPU fits reader allocates with CUDA and fails on a machine without a GPU, so
no DALI output could be recorded: astropy (a test extra) is the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

from stoker import Pipeline, SampleError, fn, types
from stoker.errors import ArgumentError
from stoker.readers.fits_tiles import read_hdus

fits = pytest.importorskip("astropy.io.fits")
RNG = np.random.default_rng(28)


def run(files, batch_size=1, iterations=1, skip=False, **kw):
    pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=None, seed=3,
                    **({"on_error": "skip"} if skip else {}))
    with pipe:
        outs = fn.experimental.readers.fits(files=files, name="R", **kw)
        pipe.set_outputs(*(outs if isinstance(outs, list | tuple) else [outs]))
    pipe.build()
    got = []
    for _ in range(iterations):
        tls = pipe.run()
        got += [[np.array(tl.at(i)) for tl in tls] for i in range(len(tls[0]))]
    pipe.close()
    return got


def _ints(dtype, shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


PLAIN = [np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64,
         np.uint16, np.uint32, np.uint64, np.int8]
SHAPES = [(1,), (13,), (9, 7), (3, 5, 4), (1, 1, 6)]


def test_every_bitpix_and_shape_equals_astropy(tmp_path):
    hdus = [fits.PrimaryHDU(_ints(np.uint8, (5, 3)))]
    for k, dtype in enumerate(PLAIN):
        shape = SHAPES[k % len(SHAPES)]
        data = (RNG.normal(size=shape) * 1e3).astype(dtype) if np.dtype(dtype).kind == "f" \
            else _ints(dtype, shape)
        hdus.append(fits.ImageHDU(data))
    path = str(tmp_path / "plain.fits")
    fits.HDUList(hdus).writeto(path)
    numbers = list(range(1, len(hdus) + 1))
    (got,) = run([path], hdu_indices=numbers)
    with fits.open(path) as ref:
        for n, ours in zip(numbers, got, strict=True):
            want = ref[n - 1].data
            assert ours.dtype == want.dtype.newbyteorder("="), n
            assert ours.shape == want.shape and np.array_equal(ours, want), n


def test_default_hdu_is_the_first_extension_and_batches_span_files(tmp_path):
    paths, arrays = [], []
    for i in range(5):
        a = _ints(np.int16, (4, 6))
        fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(a)]).writeto(tmp_path / f"{i}.fits")
        paths.append(str(tmp_path / f"{i}.fits"))
        arrays.append(a)
    got = run(paths, batch_size=2, iterations=3)
    assert [g[0].tolist() for g in got] == [a.tolist() for a in arrays + arrays[:1]]
    pipe = Pipeline(batch_size=5, num_threads=1, device_id=None)
    with pipe:
        out = fn.experimental.readers.fits(file_root=str(tmp_path), random_shuffle=True,
                                           seed=1)
        pipe.set_outputs(out)
    pipe.build()
    (tl,) = pipe.run()
    assert sorted(np.array(tl.at(i)).tolist() for i in range(5)) == \
        sorted(a.tolist() for a in arrays)


COMPRESSED = [
    (np.int16, "RICE_1", (37, 45), None), (np.int32, "RICE_1", (20, 31), None),
    (np.uint8, "RICE_1", (17, 19), None), (np.uint16, "RICE_1", (8, 300), None),
    (np.int16, "RICE_1", (5, 17, 23), (2, 4, 5)), (np.int32, "RICE_1", (29,), None),
    (np.int16, "GZIP_1", (37, 45), (7, 8)), (np.int32, "GZIP_2", (11, 13), None),
    (np.uint8, "GZIP_1", (6, 9), None), (np.int16, "GZIP_2", (3, 4, 5), (1, 4, 5)),
    (np.int32, "RICE_1", (64, 64), (16, 16)),
]


@pytest.mark.parametrize(("dtype", "cmp", "shape", "tile"), COMPRESSED)
def test_compressed_integer_images_equal_astropy(tmp_path, dtype, cmp, shape, tile):
    info = np.iinfo(dtype)
    # Smooth data and noise: RICE's low-entropy, normal and high-entropy blocks.
    data = np.clip(np.cumsum(RNG.integers(-3, 4, shape), axis=-1) + info.min // 2 +
                   info.max // 2, info.min, info.max).astype(dtype)
    data.reshape(-1)[: data.size // 3] = _ints(dtype, data.size // 3)
    flat = data.reshape(-1)
    flat[-min(40, flat.size // 2):] = flat[-min(40, flat.size // 2) - 1]
    path = str(tmp_path / "c.fits")
    fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(
        data, compression_type=cmp, **({"tile_shape": tile} if tile else {}))]).writeto(path)
    (got,) = run([path])
    with fits.open(path) as ref:
        want = ref[1].data
        assert got[0].dtype == want.dtype.newbyteorder("=")
        assert np.array_equal(got[0], want)
    assert np.array_equal(got[0], data)


@pytest.mark.parametrize(("cmp", "quantize"), [("RICE_1", {"quantize_method": 1}),
                                               ("RICE_1", {"quantize_method": 2}),
                                               ("RICE_1", {"quantize_method": -1}),
                                               ("GZIP_2", {"quantize_method": 1}),
                                               ("GZIP_1", {"quantize_level": 0}),
                                               ("GZIP_2", {"quantize_level": 0})])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compressed_float_images_equal_astropy(tmp_path, cmp, quantize, dtype):
    data = (RNG.normal(size=(23, 41)) * 50).astype(dtype)
    data[3, :5] = 0.0
    path = str(tmp_path / "f.fits")
    fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(
        data, compression_type=cmp, tile_shape=(5, 41), **quantize)]).writeto(path)
    (got,) = run([path])
    with fits.open(path) as ref:
        want = ref[1].data
    assert got[0].dtype == want.dtype.newbyteorder("=")
    assert np.array_equal(got[0], want)


def test_null_pixels_of_quantized_images_are_zero_as_cfitsio_gives_dali(tmp_path):
    data = RNG.normal(size=(6, 30)).astype(np.float32)
    data[2, 4] = data[5, 0] = np.nan
    path = str(tmp_path / "n.fits")
    fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(data, compression_type="RICE_1")]
                 ).writeto(path)
    (got,) = run([path])
    with fits.open(path) as ref:
        want = ref[1].data
    assert np.isnan(want[2, 4]) and np.isnan(want[5, 0])
    assert np.array_equal(got[0], np.nan_to_num(want, nan=0.0))


# (BITPIX's dtype, BSCALE, BZERO) -> the type CFITSIO's fits_get_img_equivtype gives DALI.
SCALINGS = [
    (np.int16, 1, 100, np.int32), (np.uint8, 2, 0, np.int16), (np.uint8, 1, -128, np.int8),
    (np.int16, 1, 32768, np.uint16), (np.int16, 0.5, 10, np.float32),
    (np.uint8, 0.25, 0, np.float32), (np.int32, 1, 5, np.float64),
    (np.int32, 1.5, 0, np.float64), (np.int32, 1, 2 ** 31, np.uint32),
    (np.int16, -1, 0, np.int32), (np.float32, 2, 1, np.float32),
    (np.int64, 1, 7, np.int64),
]


@pytest.mark.parametrize(("stored", "bscale", "bzero", "want_type"), SCALINGS)
def test_bscale_bzero_give_cfitsio_types_and_values(tmp_path, stored, bscale, bzero,
                                                   want_type):
    raw = _ints(stored, (4, 5)) if np.dtype(stored).kind != "f" else \
        RNG.normal(size=(4, 5)).astype(stored)
    hdu = fits.ImageHDU(raw, do_not_scale_image_data=True)
    hdu.header["BSCALE"], hdu.header["BZERO"] = bscale, bzero
    path = str(tmp_path / "s.fits")
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(path)
    with fits.open(path, do_not_scale_image_data=True) as f:
        stored_values = f[1].data.astype(np.float64)
    (got,) = run([path])
    assert got[0].dtype == want_type
    want = stored_values * bscale + bzero
    assert np.array_equal(got[0], want.astype(want_type))
    with fits.open(path) as f:  # astropy scales the same values (in its own types)
        assert np.allclose(got[0].astype(np.float64), f[1].data.astype(np.float64),
                           rtol=1e-6)


def _bad_files(tmp_path):
    good = tmp_path / "good.fits"
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(a)]).writeto(good)
    raw = good.read_bytes()
    out = {}
    (tmp_path / "short_data.fits").write_bytes(raw[:2880 * 2 + 10])
    out["short_data.fits"] = "truncated"
    (tmp_path / "short_header.fits").write_bytes(raw[:2880 + 400])
    out["short_header.fits"] = "no END card"
    (tmp_path / "text.fits").write_bytes(b"just some text\n" * 300)
    out["text.fits"] = "not a FITS file"
    (tmp_path / "empty.fits").write_bytes(b"")
    out["empty.fits"] = "only 0 HDU"
    fits.HDUList([fits.PrimaryHDU(a)]).writeto(tmp_path / "one_hdu.fits")
    out["one_hdu.fits"] = "has only 1 HDU"
    fits.HDUList([fits.PrimaryHDU(), fits.BinTableHDU.from_columns(
        [fits.Column(name="x", format="J", array=np.arange(3))])]).writeto(
        tmp_path / "table.fits")
    out["table.fits"] = "only image HDUs can be read, this one is a 'BINTABLE'"
    fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(
        a.astype(np.int32), compression_type="PLIO_1")]).writeto(tmp_path / "plio.fits")
    out["plio.fits"] = "compression 'PLIO_1' is not supported"
    fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(
        np.ones((8, 8), np.int16), compression_type="HCOMPRESS_1")]).writeto(
        tmp_path / "hc.fits")
    out["hc.fits"] = "compression 'HCOMPRESS_1' is not supported"
    rice = tmp_path / "rice.fits"
    fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(
        RNG.integers(0, 30000, (40, 50)).astype(np.int16), compression_type="RICE_1")]
                 ).writeto(rice)
    with fits.open(rice, disable_image_compression=True) as f:
        rows_at, width = f[1]._data_offset, f[1].header["NAXIS1"]
        assert f[1].header["TTYPE1"] == "COMPRESSED_DATA"
    raw = bytearray(rice.read_bytes())
    # Tile 6's descriptor (count, offset: big-endian int32) says 3 bytes: its codes run out.
    raw[rows_at + 5 * width:rows_at + 5 * width + 4] = (3).to_bytes(4, "big")
    (tmp_path / "rice_short.fits").write_bytes(bytes(raw))
    out["rice_short.fits"] = "tile 6's RICE_1 bytes end early"
    raw[rows_at + 5 * width + 4:rows_at + 5 * width + 8] = (10 ** 8).to_bytes(4, "big")
    (tmp_path / "rice_outside.fits").write_bytes(bytes(raw))
    out["rice_outside.fits"] = "lie outside the heap"
    return str(good), out


def test_bad_files_are_named_with_their_hdu(tmp_path):
    good, bad = _bad_files(tmp_path)
    for name, why in bad.items():
        path = str(tmp_path / name)
        with pytest.raises(SampleError, match=why) as e:
            run([good, path], batch_size=2)
        assert path in str(e.value) and e.value.source.endswith(name)
        if name not in ("text.fits",):
            assert "HDU 2" in str(e.value), (name, str(e.value))


def test_bad_files_are_skipped_under_on_error_skip(tmp_path):
    good, bad = _bad_files(tmp_path)
    files = [good] + [str(tmp_path / n) for n in bad] + [good]
    got = run(files, batch_size=4, iterations=1, skip=True)
    assert [g[0].tolist() for g in got] == [np.arange(12).reshape(3, 4).tolist()] * 2


def test_hdu_without_data_is_an_error(tmp_path):
    path = str(tmp_path / "p.fits")
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(np.ones((2, 2), np.float32))]).writeto(
        path)
    with pytest.raises(SampleError, match="HDU 1: the HDU has no image data"):
        run([path], hdu_indices=[1])
    assert read_hdus(path, [2, 2])[1].tolist() == [[1, 1], [1, 1]]


def test_a_batch_keeps_one_type_and_rank_per_output(tmp_path):
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(np.ones(3, np.int16))]).writeto(
        tmp_path / "a.fits")
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(np.ones(3, np.float32))]).writeto(
        tmp_path / "b.fits")
    with pytest.raises(SampleError, match="same data type in output 0"):
        run([str(tmp_path / "a.fits"), str(tmp_path / "b.fits")], batch_size=2)


@pytest.mark.parametrize(("kw", "match"), [
    ({"dtypes": [types.INT16, types.INT16]}, "'dtypes' has 2 entries for 1 HDUs"),
    ({"dtypes": [types.BOOL]}, "unsupported output dtype BOOL"),
    ({"hdu_indices": [0]}, "counts HDUs from 1"),
    ({"hdu_indices": []}, "needs at least one HDU"),
    ({"shuffle_after_epoch": True, "random_shuffle": True}, "cannot both be True"),
])
def test_argument_errors_at_build(tmp_path, kw, match):
    with pytest.raises(ArgumentError, match=match):
        run([str(tmp_path / "x.fits")], **kw)


def test_dtypes_do_not_change_the_output_types_as_in_dali(tmp_path):
    path = str(tmp_path / "d.fits")
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(np.arange(4, dtype=np.int32))]).writeto(
        path)
    (got,) = run([path], dtypes=[types.FLOAT])
    assert got[0].dtype == np.int32

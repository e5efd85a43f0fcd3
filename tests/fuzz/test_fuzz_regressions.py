"""Bugs the parser fuzzer (fuzz/fuzz_parsers.py) found, each replayed with a hand-made input
of the same kind so that the test does not depend on the fuzzer's mutation sequence."""

from __future__ import annotations

import re
import threading
import time

import cv2
import numpy as np
import pytest

from stoker.kernels.cpu.image import decode as K
from stoker.kernels.cpu.image import turbojpeg
from stoker.readers.index import glob_matcher

pytest.importorskip("pylibjxl")  # the libturbojpeg these bugs live behind


def _picture() -> np.ndarray:
    y, x = np.mgrid[0:24, 0:32]
    return np.dstack([x * 8, y * 10, (x + y) * 4]).astype(np.uint8)


def _jpeg(progressive: bool = False) -> bytes:
    params = [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, int(progressive)]
    return cv2.imencode(".jpg", _picture(), params)[1].tobytes()


def _on_one_thread(*calls):
    """Runs the calls in order on one fresh thread (the old code kept a decompressor per
    thread, and the bugs were state carried from one call to the next on it)."""
    results: list = []

    def run() -> None:
        for call in calls:
            try:
                results.append(call())
            except Exception as e:  # noqa: BLE001 - the test inspects it
                results.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return results


def test_a_corrupt_jpeg_header_does_not_poison_later_decodes():
    # Fuzzer: after a header read failed mid-way ("Bogus marker length"), every later
    # JPEG on that thread failed too ("Bogus DQT index 15"), valid ones included.
    good = _jpeg()
    bad = bytearray(good)
    dqt = good.find(b"\xff\xdb")
    bad[dqt + 2:dqt + 4] = b"\x00\x01"  # a marker length shorter than the length field
    first, second, third = _on_one_thread(lambda: K.decode(bytes(bad)),
                                          lambda: K.decode(good), lambda: K.probe(good))
    assert isinstance(first, K.DecodeError) and "Bogus marker length" in str(first)
    assert isinstance(second, np.ndarray) and second.shape == (24, 32, 3)
    assert third.shape() == (24, 32)


def test_a_jpeg_cut_before_its_frame_header_is_refused_after_another_decode():
    # Fuzzer: a JPEG cut inside its quantization tables was "decoded" as an image of the
    # previous JPEG's size (TurboJPEG reports a stream without a frame as a success and
    # keeps the last image's header fields), filled with whatever memory held.
    good = _jpeg()
    cut = good[:good.find(b"\xff\xdb") + 30]
    _, decoded, probed = _on_one_thread(lambda: K.decode(good), lambda: K.decode(cut),
                                        lambda: turbojpeg.header(cut))
    assert isinstance(decoded, K.DecodeError)
    assert "no frame header before the end of the data" in str(decoded)
    assert isinstance(probed, turbojpeg.JpegError)


@pytest.mark.parametrize("where", ["before the second scan", "before the end marker"])
def test_window_decode_accepts_the_warnings_a_full_decode_accepts(where):
    # Fuzzer: stray bytes between the scans of a progressive JPEG (a libjpeg-turbo
    # warning that decoding lets pass) made every window decode fail, so
    # image_random_crop refused files that decoders.image decodes: resetting the
    # cropping region before reading the error cleared TurboJPEG's warning flag.
    data = _jpeg(progressive=True)
    at = [m.start() for m in re.finditer(b"\xff\xda", data)][1] \
        if where == "before the second scan" else len(data) - 2
    data = data[:at] + b"\x00" * 5 + data[at:]
    full = K.decode(data)
    for y, x, h, w in ((4, 8, 10, 12), (0, 0, 8, 32), (0, 8, 24, 12)):
        window = K.decode(data, roi=(y, x, h, w))
        np.testing.assert_array_equal(window, full[y:y + h, x:x + w])
    scaled, _ = K.decode_scaled(data, (6, 8), roi=(4, 8, 16, 20))
    assert scaled.shape == (8, 10, 3)


def test_jpeg_decodes_on_many_threads_at_once():
    # Each call now owns its decompressor: threads never share one.
    data = _jpeg()
    want = K.decode(data)
    results: list = []

    def work() -> None:
        results.extend(np.array_equal(K.decode(data, roi=(2, 3, 10, 11)),
                                      want[2:12, 3:14]) for _ in range(50))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 200 and all(results)


def test_glob_with_many_stars_matches_in_linear_time():
    # Fuzzer seed: a pattern like *a*a*a*...*b against a long name backtracked
    # polynomially (ten stars and thirty a's took 0.7 s; twelve and forty, minutes).
    match = glob_matcher(["*a" * 12 + "*b"], case_sensitive=True)
    start = time.perf_counter()
    assert not match("a" * 40)
    assert not match("a" * 5000 + "c")
    assert match("a" * 12 + "b") and match("xa" * 12 + "yb")
    assert not match("a" * 11 + "b")
    assert time.perf_counter() - start < 0.5


@pytest.mark.parametrize("pattern, name, expected", [
    ("*.jpg", "a.jpg", True), ("*.jpg", ".jpg", True), ("a*b*c", "abc", True),
    ("a*b*c", "aXbYbZc", True), ("a*b*c", "acb", False), ("*?x", "x", False),
    ("*[0-9]?*z", "a1bz", True), ("*[0-9]?*z", "a1z", False), ("**", "", True),
    ("a*", "a", True), ("*a", "ba", True), ("*ab*ab", "abab", True),
    ("*ab*ab", "aab", False), ("x*\\*", "xy*", True), ("x*\\*", "xy", False),
])
def test_glob_star_segments_keep_fnmatch_semantics(pattern, name, expected):
    assert glob_matcher([pattern], case_sensitive=True)(name) is expected


def _png() -> bytes:
    return cv2.imencode(".png", _picture())[1].tobytes()


def test_png_chunk_longer_than_the_data_is_refused_without_allocating_it():
    # Fuzzer: a 71-byte PNG whose IDAT length field says 1.3 GB made OpenCV allocate and
    # fill 1.3 GB for a second before refusing it (a few such files, one per thread,
    # and a loader is killed for memory).
    data = bytearray(_png())
    idat = data.find(b"IDAT") - 4
    data[idat:idat + 4] = (0x4F82_0000).to_bytes(4, "big")
    start = time.perf_counter()
    with pytest.raises(K.DecodeError, match=r"PNG chunk b'IDAT' at byte \d+ claims "
                                             r"1333919744 bytes, but the data ends"):
        K.decode(bytes(data))
    assert time.perf_counter() - start < 0.1


def test_cut_short_png_is_refused_by_decode_but_still_probed():
    # probe reads only the header (DALI's peek_image_shape gives a cut-short PNG's shape).
    data = _png()[:-40]
    assert K.probe(data).shape() == (24, 32)
    with pytest.raises(K.DecodeError, match="corrupt or cut short"):
        K.decode(data)

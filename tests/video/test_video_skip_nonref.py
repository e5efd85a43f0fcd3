"""Frames nobody refers to are not decoded when a clip does not want them (H.264 NAL
``nal_ref_idc``, kernels/cpu/video/nal.py): fewer frames decoded, the same frames out."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

pytest.importorskip("av")

from stoker.kernels.cpu.video.decode import Decoder, decode_into  # noqa: E402
from stoker.kernels.cpu.video.nal import is_non_reference, packet_layout  # noqa: E402
from stoker.readers.video_index import scan  # noqa: E402
from stoker.readers.video_synth import frame_indices  # noqa: E402

VIDEOS = pathlib.Path(__file__).parents[1] / "data" / "video"


def test_nal_ref_idc_is_read_from_length_prefixed_and_start_code_packets():
    ref_slice, nonref_slice, sei = 0x65, 0x01, 0x06  # IDR (ref_idc 3), non-IDR ref_idc 0
    avcc = b"".join(len(b).to_bytes(4, "big") + b for b in (bytes([sei, 9, 9]),
                                                            bytes([nonref_slice, 1, 2])))
    assert is_non_reference(avcc, 4)
    annexb = b"\x00\x00\x00\x01" + bytes([sei, 5]) + b"\x00\x00\x01" + bytes([0x41, 7])
    assert not is_non_reference(annexb, 0)  # 0x41: a non-IDR slice with ref_idc 2
    assert not is_non_reference(b"\x00\x00\x01" + bytes([sei, 1]), 0)  # no slice at all
    assert not is_non_reference(b"\x00\x00\x01" + bytes([ref_slice]) + b"\x00\x00\x01"
                                + bytes([nonref_slice]), 0)  # one reference slice is enough


@pytest.mark.parametrize("name", ["h264_bframes.mp4", "h264_opengop.ts", "h264_vfr.mkv"])
def test_strided_clips_skip_non_reference_frames_and_hold_the_right_ones(name):
    path = str(VIDEOS / name)
    index = scan(path, path)
    out = np.empty((6, index.height, index.width, 3), np.uint8)
    decoded = {}
    for skip in (True, False):
        dec = Decoder(path, index)
        if not skip:
            dec.layout = None
        assert skip == (dec.layout is not None)
        for start in (1, 15, 4, 26):
            frames = start + 2 * np.arange(6)
            frames[frames >= index.n_frames] = -1
            decode_into(dec, frames, None, False, out)
            assert [frame_indices(out[i:i + 1])[0] for i in range(6) if frames[i] >= 0] == \
                [f for f in frames.tolist() if f >= 0]
        decoded[skip] = dec.decoded
        assert (dec.skipped > 0) == skip
        dec.close()
    assert decoded[True] < decoded[False]


def test_streams_other_than_h264_or_without_timestamps_decode_every_packet():
    for name in ("hevc.mp4", "vp9_cfr.webm", "h264_raw.h264"):
        path = str(VIDEOS / name)
        dec = Decoder(path, scan(path, path))
        assert dec.layout is None, name
        dec.close()
    path = str(VIDEOS / "h264_bframes.mp4")
    import av

    with av.open(path) as c:
        assert packet_layout(c.streams.video[0]) == 4

"""Frames nobody refers to are not decoded when a clip does not want them (H.264's
``nal_ref_idc``, HEVC's sub-layer non-reference NAL types in one-sub-layer streams;
kernels/cpu/video/nal.py): fewer frames decoded, the same frames out."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

pytest.importorskip("av")

from stoker.kernels.cpu.video.decode import Decoder, decode_into  # noqa: E402
from stoker.kernels.cpu.video.nal import NalLayout, is_non_reference, packet_layout  # noqa: E402
from stoker.readers.video_index import scan  # noqa: E402
from stoker.readers.video_synth import frame_indices  # noqa: E402

VIDEOS = pathlib.Path(__file__).parents[1] / "data" / "video"


def test_nal_ref_idc_is_read_from_length_prefixed_and_start_code_packets():
    ref_slice, nonref_slice, sei = 0x65, 0x01, 0x06  # IDR (ref_idc 3), non-IDR ref_idc 0
    avcc = b"".join(len(b).to_bytes(4, "big") + b for b in (bytes([sei, 9, 9]),
                                                            bytes([nonref_slice, 1, 2])))
    h264 = NalLayout("h264", 4)
    assert is_non_reference(avcc, h264)
    annexb = b"\x00\x00\x00\x01" + bytes([sei, 5]) + b"\x00\x00\x01" + bytes([0x41, 7])
    annexb_h264 = NalLayout("h264", 0)
    assert not is_non_reference(annexb, annexb_h264)  # 0x41: a non-IDR slice, ref_idc 2
    assert not is_non_reference(b"\x00\x00\x01" + bytes([sei, 1]), annexb_h264)  # no slice
    assert not is_non_reference(b"\x00\x00\x01" + bytes([ref_slice]) + b"\x00\x00\x01"
                                + bytes([nonref_slice]), annexb_h264)  # one reference slice


def _hevc_nal(kind: int, temporal_id: int = 0) -> bytes:
    """A length-prefixed HEVC NAL unit of ``kind`` (two header bytes and a payload byte)."""
    unit = bytes([kind << 1, temporal_id + 1, 0xAF])
    return len(unit).to_bytes(4, "big") + unit


@pytest.mark.parametrize("kinds, non_reference", [
    ((0,), True),  # TRAIL_N
    ((8,), True),  # RASL_N
    ((2, 4, 6), True),  # TSA_N, STSA_N, RADL_N
    ((39, 0), True),  # a prefix SEI, then a TRAIL_N slice
    ((1,), False),  # TRAIL_R
    ((9,), False),  # RASL_R
    ((19,), False),  # IDR_W_RADL (type 19: odd, but every IRAP is a reference)
    ((20,), False),  # CRA_NUT (type 20: even, and still a reference)
    ((0, 1), False),  # one reference slice is enough
    ((32, 33, 34), False),  # parameter sets, no slice
])
def test_hevc_sub_layer_non_reference_types_are_read_from_the_nal_headers(kinds, non_reference):
    packet = b"".join(_hevc_nal(k) for k in kinds)
    assert is_non_reference(packet, NalLayout("hevc", 4)) == non_reference


@pytest.mark.parametrize("name", ["h264_bframes.mp4", "h264_opengop.ts", "h264_vfr.mkv",
                                  "hevc.mp4", "hevc_10bit.mkv"])
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


def test_streams_other_than_h264_or_hevc_or_without_timestamps_decode_every_packet():
    for name in ("vp9_cfr.webm", "av1.mkv", "mpeg4.avi", "h264_raw.h264"):
        path = str(VIDEOS / name)
        dec = Decoder(path, scan(path, path))
        assert dec.layout is None, name
        dec.close()
    import av

    for name, layout in (("h264_bframes.mp4", NalLayout("h264", 4)),
                         ("h264_opengop.ts", NalLayout("h264", 0)),
                         ("hevc.mp4", NalLayout("hevc", 4))):
        with av.open(str(VIDEOS / name)) as c:
            assert packet_layout(c.streams.video[0]) == layout, name


class _Stream:
    """A stand-in for a PyAV stream: its codec context's name and extradata."""

    def __init__(self, name: str, extradata: bytes):
        self.codec_context = type("Ctx", (), {"name": name, "extradata": extradata})()


def test_hevc_streams_of_several_or_unknown_sub_layers_decode_every_packet():
    import av

    with av.open(str(VIDEOS / "hevc.mp4")) as c:
        hvcc = bytearray(c.streams.video[0].codec_context.extradata)
    assert packet_layout(_Stream("hevc", bytes(hvcc))) == NalLayout("hevc", 4)
    for layers in (0, 2, 3):  # numTemporalLayers: unknown, or more than one sub-layer
        hvcc[21] = (hvcc[21] & ~0x38) | (layers << 3)
        assert packet_layout(_Stream("hevc", bytes(hvcc))) is None, layers
    assert packet_layout(_Stream("hevc", b"\x00\x00\x00\x01\x40\x01")) is None  # Annex B

"""Which H.264 and HEVC packets no other frame refers to, read from their NAL unit headers.

A random clip starts on average half a GOP after its key frame, and a clip with a stride
skips frames inside it: every frame on the way has to be decoded only if another frame
refers to it. FFmpeg's own ``skip_frame=NONREF`` leaves such frames out inside the
decoder, but for every frame, wanted or not; a decoder that is not going to show a
frame need only not be given it. With x264's default B-frames that is a third to a half
of the frames on the way (measured: 134 of 300 on a GOP-30 clip).

* H.264: a picture whose slices all have ``nal_ref_idc == 0`` is never a reference
  (ITU-T H.264 7.4.1).
* HEVC: a *sub-layer non-reference* picture (the even slice NAL types below 16: TRAIL_N,
  TSA_N, STSA_N, RADL_N, RASL_N and the reserved N types) is not a reference for pictures
  of its own temporal sub-layer, but may be one for a higher sub-layer's (ITU-T H.265,
  NAL unit header semantics, 7.4.2.2). So HEVC packets are read only in streams of one
  temporal sub-layer, which the ``hvcC`` record's ``numTemporalLayers`` says (x265's
  default); other HEVC streams (several sub-layers, an unknown count, Annex B without
  ``hvcC``) decode every packet.

Packets come either length-prefixed (mp4, mkv, mov: "AVCC" / "hvcC", the length size in
the stream's extradata) or with start codes (MPEG-TS, raw streams: "Annex B").
"""

from __future__ import annotations

from typing import Any, NamedTuple

H264_SLICES = (1, 5)  # coded slice of a non-IDR / IDR picture
HEVC_VCL_END = 32  # NAL types below this are slices (VCL); 16-31 are random access points


class NalLayout(NamedTuple):
    codec: str  # "h264" or "hevc"
    size: int  # the NAL length prefix's size in bytes (1-4), 0 for Annex B start codes


def packet_layout(stream: Any) -> NalLayout | None:
    """How the stream's packets carry NAL units, or None where this module cannot tell
    references apart (not H.264 or single-sub-layer HEVC)."""
    ctx = stream.codec_context
    extra = bytes(ctx.extradata or b"")
    if ctx.name == "h264":
        if len(extra) >= 7 and extra[0] == 1:  # an avcC record
            return NalLayout("h264", (extra[4] & 3) + 1)
        return NalLayout("h264", 0)
    if ctx.name == "hevc" and len(extra) >= 23 and extra[0] == 1:  # an hvcC record
        if (extra[21] >> 3) & 7 == 1:  # numTemporalLayers: exactly one sub-layer
            return NalLayout("hevc", (extra[21] & 3) + 1)
    return None


def _nal_starts(data: bytes, size: int) -> list[int]:
    """The offset of every NAL unit's header in a packet."""
    starts = []
    n = len(data)
    if size:
        i = 0
        while i + size < n:
            length = int.from_bytes(data[i:i + size], "big")
            if length <= 0:
                break
            starts.append(i + size)
            i += size + length
        return starts
    i = data.find(b"\x00\x00\x01")
    while 0 <= i < n - 3:
        starts.append(i + 3)
        i = data.find(b"\x00\x00\x01", i + 3)
    return starts


def is_non_reference(data: bytes, layout: NalLayout) -> bool:
    """True when the packet holds slices and none of them is a reference picture's."""
    starts = _nal_starts(data, layout.size)
    if layout.codec == "h264":
        slices = [data[s] for s in starts if data[s] & 0x1F in H264_SLICES]
        return bool(slices) and all((h >> 5) & 3 == 0 for h in slices)
    types = [(data[s] >> 1) & 0x3F for s in starts]
    slices = [t for t in types if t < HEVC_VCL_END]
    return bool(slices) and all(t < 16 and t % 2 == 0 for t in slices)

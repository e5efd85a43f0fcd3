"""JPEG compression artifacts: encode at a quality, decode again, with OpenCV.

DALI's CPU operator round-trips through OpenCV's codec with the image in BGR order, so the
chroma subsampling sees the channels that way; doing the same gives DALI's output bit for
bit (measured on natural images, qualities 1-100).
"""

from __future__ import annotations

import numpy as np


def jpeg_roundtrip(rgb: np.ndarray, quality: int) -> np.ndarray:
    """One (H, W, 3) uint8 RGB image after JPEG compression at ``quality`` (clamped 1-100)."""
    import cv2

    q = int(min(max(quality, 1), 100))
    bgr = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)
    ok, data = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:
        raise RuntimeError("OpenCV could not encode the image as JPEG")
    rgb_flag = getattr(cv2, "IMREAD_COLOR_RGB", None)  # OpenCV >= 4.10
    if rgb_flag is not None:
        return cv2.imdecode(data, rgb_flag)
    return cv2.cvtColor(cv2.imdecode(data, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)

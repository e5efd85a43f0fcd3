"""paste (CPU; DALI has it on the GPU only): canvas size and placement per DALI's rules."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def
from stoker.kernels.cpu.image.paste import paste_geometry


def run(samples: list, **kwargs) -> list:
    @pipeline_def(batch_size=len(samples), num_threads=1, device_id=None)
    def pipe():
        return fn.paste(fn.external_source(source=lambda: samples, layout="HWC"), **kwargs)

    p = pipe()
    p.build()
    return [np.array(s) for s in p.run()[0]]


def test_canvas_is_truncated_ratio_times_size_and_at_least_min_canvas():
    assert paste_geometry((10, 20), 1.55, 0.5, 0.5, 0) == (15, 31, 2, 5)
    assert paste_geometry((10, 20), 1.0, 0.5, 0.5, 25) == (25, 25, 7, 2)
    assert paste_geometry((10, 20), 2.0, 0.0, 1.0, 0) == (20, 40, 10, 0)


def test_image_lands_at_its_position_on_a_filled_canvas():
    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3) + 1
    out = run([img], ratio=2.0, fill_value=[7, 8, 9], paste_x=1.0, paste_y=0.0)[0]
    assert out.shape == (4, 6, 3)
    np.testing.assert_array_equal(out[0:2, 3:6], img)
    mask = np.ones((4, 6), bool)
    mask[0:2, 3:6] = False
    assert (out[mask] == [7, 8, 9]).all()


def test_single_fill_value_is_repeated_and_wrong_lengths_rejected():
    out = run([np.zeros((2, 2, 3), np.uint8)], ratio=1.5, fill_value=[5])[0]
    assert out.shape == (3, 3, 3) and out[2, 2].tolist() == [5, 5, 5]
    with pytest.raises(Exception, match="'fill_value' must have 1 or n_channels=3 values"):
        run([np.zeros((2, 2, 3), np.uint8)], ratio=1.5, fill_value=[5, 6])

"""The calls tests/data/record/image_effects.py records from DALI and
tests/image/test_effects_vs_dali.py replays on stoker: name -> inputs and a function
``call(fn, types, *nodes)`` written once for both libraries."""

from __future__ import annotations

import numpy as np

_RNG = np.random.default_rng(2024)
HWC = [_RNG.integers(0, 256, (23, 31, 3), dtype=np.uint8),
       _RNG.integers(0, 256, (17, 12, 3), dtype=np.uint8)]
HW = [x[..., 1].copy() for x in HWC]
F32 = [(x.astype(np.float32) - 128) / 7 for x in HWC]
K3 = [np.array([[0, 1, 0], [0, 0, 2], [0, 0, 0]], np.float32),
      np.array([[1, 2, 1], [0, 0, 0], [-1, -2, -1]], np.float32) / 4]
K24 = [np.full((2, 4), 0.125, np.float32), np.arange(8, dtype=np.float32).reshape(2, 4) / 20]
VOL = [_RNG.integers(0, 256, (5, 6, 7, 2), dtype=np.uint8)]
PHOTO = [np.clip(_RNG.normal(90, 25, (40, 52, 3)), 0, 255).astype(np.uint8),
         np.clip(_RNG.normal(160, 15, (33, 29, 3)), 0, 255).astype(np.uint8)]
RAW = [_RNG.integers(0, 256, (12, 16), dtype=np.uint8),
       _RNG.integers(0, 256, (6, 10), dtype=np.uint8)]
SIG = [_RNG.normal(size=(3, 30)).astype(np.float32), _RNG.normal(size=(2, 17)).astype(np.float32)]
M = [0.9, 0.1, 2.0, -0.05, 1.1, -1.0, 0.001, 0.002, 1.0]
SEQ = [np.stack([HWC[0], HWC[0][::-1].copy()])]


def _case(data: list, call, layout: str = "HWC") -> dict:
    return {"data": data, "call": call, "layout": layout}


CASES = {
    "filter_hwc": _case([HWC, K3], lambda fn, t, x, k: fn.filter(x, k)),
    "filter_even_f32": _case([F32, K24], lambda fn, t, x, k: fn.filter(x, k)),
    "filter_valid": _case([HWC, K24], lambda fn, t, x, k: fn.filter(x, k, mode="valid")),
    "filter_const_fill": _case(
        [HWC, K3, [np.uint8(9), np.uint8(200)]],
        lambda fn, t, x, k, f: fn.filter(x, k, f, border="constant", dtype=t.FLOAT)),
    "filter_wrap": _case([HW, K24], lambda fn, t, x, k: fn.filter(x, k, border="wrap"), "HW"),
    "filter_clamp_anchor": _case(
        [HW, K3], lambda fn, t, x, k: fn.filter(x, k, border="clamp", anchor=[0, 2]), "HW"),
    "filter_reflect_1001": _case(
        [HWC, K24], lambda fn, t, x, k: fn.filter(x, k, border="reflect_1001")),
    "filter_chw": _case([[x.transpose(2, 0, 1).copy() for x in HWC], K3],
                        lambda fn, t, x, k: fn.filter(x, k), "CHW"),
    "filter_fhwc": _case([SEQ, K3[:1]], lambda fn, t, x, k: fn.filter(x, k), "FHWC"),
    "laplacian_hwc": _case([HWC], lambda fn, t, x: fn.laplacian(x)),
    "laplacian_float": _case([HWC], lambda fn, t, x: fn.laplacian(
        x, window_size=5, dtype=t.FLOAT)),
    "laplacian_per_axis": _case([F32], lambda fn, t, x: fn.laplacian(
        x, window_size=[3, 5], smoothing_size=[1, 3], scale=[0.5, 2.0])),
    "laplacian_normalized": _case([HW], lambda fn, t, x: fn.laplacian(
        x, window_size=7, smoothing_size=5, normalized_kernel=True, dtype=t.FLOAT), "HW"),
    "laplacian_volume": _case([VOL], lambda fn, t, x: fn.laplacian(x, dtype=t.FLOAT), "DHWC"),
    "water": _case([HWC], lambda fn, t, x: fn.water(x)),
    "water_linear": _case([F32], lambda fn, t, x: fn.water(
        x, interp_type=t.INTERP_LINEAR, ampl_x=4.0, freq_y=0.3, phase_x=0.7, fill_value=-2.0)),
    "sphere": _case([HWC], lambda fn, t, x: fn.sphere(x)),
    "sphere_linear": _case([HWC], lambda fn, t, x: fn.sphere(
        x, interp_type=t.INTERP_LINEAR, fill_value=50.0)),
    "warp_perspective": _case([HWC], lambda fn, t, x: fn.experimental.warp_perspective(
        x, matrix=M)),
    "warp_perspective_nn_size_fill": _case([HWC], lambda fn, t, x: (
        fn.experimental.warp_perspective(x, matrix=M, size=[15.0, 20.0], fill_value=[9.0, 99.0,
                                         199.0], interp_type=t.INTERP_NN))),
    "warp_perspective_cubic_replicate": _case([F32], lambda fn, t, x: (
        fn.experimental.warp_perspective(x, matrix=M, interp_type=t.INTERP_CUBIC,
                                         border_mode="replicate"))),
    "warp_perspective_forward_reflect": _case([HWC], lambda fn, t, x: (
        fn.experimental.warp_perspective(x, matrix=M, inverse_map=False,
                                         border_mode="reflect_101"))),
    "warp_perspective_center_wrap_chw": _case(
        [[x.transpose(2, 0, 1).copy() for x in HWC]],
        lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=M, pixel_origin="center",
                                                          border_mode="wrap"), "CHW"),
    "warp_perspective_input_fhwc": _case(
        [SEQ, [np.array(M, np.float32).reshape(3, 3)]],
        lambda fn, t, x, m: fn.experimental.warp_perspective(x, m, fill_value=[50.0]), "FHWC"),
    "warp_perspective_hw": _case([HW], lambda fn, t, x: fn.experimental.warp_perspective(
        x, matrix=M, border_mode="reflect"), "HW"),
    "debayer_bg": _case([RAW], lambda fn, t, x: fn.debayer(x, blue_position=[0, 0]), "HW"),
    "debayer_gr_ea_u16": _case([[x.astype(np.uint16) * 250 for x in RAW]], lambda fn, t, x: (
        fn.debayer(x, blue_position=[1, 0], algorithm="edgeaware_ocv")), "HW"),
    "debayer_vng_fhwc": _case([[np.stack([RAW[0], RAW[0][::-1]])[..., None]]],
                              lambda fn, t, x: fn.debayer(x, blue_position=[1, 1],
                                                          algorithm="vng_ocv"), "FHWC"),
    "debayer_gray": _case([RAW], lambda fn, t, x: fn.debayer(x, blue_position=[0, 1],
                                                             algorithm="gray_ocv"), "HW"),
    "clahe_luma": _case([PHOTO], lambda fn, t, x: fn.clahe(x, tiles_x=4, tiles_y=3,
                                                          clip_limit=2.0)),
    "clahe_channels": _case([PHOTO], lambda fn, t, x: fn.clahe(
        x, tiles_x=5, tiles_y=5, clip_limit=3.5, luma_only=False)),
    "clahe_gray": _case([[p[..., 1:2].copy() for p in PHOTO]], lambda fn, t, x: fn.clahe(
        x, tiles_x=2, tiles_y=6, clip_limit=1.0)),
    "tensor_resize_hw": _case([HWC], lambda fn, t, x: fn.tensor_resize(
        x, sizes=[11, 40], axes=[0, 1])),
    "tensor_resize_one_axis": _case([HWC], lambda fn, t, x: fn.tensor_resize(
        x, sizes=[7], axes=[1])),
    "tensor_resize_scales_trunc": _case([F32], lambda fn, t, x: fn.tensor_resize(
        x, scales=[0.33, 1.7], axes=[0, 1], size_rounding="truncate")),
    "tensor_resize_scales_round": _case([HWC], lambda fn, t, x: fn.tensor_resize(
        x, scales=[0.45, 0.61], axis_names="HW")),
    "tensor_resize_chw_nn": _case([[x.transpose(2, 0, 1).copy() for x in HWC]],
                                  lambda fn, t, x: fn.tensor_resize(
                                      x, sizes=[9, 13], axis_names="HW",
                                      interp_type=t.INTERP_NN), "CHW"),
    "tensor_resize_seq_float": _case([SEQ], lambda fn, t, x: fn.tensor_resize(
        x, sizes=[20, 25], axes=[-3, -2], dtype=t.FLOAT, antialias=False), "FHWC"),
    "tensor_resize_plain": _case([[s.astype(np.float32) for s in SIG]],
                                 lambda fn, t, x: fn.experimental.tensor_resize(
                                     x, sizes=[5], axes=[1]), ""),
    # Not an image operator, but recorded the same way.
    "power_spectrum": _case([SIG], lambda fn, t, x: fn.power_spectrum(x), ""),
    "power_spectrum_nfft_axis0": _case([SIG], lambda fn, t, x: fn.power_spectrum(
        x, nfft=7, axis=0, power=1), "ct"),
    "power_spectrum_long_nfft": _case([SIG], lambda fn, t, x: fn.power_spectrum(x, nfft=40), ""),
}


def inputs_of(case: dict) -> tuple[list[list[np.ndarray]], str]:
    return [[np.asarray(s) for s in samples] for samples in case["data"]], case["layout"]

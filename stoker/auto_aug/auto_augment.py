"""AutoAugment (https://arxiv.org/abs/1805.09501): each sample takes one sub-policy, drawn
uniformly, and runs its steps in order, each with its probability, at its magnitude bin.
The ImageNet policy is the paper's (DALI's ``get_image_net_policy``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import fn, types
from stoker.auto_aug import augmentations as a
from stoker.auto_aug.core import Augmentation, Policy, check_unused, select, signed_bin
from stoker.graph.node import user_frame
from stoker.pipeline.conditionals.runtime import if_stmt

POLICIES = ("image_net",)


def auto_augment(data: Any, policy_name: str = "image_net", shape: Any = None,
                 fill_value: int | None = 128, interp_type: Any = None,
                 max_translate_abs: Any = None, max_translate_rel: Any = None,
                 seed: int | None = None) -> Any:
    if policy_name not in POLICIES:
        raise ValueError(f"auto_augment: policy_name must be one of {', '.join(POLICIES)} "
                         f"(stoker has DALI's ImageNet policy only), got {policy_name!r}")
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if shape is not None:
        kwargs["shape"] = shape
    policy = get_image_net_policy(shape is not None, max_translate_abs, max_translate_rel)
    return apply_auto_augment(policy, data, seed, **kwargs)


def auto_augment_image_net(data: Any, shape: Any = None, fill_value: int | None = 128,
                           interp_type: Any = None, max_translate_abs: Any = None,
                           max_translate_rel: Any = None, seed: int | None = None) -> Any:
    return auto_augment(data, "image_net", shape, fill_value, interp_type, max_translate_abs,
                        max_translate_rel, seed)


def _tables(policy: Policy) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[list]]:
    """Per (sub-policy, step): probability, magnitude bin, index into the step's list of
    distinct augmentations (whose last entry, identity, pads shorter sub-policies)."""
    subs = policy.sub_policies
    steps = max(len(sub) for sub in subs)
    prob = np.zeros((len(subs), steps), np.float32)
    mags = np.zeros((len(subs), steps), np.int32)
    per_step: list[list[Augmentation]] = []
    for k in range(steps):
        distinct: list[Augmentation] = []
        for sub in subs:
            if k < len(sub) and all(sub[k][0] is not d for d in distinct):
                distinct.append(sub[k][0])
        per_step.append([*distinct, a.identity])
    ids = np.array([[len(per_step[k]) - 1 for k in range(steps)] for _ in subs], np.int32)
    for i, sub in enumerate(subs):
        for k, (aug, p, mag) in enumerate(sub):
            prob[i, k] = p
            mags[i, k] = 0 if mag is None else mag
            ids[i, k] = next(j for j, d in enumerate(per_step[k]) if d is aug)
    return prob, mags, ids, per_step


def apply_auto_augment(policy: Policy, data: Any, seed: int | None = None,
                       **kwargs: Any) -> Any:
    if not policy.sub_policies:
        raise ValueError(f"apply_auto_augment: {policy!r} has no sub-policies")
    prob, mags, ids, per_step = _tables(policy)
    steps = prob.shape[1]
    seed_arg = -1 if seed is None else seed
    draws = fn.random.uniform(range=[0, 1], shape=(steps,), dtype=types.FLOAT, seed=seed_arg)
    sub_id = fn.random.uniform(values=list(range(len(policy.sub_policies))), dtype=types.INT32,
                               seed=seed_arg)
    run_prob = types.Constant(prob)[sub_id]
    magnitude_bins: Any = types.Constant(mags)[sub_id]
    aug_ids = types.Constant(ids)[sub_id]
    if any(aug.randomly_negate for aug in policy.augmentations.values()):
        magnitude_bins = signed_bin(magnitude_bins, seed=seed, shape=(steps,))
    check_unused(list(policy.augmentations.values()), kwargs, "apply_auto_augment")
    where = user_frame()
    for k in range(steps):
        def run(k: int = k, data: Any = data) -> tuple:
            return (select(per_step[k], aug_ids[k], data, magnitude_bin=magnitude_bins[k],
                           num_magnitude_bins=policy.num_magnitude_bins, **kwargs),)
        data = if_stmt(draws[k] < run_prob[k], run, lambda data=data: (data,), ("data",), (),
                       where)[0]
    return data


def get_image_net_policy(use_shape: bool = False, max_translate_abs: Any = None,
                         max_translate_rel: Any = None) -> Policy:
    _, translate_y = a.get_translations(use_shape, 250, 1.0, max_translate_abs,
                                        max_translate_rel)
    shear_x = a.shear_x.augmentation((0, 0.3), True)
    shear_y = a.shear_y.augmentation((0, 0.3), True)
    rotate = a.rotate.augmentation((0, 30), True)
    color = a.color.augmentation((0.1, 1.9), False, None)
    posterize = a.posterize.augmentation((0, 4), False, a.poster_mask_uint8)
    solarize = a.solarize.augmentation((0, 256), False)
    solarize_add = a.solarize_add.augmentation((0, 110), False)
    invert, equalize, auto_contrast = a.invert, a.equalize, a.auto_contrast
    return Policy("ImageNetPolicy", 11, [
        [(equalize, 0.8, None), (shear_y, 0.8, 4)],
        [(color, 0.4, 9), (equalize, 0.6, None)],
        [(color, 0.4, 1), (rotate, 0.6, 8)],
        [(solarize, 0.8, 3), (equalize, 0.4, None)],
        [(solarize, 0.4, 2), (solarize, 0.6, 2)],
        [(color, 0.2, 0), (equalize, 0.8, None)],
        [(equalize, 0.4, None), (solarize_add, 0.8, 3)],
        [(shear_x, 0.2, 9), (rotate, 0.6, 8)],
        [(color, 0.6, 1), (equalize, 1.0, None)],
        [(invert, 0.4, None), (rotate, 0.6, 0)],
        [(equalize, 1.0, None), (shear_y, 0.6, 3)],
        [(color, 0.4, 7), (equalize, 0.6, None)],
        [(posterize, 0.4, 6), (auto_contrast, 0.4, None)],
        [(solarize, 0.6, 8), (color, 0.6, 9)],
        [(solarize, 0.2, 4), (rotate, 0.8, 9)],
        [(rotate, 1.0, 7), (translate_y, 0.8, 9)],
        [(solarize, 0.8, 4)],
        [(shear_y, 0.8, 0), (color, 0.6, 4)],
        [(color, 1.0, 0), (rotate, 0.6, 2)],
        [(equalize, 0.8, None)],
        [(equalize, 1.0, None), (auto_contrast, 0.6, None)],
        [(shear_y, 0.4, 7), (solarize_add, 0.6, 7)],
        [(posterize, 0.8, 2), (solarize, 0.6, 10)],
        [(solarize, 0.6, 8), (equalize, 0.6, None)],
        [(color, 0.8, 6), (rotate, 0.4, 5)],
    ])

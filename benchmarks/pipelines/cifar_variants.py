"""The CIFAR-like pipeline of `stoker bench cifar` with a float16 output (mixed
precision). Written against DALI's API; `stoker bench` runs it with stoker and with DALI:

    cd <checkout>
    env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$PWD /work/bench-venv/bin/python \\
        -m stoker.cli.main bench benchmarks/pipelines/cifar_variants.py:cifar_fp16 \\
        --compare dali --batch-size 64
"""

import numpy as np

from stoker import fn, pipeline_def, types

MEAN, STD = [125.307, 122.961, 113.8575], [51.5865, 50.847, 51.255]
# Smooth random 32x32 fields, as stoker.cli.pipelines.cifar_images makes them.
_coarse = np.random.default_rng(0).integers(0, 256, size=(2048, 8, 8, 3), dtype=np.uint8)
IMAGES = np.repeat(np.repeat(_coarse, 4, axis=1), 4, axis=2)


BATCH = 64  # (run it with --batch-size 64: the source gives batches of this size)


def _batches(info):
    i = info.iteration % (len(IMAGES) // BATCH)
    return IMAGES[i * BATCH:(i + 1) * BATCH]


@pipeline_def(seed=1)
def cifar_fp16():
    imgs = fn.external_source(source=_batches, batch=True, batch_info=True, layout="HWC")
    padded = fn.crop(imgs, crop=(40, 40), out_of_bounds_policy="pad", fill_values=0)
    return fn.crop_mirror_normalize(
        padded, crop=(32, 32), crop_pos_x=fn.random.uniform(range=(0.0, 1.0)),
        crop_pos_y=fn.random.uniform(range=(0.0, 1.0)), mirror=fn.random.coin_flip(),
        mean=MEAN, std=STD, dtype=types.FLOAT16, output_layout="CHW")

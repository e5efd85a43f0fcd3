"""The ResNet-50 train pipeline with the outputs DALI's examples also ask for: float16
(mixed precision) and HWC (TensorFlow, JAX). Written against DALI's API; `stoker bench`
runs it with stoker and with DALI:

    cd <checkout>
    STOKER_BENCH_DATA=/work/ds200 env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$PWD \\
        /work/bench-venv/bin/python -m stoker.cli.main bench \\
        benchmarks/pipelines/train_variants.py:train_fp16 --compare dali --batch-size 64

The folder is STOKER_BENCH_DATA (default: data/sample, which `make demo` writes).
"""

import os

from stoker import fn, pipeline_def, types

ROOT = os.environ.get("STOKER_BENCH_DATA", "data/sample")
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def _train(dtype, layout):
    jpegs, labels = fn.readers.file(file_root=ROOT, random_shuffle=True, seed=1, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB)
    images = fn.resize(images, resize_x=224, resize_y=224)
    images = fn.crop_mirror_normalize(images, dtype=dtype, output_layout=layout, mean=MEAN,
                                      std=STD, mirror=fn.random.coin_flip())
    return images, labels


@pipeline_def(seed=1)
def train_fp16():
    return _train(types.FLOAT16, "CHW")


@pipeline_def(seed=1)
def train_hwc():
    return _train(types.FLOAT, "HWC")

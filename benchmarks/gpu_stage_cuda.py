"""On a CUDA machine: what the batched GPU stage (issue 21) does per batch on the device, to
check what CI can only count on CPU tensors. For the ResNet-50 train and val pipelines
(mixed decoder -> resize -> crop_mirror_normalize, fused on the GPU), at two batch sizes:

- kernel launches and host-to-device copies per batch (``torch.profiler``: the CUDA
  runtime's launch and memcpy calls during steady-state batches), which must not grow
  with the batch beyond the mixed decoder's own;
- host waits: ``torch.cuda.set_sync_debug_mode("warn")`` during steady-state batches
  (torch warns for each synchronizing call it makes; library-internal waits, such as
  nvImageCodec's, are not seen);
- images/s of the pipeline and of the GPU part alone (``STOKER_MIXED_DECODER=cpu`` keeps
  the decoder out of the way).

    python benchmarks/gpu_stage_cuda.py --batches 64,256 --images 512    # ~2 minutes
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def make_pipe(kind: str, root: str, batch: int):
    from stoker import fn, pipeline_def, types

    @pipeline_def(batch_size=batch, num_threads=8, device_id=0, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=1)
        if kind == "train":
            images = fn.decoders.image_random_crop(jpegs, device="mixed",
                                                   output_type=types.RGB)
            images = fn.resize(images, resize_x=224, resize_y=224)
            mirror = fn.random.coin_flip()
            crop = None
        else:
            images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
            images = fn.resize(images, resize_shorter=256)
            mirror, crop = 0, (224, 224)
        return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                        crop=crop, mean=MEAN, std=STD, mirror=mirror), labels

    return pipe()


def steady(pipe, batches: int) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):  # warm-up: kernels loaded, decoder chosen, pools filled
        pipe.run()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            start = time.perf_counter()
            for _ in range(batches):
                images, _ = pipe.run()
                images.as_torch()
            torch.cuda.synchronize()
            seconds = time.perf_counter() - start
    torch.cuda.set_sync_debug_mode(0)
    calls: collections.Counter = collections.Counter()
    for e in prof.events():
        if e.name in ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC",
                      "cudaMemcpyAsync", "cudaMemcpy", "cudaStreamSynchronize",
                      "cudaDeviceSynchronize", "cudaEventSynchronize"):
            calls[e.name] += 1
    syncs = [str(w.message)[:80] for w in caught if "synchroniz" in str(w.message)]
    return {"seconds": seconds, "calls": {k: v / batches for k, v in calls.items()},
            "sync_warnings": len(syncs), "first_sync": syncs[:1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--images", type=int, default=512)
    parser.add_argument("--batches", default="64,256")
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU (on CPU tensors: benchmarks/gpu_stage_proxies.py)")
    from gpu_train import write_jpegs

    root = opts.data or write_jpegs(Path(tempfile.mkdtemp()), opts.images, 375, 500)
    for decoder in ("cpu", None):  # the GPU part alone, then with the GPU decoder
        if decoder:
            os.environ["STOKER_MIXED_DECODER"] = decoder
        else:
            os.environ.pop("STOKER_MIXED_DECODER", None)
        for kind in ("train", "val"):
            for batch in (int(b) for b in opts.batches.split(",")):
                pipe = make_pipe(kind, str(root), batch)
                got = steady(pipe, opts.runs)
                pipe.close()
                rate = batch * opts.runs / got["seconds"]
                calls = ", ".join(f"{k} {v:.0f}" for k, v in sorted(got["calls"].items()))
                print(f"{kind:5} batch {batch:4d} decoder {decoder or 'gpu':3}: "
                      f"{rate:8.0f} images/s; per batch: {calls}; "
                      f"sync warnings {got['sync_warnings']} {got['first_sync']}")


if __name__ == "__main__":
    main()

"""Which pip wheel should decode JPEGs: speed, scaled and cropped decode, GIL release, fidelity.

Every candidate wraps libjpeg-turbo. For each one this prints, on ImageNet-like JPEGs
(natural images ~470x390, quality 90, 4:2:0), the single-thread rate of a full decode, of
DCT-scaled decodes (1/2, 1/4), of a decode of an Inception-style random-crop window only,
the 2-thread rate (does the call release the GIL?), the largest difference from
libjpeg-turbo's accurate decode (ISLOW IDCT, smooth upsampling), and whether progressive,
CMYK and restart-marker JPEGs decode. Candidates that are not installed are skipped.

    pip install simplejpeg opencv-python-headless pillow imagecodecs pylibjxl \
        nvidia-nvimgcodec-cu13 scikit-image      # scikit-image only for its sample photos
    python benchmarks/jpeg_decoders.py [--seconds 1.0]

``tj3`` is stoker's own binding (stoker/kernels/cpu/image/turbojpeg.py): ctypes calls into the
libturbojpeg that a wheel bundles; ctypes drops the GIL for the call.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

Decode = Callable[[bytes], np.ndarray]


# -- corpus -------------------------------------------------------------------------------------

def photos() -> list[np.ndarray]:
    """Natural RGB photos; smooth synthetic images when scikit-image is absent."""
    try:
        import skimage.data as d

        names = ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry",
                 "hubble_deep_field", "retina", "colorwheel")
        return [getattr(d, n)()[..., :3] for n in names]
    except ImportError:
        rng = np.random.default_rng(0)
        import cv2

        out = []
        for _ in range(8):
            noise = rng.normal(128, 60, (600, 800, 3)).astype(np.float32)
            out.append(np.clip(cv2.GaussianBlur(noise, (0, 0), 2.5) * 2 - 128, 0, 255)
                       .astype(np.uint8))
        return out


def encode(rgb: np.ndarray, quality: int = 90, **opts: object) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, "JPEG", quality=quality, **opts)
    return buf.getvalue()


def grain(rng: np.random.Generator, h: int, w: int, amplitude: float) -> np.ndarray:
    """Fine multi-scale texture: the sample photos are smoother than ImageNet's, and a
    JPEG's decode time follows its entropy-coded size (ImageNet: ~110 KB at q90)."""
    import cv2

    t = np.zeros((h, w), np.float32)
    for sigma in (0.5, 0.8, 1.5, 3.0):
        t += cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), sigma) * sigma
    t *= amplitude / t.std()
    return t[..., None] * (1 + 0.15 * rng.normal(0, 1, 3)).astype(np.float32)


def corpus() -> list[bytes]:
    """ImageNet-like JPEGs: shorter side 333-427, landscape and portrait, q90 4:2:0, ~100 KB."""
    import cv2

    sizes = ((375, 500), (390, 470), (500, 375), (400, 533), (333, 500), (375, 500),
             (427, 480), (480, 427))
    out = []
    for k, (img, (h, w)) in enumerate(zip(photos(), sizes, strict=True)):
        ih, iw = img.shape[:2]
        scale = max(h / ih, w / iw)
        big = cv2.resize(img, (math.ceil(iw * scale), math.ceil(ih * scale)),
                         interpolation=cv2.INTER_LINEAR)
        y, x = (big.shape[0] - h) // 2, (big.shape[1] - w) // 2
        crop = big[y:y + h, x:x + w].astype(np.float32) + grain(np.random.default_rng(k), h, w, 27)
        out.append(encode(np.clip(crop, 0, 255).astype(np.uint8), subsampling="4:2:0"))
    return out


def windows(jpegs: list[bytes], shapes: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    from stoker.kernels.cpu.image.crop_window import random_crop_window

    gen = np.random.default_rng(1)
    return [random_crop_window(gen, h, w, [0.08, 1.0], [3 / 4, 4 / 3], 10) for h, w in shapes]


# -- candidates ---------------------------------------------------------------------------------
# Each returns {"full": f(b), "half": f(b), "quarter": f(b), "roi": f(b, y, x, h, w)}; missing
# keys mean "not supported by this library".

def cand_tj3() -> dict:
    from stoker.kernels.cpu.image import decode as kernel
    from stoker.kernels.cpu.image import turbojpeg as tj

    return {
        "full": lambda b: kernel.decode(b),  # stoker's kernel: + EXIF, CMYK, checks
        "half": lambda b: tj.decode(b, scale=(1, 2)),
        "quarter": lambda b: tj.decode(b, scale=(1, 4)),
        "roi": lambda b, y, x, h, w: tj.decode(b, roi=(y, x, h, w)),
        "fast": lambda b: tj.decode(b, fast_idct=True, fast_upsample=True),
        "lib": f"libjpeg-turbo via {tj.library_origin()}",
    }


def cand_simplejpeg() -> dict:
    import simplejpeg

    def scaled(f: int) -> Decode:
        return lambda b: simplejpeg.decode_jpeg(b, "RGB", min_factor=f)

    return {"full": lambda b: simplejpeg.decode_jpeg(b, "RGB"), "half": scaled(2),
            "quarter": scaled(4), "lib": f"simplejpeg {simplejpeg.__version__}"}


def cand_opencv() -> dict:
    import cv2

    cv2.setNumThreads(1)

    def dec(flag: int) -> Decode:
        return lambda b: cv2.imdecode(np.frombuffer(b, np.uint8), flag)

    return {"full": dec(cv2.IMREAD_COLOR_RGB), "half": dec(cv2.IMREAD_REDUCED_COLOR_2),
            "quarter": dec(cv2.IMREAD_REDUCED_COLOR_4), "lib": f"opencv {cv2.__version__}",
            "note": "reduced modes give BGR"}


def cand_pillow() -> dict:
    import PIL
    from PIL import Image

    def full(b: bytes) -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(b)).convert("RGB"))

    def scaled(f: int) -> Decode:
        def run(b: bytes) -> np.ndarray:
            im = Image.open(io.BytesIO(b))
            im.draft("RGB", (im.width // f, im.height // f))
            return np.asarray(im.convert("RGB"))
        return run

    return {"full": full, "half": scaled(2), "quarter": scaled(4),
            "lib": f"pillow {PIL.__version__}"}


def cand_nvimgcodec() -> dict:
    os.environ.setdefault("NVIMGCODEC_LOG_LEVEL", "0")
    import threading

    import nvidia.nvimgcodec as n

    local = threading.local()  # one decoder per thread: a shared one fails under threads

    def decoder() -> n.Decoder:
        if not hasattr(local, "dec"):
            local.dec = n.Decoder(device_id=n.NVIMGCODEC_DEVICE_CPU_ONLY,
                                  backends=[n.Backend(n.CPU_ONLY)], max_num_cpu_threads=1)
        return local.dec

    def full(b: bytes) -> np.ndarray:
        return np.asarray(decoder().decode(n.CodeStream(b)).cpu())

    def roi(b: bytes, y: int, x: int, h: int, w: int) -> np.ndarray:
        cs = n.CodeStream(b).get_sub_code_stream(region=n.Region(y, x, y + h, x + w))
        return np.asarray(decoder().decode(cs).cpu())

    return {"full": full, "roi": roi, "lib": "nvidia-nvimgcodec (CPU_ONLY backend)"}


def cand_imagecodecs() -> dict:
    import imagecodecs

    return {"full": lambda b: imagecodecs.jpeg8_decode(b),
            "lib": f"imagecodecs {imagecodecs.__version__}"}


def cand_pylibjxl() -> dict:
    import pylibjxl

    return {"full": lambda b: pylibjxl.decode_jpeg(b), "lib": "pylibjxl"}


CANDIDATES = {"tj3": cand_tj3, "simplejpeg": cand_simplejpeg, "opencv": cand_opencv,
              "pillow": cand_pillow, "nvimgcodec": cand_nvimgcodec,
              "imagecodecs": cand_imagecodecs, "pylibjxl": cand_pylibjxl}


# -- measurement --------------------------------------------------------------------------------

def best_rates(tasks: dict[tuple[str, str], tuple[Callable[[], object], int]], seconds: float,
               rounds: int) -> dict[tuple[str, str], float]:
    """Best images/s of each task (a pass function and the images one pass makes) over
    ``rounds`` rounds that visit every task in turn, so a burst of load from other
    processes on this shared machine hits all candidates alike rather than one."""
    best = dict.fromkeys(tasks, 0.0)
    for _ in range(rounds):
        for key, (one_pass, images) in tasks.items():
            done, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < seconds / rounds:
                one_pass()
                done += images
            best[key] = max(best[key], done / (time.perf_counter() - t0))
    return best


def passes(fn: Callable[[int], object], n: int, pool: ThreadPoolExecutor | None
           ) -> Callable[[], object]:
    """One pass over the n images, serially or on the pool's threads."""
    if pool is None:
        return lambda: [fn(i) for i in range(n)]
    return lambda: list(pool.map(fn, range(n)))


def dali_tasks(jpegs: list[bytes]) -> dict:
    """DALI's own CPU rates on the same JPEGs: decoders.image and image_random_crop on 2
    threads, batches of 32 (needs a Python with nvidia-dali)."""
    from nvidia.dali import fn, pipeline_def

    batch = [np.frombuffer(b, np.uint8) for b in jpegs] * max(1, 32 // len(jpegs))

    def make(random_crop: bool) -> Callable[[], object]:
        @pipeline_def(batch_size=len(batch), num_threads=2, device_id=None, seed=1)
        def pipe():
            data = fn.external_source(source=lambda: batch, batch=True)
            return fn.decoders.image_random_crop(data) if random_crop else \
                fn.decoders.image(data)
        p = pipe()
        p.build()
        p.run()
        return p.run

    return {("DALI", "every pixel"): (make(False), len(batch)),
            ("DALI", "random-crop window"): (make(True), len(batch))}


def variants(rgb: np.ndarray) -> dict[str, bytes]:
    """Feature probes: progressive, 4:4:4/4:2:2, restart markers, grayscale, CMYK."""
    import cv2

    out = {
        "progressive": encode(rgb, progressive=True),
        "444": encode(rgb, subsampling="4:4:4"),
        "422": encode(rgb, subsampling="4:2:2"),
        "gray": encode(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)),
    }
    ok, rst = cv2.imencode(".jpg", rgb[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, 90,
                                                    cv2.IMWRITE_JPEG_RST_INTERVAL, 4])
    out["restart"] = rst.tobytes()
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).convert("CMYK").save(buf, "JPEG", quality=90)
    out["cmyk"] = buf.getvalue()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (best kept)")
    ap.add_argument("--only", nargs="*", help="candidate names")
    ap.add_argument("--corpus", help="read the JPEGs from this folder instead of making them")
    ap.add_argument("--save-corpus", help="write the JPEGs made to this folder")
    ap.add_argument("--dali", action="store_true", help="also time DALI's CPU decoders")
    opts = ap.parse_args()

    from PIL import Image

    if opts.corpus:
        names = sorted(os.listdir(opts.corpus))
        jpegs = [open(os.path.join(opts.corpus, f), "rb").read() for f in names]
    else:
        jpegs = corpus()
    if opts.save_corpus:
        os.makedirs(opts.save_corpus, exist_ok=True)
        for k, b in enumerate(jpegs):
            with open(os.path.join(opts.save_corpus, f"{k:02d}.jpg"), "wb") as f:
                f.write(b)
    refs = [np.asarray(Image.open(io.BytesIO(b)).convert("RGB")) for b in jpegs]
    shapes = [r.shape[:2] for r in refs]
    wins = windows(jpegs, shapes)
    kb = np.mean([len(b) for b in jpegs]) / 1024
    mean_hw = np.mean(shapes, axis=0)
    area = np.mean([h * w / (s[0] * s[1]) for (_, _, h, w), s in zip(wins, shapes, strict=True)])
    print(f"corpus: {len(jpegs)} JPEGs, mean {mean_hw[0]:.0f}x{mean_hw[1]:.0f}, {kb:.0f} KB, "
          f"q90 4:2:0; random-crop windows cover {area:.0%} of the image on average")
    print(f"cores: {os.cpu_count()}; reference: Pillow's libjpeg-turbo (accurate IDCT, smooth "
          "upsampling)\n")
    probes = variants(refs[0])
    probe_refs = {k: np.asarray(Image.open(io.BytesIO(v)).convert("RGB"))
                  for k, v in probes.items()}

    made = {}
    for name, make in CANDIDATES.items():
        if opts.only and name not in opts.only:
            continue
        try:
            made[name] = make()
        except Exception as e:  # not installed, or the library would not load
            print(f"{name:12} skipped: {type(e).__name__}: {str(e)[:80]}")
    n = len(jpegs)
    pool = ThreadPoolExecutor(2)
    tasks: dict[tuple[str, str], tuple[Callable[[], object], int]] = {}
    for name, c in made.items():
        full = c["full"]
        tasks[name, "full"] = (passes(lambda i, f=full: f(jpegs[i]), n, None), n)
        tasks[name, "2thr"] = (passes(lambda i, f=full: f(jpegs[i]), n, pool), n)
        for key in ("half", "quarter", "fast"):
            if key in c:
                tasks[name, key] = (passes(lambda i, f=c[key]: f(jpegs[i]), n, None), n)
        if "roi" in c:
            one = lambda i, f=c["roi"]: f(jpegs[i], *wins[i])  # noqa: E731
            tasks[name, "roi"] = (passes(one, n, None), n)
            tasks[name, "roi2"] = (passes(one, n, pool), n)
    if opts.dali:
        tasks.update(dali_tasks(jpegs))
    rates = best_rates(tasks, opts.seconds, opts.rounds)
    pool.shutdown()

    head = (f"{'decoder':12} {'full/s':>7} {'2thr/s':>7} {'x2thr':>6} {'1/2 /s':>7} "
            f"{'1/4 /s':>7} {'roi/s':>7} {'maxdiff':>7} {'roi diff':>8}  features")
    print(head)
    print("-" * len(head))
    for name, c in made.items():
        full = c["full"]
        r1, r2 = rates[name, "full"], rates[name, "2thr"]
        cols = [f"{r1:7.0f}", f"{r2:7.0f}", f"{r2 / r1:6.2f}"]
        for key in ("half", "quarter", "roi"):
            cols.append(f"{rates[name, key]:7.0f}" if (name, key) in rates else f"{'-':>7}")
        diff = max(int(np.abs(full(b).astype(int) - r).max())
                   for b, r in zip(jpegs, refs, strict=True))
        cols.append(f"{diff:7d}")
        if "roi" in c:
            rd = max(int(np.abs(c["roi"](b, *w).astype(int)
                                - r[w[0]:w[0] + w[2], w[1]:w[1] + w[3]]).max())
                     for b, r, w in zip(jpegs, refs, wins, strict=True))
            cols.append(f"{rd:8d}")
        else:
            cols.append(f"{'-':>8}")
        feats = []
        for k, v in probes.items():
            try:
                out = full(v)
                d = np.abs(out.reshape(out.shape[0], out.shape[1], -1)[..., :3].astype(int)
                           - probe_refs[k]).max()
                feats.append(f"{k}" if d <= 1 else f"{k}(diff {d})")
            except Exception as e:
                feats.append(f"{k}:NO({type(e).__name__})")
        print(f"{name:12} " + " ".join(cols) + "  " + ", ".join(feats))
        print(f"{'':12} ({c['lib']}{'; ' + c['note'] if 'note' in c else ''})")
        if (name, "fast") in rates:
            print(f"{'':12} fast IDCT + fast upsampling: {rates[name, 'fast']:.0f}/s")
        if (name, "roi2") in rates:
            print(f"{'':12} window only, 2 threads: {rates[name, 'roi2']:.0f}/s")
    for (name, what), r in rates.items():
        if name == "DALI":
            print(f"DALI 2.4 CPU decoder, 2 threads, batches of 32, {what}: {r:.0f}/s")


if __name__ == "__main__":
    main()

"""Mutation fuzzer for every parser stoker owns or wraps: image decoding (JPEG through the
libturbojpeg binding, full, window and DCT-scaled; PNG, BMP, TIFF, WebP, PNM through
OpenCV and Pillow), header probing, DALI file lists and the readers' glob matcher.

    .venv/bin/python fuzz/fuzz_parsers.py                       # every format, 10,000 each
    .venv/bin/python fuzz/fuzz_parsers.py --format jpeg --count 2000 --seed 3
    .venv/bin/python fuzz/fuzz_parsers.py --replay fuzz/crashes/jpeg-s0-i123-crash.bin

Inputs are seed files (``seeds.py``) with stacked mutations (``mutate.py``), each a pure
function of (format, --seed, input number). A child process runs the inputs and reports
each one's start and outcome on a pipe; the parent kills a child that spends more than
--timeout seconds on one input (a hang) and restarts a child after one dies (a crash:
segfault, abort, out of memory), each time at the next input, after saving the culprit
under ``fuzz/crashes/``. A crash is also any exception other than the documented ones
(``targets.py``); a hang is also an input that finished but took over --timeout seconds.
Mismatches are accepted inputs whose result broke a consistency check (``targets.py``).
Children run under an address-space limit (--memory-mb) so that a decoder asked to
allocate gigabytes fails rather than swapping a shared machine.

Exit status: 1 if any crash or hang was found, else 0.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import selectors
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # seeds, mutate and targets live beside this script
    sys.path.insert(0, HERE)
FORMATS = ("jpeg", "jpeg_opencv", "png", "bmp", "tiff", "webp", "pnm", "file_list", "glob")


# -- the child: runs inputs, reports on stdout -----------------------------------------------


def classify(fmt: str, data: bytes, i: int, slow: float) -> dict:
    """Runs one input in this process: {"outcome", "detail", "seconds"}."""
    from targets import DOCUMENTED, TARGETS

    t0 = time.perf_counter()
    try:
        mismatch = TARGETS[fmt](data, i)
        outcome, detail = ("mismatch", mismatch) if mismatch else ("accepted", "")
    except DOCUMENTED[fmt] as e:
        outcome, detail = "error", type(e).__name__
    except Exception as e:  # noqa: BLE001 - every other exception is the finding
        outcome = "crash"
        detail = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-6)}"
    seconds = time.perf_counter() - t0
    if seconds > slow:
        outcome, detail = "hang", f"finished after {seconds:.2f} s ({outcome}: {detail})"
    return {"outcome": outcome, "detail": detail, "seconds": seconds}


def child(fmt: str, seed: int, start: int, stop: int, slow: float, memory_mb: int) -> None:
    import faulthandler

    faulthandler.enable()  # a segfault prints the Python stack into the crash record
    if memory_mb:
        limit = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import mutate

    # FUZZ_SELFTEST="crash:5,hang:9" makes inputs 5 and 9 kill or stall the child: the
    # harness's own test checks that both are caught, saved and skipped.
    selftest = dict(reversed(kv.split(":")) for kv in
                    filter(None, os.environ.get("FUZZ_SELFTEST", "").split(",")))
    out = sys.stdout
    for i in range(start, stop):
        data = mutate.make_input(fmt, seed, i)
        out.write(json.dumps({"start": i}) + "\n")
        out.flush()
        if selftest.get(str(i)) == "crash":
            os.abort()
        if selftest.get(str(i)) == "hang":
            time.sleep(3600)
        out.write(json.dumps({"done": i, **classify(fmt, data, i, slow)}) + "\n")
        out.flush()


# -- the parent: restarts children, saves culprits -------------------------------------------


def save_culprit(fmt: str, seed: int, i: int, kind: str, detail: str, crash_dir: str) -> str:
    from mutate import make_input

    os.makedirs(crash_dir, exist_ok=True)
    base = os.path.join(crash_dir, f"{fmt}-s{seed}-i{i}-{kind}")
    with open(base + ".bin", "wb") as f:
        f.write(make_input(fmt, seed, i))
    with open(base + ".txt", "w") as f:
        f.write(f"format {fmt}, seed {seed}, input {i}: {kind}\n{detail}\n"
                f"replay: fuzz/fuzz_parsers.py --format {fmt} --replay {base}.bin --index {i}\n")
    return base + ".bin"


def run_children(fmt: str, seed: int, count: int, timeout: float, memory_mb: int,
                 on_result) -> int:
    """Runs inputs 0..count-1 in as many children as it takes; calls
    ``on_result(i, outcome, detail)`` for each input; returns the number of restarts."""
    restarts, i = 0, 0
    while i < count:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--format", fmt,
               "--seed", str(seed), "--start", str(i), "--stop", str(count),
               "--timeout", str(timeout), "--memory-mb", str(memory_mb)]
        # stderr goes to a file: OpenCV logs every refused image there, and a pipe that
        # nobody reads would fill and stall the child (a false hang).
        err_file = tempfile.TemporaryFile()
        env = dict(os.environ, OPENCV_LOG_LEVEL="OFF")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, cwd=HERE,
                                env=env)
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        current, deadline, buf = None, None, b""
        startup = time.monotonic() + 120  # imports and seed encoding
        died = None
        while True:
            wait = (deadline if current is not None else startup) - time.monotonic()
            if wait <= 0:
                proc.kill()
                died = "hang"
                break
            if not sel.select(timeout=wait):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break  # the child exited
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                msg = json.loads(line)
                if "start" in msg:
                    current = msg["start"]
                    deadline = time.monotonic() + timeout + 1.0
                else:
                    on_result(msg["done"], msg["outcome"], msg["detail"])
                    current, i = None, msg["done"] + 1
        sel.close()
        proc.wait()
        err_file.seek(0)
        err = err_file.read().decode("utf-8", "replace")
        err_file.close()
        proc.stdout.close()
        if current is None:
            if proc.returncode != 0 and i < count:
                raise RuntimeError(f"fuzz child for {fmt} failed outside an input "
                                   f"(status {proc.returncode}):\n{err[-3000:]}")
            continue
        if died == "hang":
            on_result(current, "hang", f"no result after {timeout + 1.0:.1f} s; killed")
        else:
            on_result(current, "crash", f"child died with status {proc.returncode} "
                      f"(signal {-proc.returncode if proc.returncode < 0 else 'none'})\n"
                      f"{err[-3000:]}")
        restarts += 1
        i = current + 1
    return restarts


def fuzz_format(fmt: str, seed: int, count: int, timeout: float, memory_mb: int,
                crash_dir: str, quiet: bool = False) -> dict:
    counts: collections.Counter = collections.Counter()
    errors: collections.Counter = collections.Counter()
    findings: list[str] = []
    mismatches: list[str] = []
    t0 = time.perf_counter()
    progress_every = max(1, count // 10)

    def on_result(i: int, outcome: str, detail: str) -> None:
        counts[outcome] += 1
        if outcome == "error":
            errors[detail] += 1
        elif outcome in ("crash", "hang"):
            path = save_culprit(fmt, seed, i, outcome, detail, crash_dir)
            findings.append(f"{outcome} at input {i} -> {path}: {detail.splitlines()[0]}")
            if not quiet:
                print(f"  {findings[-1]}", flush=True)
        elif outcome == "mismatch":
            mismatches.append(f"input {i}: {detail}")
        done = sum(counts.values())
        if not quiet and done % progress_every == 0:
            print(f"  {fmt}: {done}/{count} inputs, {time.perf_counter() - t0:.0f} s",
                  flush=True)

    restarts = run_children(fmt, seed, count, timeout, memory_mb, on_result)
    return {"format": fmt, "inputs": sum(counts.values()), "errors": counts["error"],
            "accepted": counts["accepted"], "mismatches": counts["mismatch"],
            "crashes": counts["crash"], "hangs": counts["hang"], "restarts": restarts,
            "seconds": time.perf_counter() - t0, "error_types": dict(errors),
            "findings": findings, "mismatch_examples": mismatches[:5]}


def print_table(results: list[dict]) -> None:
    head = f"{'format':<10}{'inputs':>8}{'errors':>8}{'accepted':>9}{'mismatch':>9}" \
           f"{'crashes':>8}{'hangs':>6}{'seconds':>9}"
    print(head)
    for r in results:
        print(f"{r['format']:<10}{r['inputs']:>8}{r['errors']:>8}{r['accepted']:>9}"
              f"{r['mismatches']:>9}{r['crashes']:>8}{r['hangs']:>6}{r['seconds']:>9.1f}")
    for r in results:
        if r["error_types"]:
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(r["error_types"].items()))
            print(f"{r['format']}: documented errors: {kinds}")
        for line in r["findings"] + r["mismatch_examples"]:
            print(f"{r['format']}: {line}")


def replay(fmt: str, path: str, index: int, timeout: float) -> int:
    with open(path, "rb") as f:
        data = f.read()
    result = classify(fmt, data, index, timeout)
    print(f"{path}: {result['outcome']} in {result['seconds']:.3f} s {result['detail']}")
    return 1 if result["outcome"] in ("crash", "hang") else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", choices=FORMATS + ("all",), default="all")
    parser.add_argument("--count", type=int, default=10_000, help="inputs per format")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=2.0,
                        help="seconds one input may take before it counts as a hang")
    parser.add_argument("--memory-mb", type=int, default=2048,
                        help="address-space limit of a child (0: none)")
    parser.add_argument("--crash-dir", default=os.path.join(HERE, "crashes"))
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--replay", help="run one saved input in this process")
    parser.add_argument("--index", type=int, default=0,
                        help="with --replay: the input number (it picks the call variant)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--stop", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.format, args.seed, args.start, args.stop, args.timeout, args.memory_mb)
        return 0
    if args.replay:
        if args.format == "all":
            parser.error("--replay needs --format")
        return replay(args.format, args.replay, args.index, args.timeout)
    formats = FORMATS if args.format == "all" else (args.format,)
    results = []
    for fmt in formats:
        results.append(fuzz_format(fmt, args.seed, args.count, args.timeout, args.memory_mb,
                                   args.crash_dir))
        print_table(results[-1:])
    if len(results) > 1:
        print("\nall formats:")
        print_table(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if any(r["crashes"] or r["hangs"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

"""KeyboardInterrupt while run() waits for a batch: no hang, and no stoker thread left."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

SCRIPT = textwrap.dedent("""
    import faulthandler, signal, sys, threading, time
    import numpy as np
    from stoker import Pipeline, fn

    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test's report of a hang
    # Ctrl-C's usual handler, whatever this process inherited: a shell starts a background
    # job (a CI run with `&`) with SIGINT ignored, and its children inherit that.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def slow(info):
        time.sleep(0.05)  # a batch of 8 takes ~0.4 s: Ctrl-C lands while run() waits
        return np.full(4, info.idx_in_epoch, np.float32)

    pipe = Pipeline(batch_size=8, num_threads=2, device_id=None, prefetch_queue_depth=2)
    with pipe:
        pipe.set_outputs(fn.external_source(source=slow, batch=False) * 2)
    pipe.build()
    print("started", flush=True)
    try:
        while True:
            pipe.run()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    if sys.argv[1] == "close":
        pipe.close()
        left = [t.name for t in threading.enumerate() if t.name.startswith("stoker")]
        print("left", left, flush=True)
    # "exit": leave the pipeline running; interpreter exit must stop it
""")


@pytest.mark.parametrize("ending", ["close", "exit"])
def test_keyboard_interrupt_during_run(ending):
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, ending], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "started\n"
        time.sleep(0.6)  # inside the run() loop, waiting for a batch
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)  # every thread's stack to stderr
            time.sleep(1)
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"no exit 30 s after Ctrl-C; output {out!r}; the threads:\n{err}")
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0] == "interrupted"
    if ending == "close":
        assert lines[1] == "left []"

"""How the video reader splits a batch's clips among its threads (``plan_runs``)."""

from __future__ import annotations

import numpy as np

from stoker.operators.video.reader_source import plan_runs


def _window(e: int, first: int, length: int = 16, stride: int = 2) -> tuple:
    return e, first + stride * np.arange(length)


def test_every_row_once_files_in_frame_order_longest_first() -> None:
    keyframes = {0: 30, 1: 30, 2: 250}  # GOP length of each file
    windows = [_window(1, 100), _window(0, 64), _window(2, 400), _window(0, 0),
               _window(1, 40), _window(2, 10)]

    def seek_frame(e):
        return lambda k: k - k % keyframes[e]

    runs = plan_runs(windows, threads=2, seek_frame=seek_frame)
    rows = [r for run in runs for r in run]
    assert sorted(rows) == list(range(len(windows)))
    for run in runs:
        files = {windows[r][0] for r in run}
        assert len(files) == 1
        firsts = [int(windows[r][1][0]) for r in run]
        assert firsts == sorted(firsts)
        assert len(run) <= 3  # cut so both threads get work

    def cost(run):
        e = windows[run[0]][0]
        last = max(int(windows[r][1].max()) for r in run)
        return last - seek_frame(e)(int(windows[run[0]][1][0]))

    costs = [cost(run) for run in runs]
    assert costs == sorted(costs, reverse=True)
    # file 2's windows (frames 10-40 and 400-430, one run) span the most frames: first
    assert runs[0] == [5, 2]


def test_without_costs_the_order_is_by_file() -> None:
    windows = [_window(1, 0), _window(0, 0), _window(1, 64)]
    assert plan_runs(windows, threads=1) == [[1], [0, 2]]

"""CPU kernels: numpy, numba, OpenCV and libjpeg-turbo functions on plain arrays.

One folder per operator family (``image/``, ``tensor/``, ``random/``; ``detection/``,
``audio/``, ``video/`` to come), as in ``stoker/operators/``. Shared here: ``jit`` (numba's
njit with a fast cache), ``compiled`` (compiled-loop modules loaded on first use),
``buffers`` (recycled output arrays), ``saturate`` (DALI's rounding and saturation).
"""

import os

# stoker runs one sample per thread already; OpenCV's own thread pool would only
# oversubscribe the cores, and its C++ threads, destroyed at exit while busy, can abort the
# process ("terminate called without an active exception"). Read when cv2 initializes.
os.environ.setdefault("OPENCV_FOR_THREADS_NUM", "1")

"""CPU kernels: numpy, numba, OpenCV and libjpeg-turbo functions on plain arrays."""

import os

# stoker runs one sample per thread already; OpenCV's own thread pool would only
# oversubscribe the cores, and its C++ threads, destroyed at exit while busy, can abort the
# process ("terminate called without an active exception"). Read when cv2 initializes.
os.environ.setdefault("OPENCV_FOR_THREADS_NUM", "1")

"""A stand-in for torchvision, for running examples/dataloader_proxy.py where the real one
cannot load: PyPI's torchvision wheels do not import beside the CPU build of torch this
project installs ("operator torchvision::nms does not exist"). It has only what the
example uses, ``datasets.ImageFolder``, with torchvision's documented listing rules. The
test puts it on the path only when ``import torchvision`` fails.
"""

from . import datasets

__all__ = ["datasets"]

"""Batches and samples as ``Pipeline.run()`` returns them, with DALI's names
(``nvidia.dali.tensors`` / ``nvidia.dali.backend``): ``TensorListCPU`` and its samples
``TensorCPU`` (numpy underneath), ``TensorListGPU`` and ``TensorGPU`` (torch underneath).
``TensorList`` is stoker's first name for ``TensorListCPU``.
"""

from stoker.tensors.cpu import TensorCPU, TensorList, TensorListCPU
from stoker.tensors.gpu import TensorGPU, TensorListGPU

__all__ = ["TensorCPU", "TensorGPU", "TensorList", "TensorListCPU", "TensorListGPU"]

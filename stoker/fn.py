"""``stoker.fn``: one function per registered operator, generated from the registry.

Sub-namespaces (``fn.random``, ``fn.readers``, ``fn.decoders``, ...) follow the dots in
operator names. Each function has the schema's signature and docstring.
"""

import sys

from stoker.operators import load_all
from stoker.operators.machinery.registry import fill_namespace

load_all()
fill_namespace(sys.modules[__name__])

"""Python operators: a user's Python function as a step of the pipeline.

Operators: fn.python_function, fn.torch_python_function, fn.dl_tensor_python_function.

Modules: ``function`` (the three schemas and the operator that calls the function on the
producer thread). The calls and conversions: ``stoker/kernels/cpu/python/``; tests:
``tests/python/``. ``stoker.plugin.pytorch.fn.torch_python_function`` is DALI's place for
the torch one.
"""

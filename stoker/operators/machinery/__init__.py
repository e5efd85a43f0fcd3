"""The operator machinery, apart from the operator families: what every operator is made of.

- ``schema``    -- ``OpSchema``, ``Arg``, ``Input``, ``Example``: one frozen description per
                   operator (arguments, types, defaults, devices, outputs, kernels)
- ``arg_check`` -- constant argument values, in the forms DALI accepts, checked and made canonical
- ``registry``  -- ``register``, ``REGISTRY``, ``call_op`` (an ``fn`` call recorded in the graph)
                   and the ``fn`` namespace generated from the registry
- ``aliases``   -- DALI's deprecated operator names
- ``base``      -- ``SampleOp``, the default operator instance (per-sample and dense-chunk kernels)
- ``tensor_util`` -- instances that read layouts, ``BatchStage`` for whole-batch operators
- ``layouts``   -- layouts that only the samples can tell (an unnamed image's HWC/FHWC)
"""

"""Random operators: per-sample random values, each drawn from the sample's own stream.

Operators: fn.random.uniform, fn.random.coin_flip, fn.random.normal, fn.random.beta,
fn.random.choice, fn.random_crop_generator.

Modules: ``generators``. The streams are ``stoker/kernels/cpu/random/`` (a pure function
of seed, epoch and sample index, which every random draw in stoker goes through); tests:
``tests/random/``. Operators that draw to do their work (random crops, noise) live with
their family.
"""

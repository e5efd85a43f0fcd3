"""Sources: operators that bring batches into a pipeline from Python.

Operators: fn.external_source.

Modules: ``external_source`` (the source instance and its schema), ``external_args`` (its
argument rules), ``external_data`` (the forms of data it takes, and their layouts). Tests:
``tests/sources/``.
"""

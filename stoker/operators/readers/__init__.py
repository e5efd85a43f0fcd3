"""The readers family: sources that read a dataset from storage, one schema module each.

    file        -- fn.readers.file: whole files from a folder, a file list or paths

Importing the package registers every reader.
"""

from stoker.operators.readers import file  # noqa: F401

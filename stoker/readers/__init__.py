"""Sample indexes and byte sources, sharding, shuffling and epoch state for readers.

The parts every reader shares are here, apart from the operator glue in
``stoker/operators/readers/``:

    index      -- which samples a dataset has: listing, filters, file lists, labels
    file_list  -- the vectorized parser of ``<path> <label>`` lists
    sharding   -- DALI's shard formula, padded sizes, ``reader_meta``
    order      -- reader epochs, shard rotation, exact per-epoch shuffles, padding, and the
                  small explicit state (epoch, position) a checkpoint saves
    files      -- whole-file byte reads into uint8 arrays
"""

from stoker.readers.files import FileBatchReader, read_file
from stoker.readers.index import (
    DEFAULT_FILE_FILTERS,
    DatasetError,
    PathTable,
    SampleIndex,
    glob_matcher,
    index_from_file_list,
    index_from_file_root,
    index_from_files,
)
from stoker.readers.order import Cursor, ReadOrder, SampleIds, permutation
from stoker.readers.sharding import reader_meta, shard_bounds

__all__ = [
    "DEFAULT_FILE_FILTERS", "DatasetError", "PathTable", "SampleIndex", "glob_matcher",
    "index_from_file_list", "index_from_file_root", "index_from_files", "FileBatchReader",
    "read_file", "Cursor", "ReadOrder", "SampleIds", "permutation", "reader_meta",
    "shard_bounds",
]

"""``fn.experimental.readers.fits``: image HDUs of FITS files, as DALI 2.4 reads them.

The files come from ``file_root`` (``file_filter`` matches in the root and one level of
sub-folders, the listing ``readers.numpy`` shares with DALI's file readers),
``file_list`` or ``files``; ``readers/base.py`` shards, shuffles and checkpoints the list.
Each sample gives one output per entry of ``hdu_indices`` (1 is the primary HDU; the
default 2 is the first extension): the HDU's pixels in numpy's axis order (NAXISn
reversed), in the type and with the BSCALE/BZERO scaling DALI's CFITSIO read gives them
(``stoker/readers/fits.py``); tile-compressed images are decompressed
(``stoker/readers/fits_tiles.py``). ``dtypes`` is checked as DALI checks it (one
supported type per output) and, as in DALI, does not change the outputs' types.

Where stoker differs from DALI 2.4 on purpose: its checkpoints work (DALI's fits reader
refuses to save one); BITPIX 64 images with BZERO 2**63 are uint64 (CFITSIO overflows).
"""

from __future__ import annotations

import os

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.listed import ListedFilesReader, check_dataset, dataset_args
from stoker.readers.fits import FitsError
from stoker.readers.fits_tiles import read_hdus
from stoker.readers.samples import path as _sample

_FN = "fn.experimental.readers.fits"
# The output types DALI accepts in 'dtypes' (its message lists them).
SUPPORTED = (types.UINT8, types.UINT16, types.UINT32, types.UINT64, types.INT8, types.INT16,
             types.INT32, types.INT64, types.FLOAT16, types.FLOAT, types.FLOAT64)


class FitsReader(ListedFilesReader):
    POOL_NAME = "stoker-fits"
    ERRORS = (FitsError,)

    def read_file(self, path: str) -> list[np.ndarray]:
        return read_hdus(path, [int(h) for h in self.args["hdu_indices"]])

    def output_count(self) -> int:
        return len(self.args["hdu_indices"])

    def output_label(self, o: int) -> str:
        return f" in output {o} (HDU {int(self.args['hdu_indices'][o])})"


def _check(args: dict) -> None:
    check_dataset(_FN, args)
    hdus = args["hdu_indices"]
    if not hdus:
        raise ArgumentError(f"{_FN}: argument 'hdu_indices' needs at least one HDU")
    if any(int(h) < 1 for h in hdus):
        raise ArgumentError(f"{_FN}: argument 'hdu_indices' counts HDUs from 1 (the primary "
                            f"HDU), got {list(hdus)}")
    dtypes = args.get("dtypes")
    if dtypes is not None:
        for d in dtypes:
            if types.DALIDataType(d) not in SUPPORTED:
                names = ", ".join(types.DALIDataType(t).name for t in SUPPORTED)
                raise ArgumentError(f"{_FN}: argument 'dtypes': unsupported output dtype "
                                    f"{types.DALIDataType(d).name}; supported: {names}")
        if len(dtypes) != len(hdus):
            raise ArgumentError(f"{_FN}: argument 'dtypes' has {len(dtypes)} entries for "
                                f"{len(hdus)} HDUs (hdu_indices); give one per output (DALI: "
                                "Number of extensions does not match the number of provided "
                                "types)")
    check_reader_args(_FN, args, random_with_epoch_shuffle=False)


SCHEMA = register(OpSchema(
    name="experimental.readers.fits",
    doc="Reads image HDUs of FITS files (plain or tile-compressed: RICE_1, GZIP_1, GZIP_2): "
        "one output per entry of hdu_indices, each the HDU's pixels in numpy's axis order "
        "with BSCALE/BZERO applied, as DALI's CFITSIO read gives them.",
    args=(
        *dataset_args("FITS files", "*.fits"),
        Arg("hdu_indices", "ints", [2], "The HDUs to read, counted from 1 (the primary "
            "HDU); one output each. The default, 2, is the first extension."),
        Arg("dtypes", "dtypes", None, "One type per output, checked as DALI checks it "
            "(a supported type, one per HDU); the outputs keep the HDUs' own types, as in "
            "DALI."),
        *reader_args(containers=False),
    ),
    num_outputs=lambda args: len(args["hdu_indices"]),
    stage="source",
    instance=FitsReader,
    random=False,
    layout=lambda in_layouts, args: [""] * len(args["hdu_indices"]),
    check=_check,
    examples=(
        Example(args={"files": [_sample("mini.fits")]}),
        Example(args={"file_root": os.path.dirname(_sample("mini.fits")),
                      "hdu_indices": [2, 3, 4], "random_shuffle": True, "seed": 3}),
        Example(args={"files": [_sample("mini.fits")], "hdu_indices": [2],
                      "dtypes": [types.BOOL]}, raises=ArgumentError,
                match="unsupported output dtype"),
    ),
))

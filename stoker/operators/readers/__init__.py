"""Readers: operators that read stored files (the coming TFRecord, webdataset, numpy,
RecordIO and LMDB readers go here).

Operators: fn.readers.file, fn.readers.coco, fn.io.file.read.

Modules: ``file`` (readers.file: a dataset of files), ``coco`` (readers.coco: images with
the boxes, labels and masks of a COCO annotation file, on readers.file's machinery),
``io_file`` (io.file.read: a file named by data). The sample indexes, byte sources,
sharding and epochs are ``stoker/readers`` (not an operator family); tests:
``tests/readers/``.
"""

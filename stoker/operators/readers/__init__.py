"""Readers: operators that read stored files (the coming TFRecord, COCO, webdataset, numpy,
RecordIO and LMDB readers go here).

Operators: fn.readers.file, fn.io.file.read.

Modules: ``file`` (readers.file: a dataset of files), ``io_file`` (io.file.read: a file
named by data). The sample indexes, byte sources, sharding and epochs are ``stoker/readers``
(not an operator family); tests: ``tests/readers/``.
"""

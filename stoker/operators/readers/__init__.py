"""Readers: operators that read a dataset from storage, one schema module each.

Operators: fn.readers.file, fn.readers.coco, fn.readers.tfrecord, fn.readers.webdataset,
fn.readers.numpy, fn.readers.mxnet, fn.readers.caffe, fn.readers.caffe2, fn.io.file.read,
fn.decoders.numpy, fn.experimental.readers.fits.

Hidden (readers.numpy adds it after itself for a region of interest): _readers.numpy_roi.

Modules: ``file`` (readers.file: whole files from a folder, a file list or paths),
``coco`` (readers.coco: images with the boxes, labels and masks of a COCO annotation file),
``tfrecord`` (tf.train.Example features from TFRecord files), ``webdataset`` (samples of
webdataset tar shards), ``numpy`` (arrays from .npy files, whole or a region of interest),
``mxnet`` (images and labels from MXNet RecordIO files), ``caffe`` (readers.caffe and
readers.caffe2: LMDB databases of Caffe Datum / Caffe2 TensorProtos values), ``io_file``
(io.file.read: a file named by data), ``numpy_decoder`` (decoders.numpy: .npy bytes given
as data), ``fits`` (experimental.readers.fits: image HDUs of FITS files, plain or
tile-compressed), ``base`` (the source instance they share). The
sample indexes, byte sources, sharding and epochs are ``stoker/readers`` (not an operator
family); tests: ``tests/readers/``.
"""

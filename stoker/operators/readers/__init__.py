"""The readers family: sources that read a dataset from storage, one schema module each.

    file        -- fn.readers.file: whole files from a folder, a file list or paths
    tfrecord    -- fn.readers.tfrecord: tf.train.Example features from TFRecord files
    webdataset  -- fn.readers.webdataset: samples of webdataset tar shards
    numpy       -- fn.readers.numpy: arrays from .npy files, whole or a region of interest
    mxnet       -- fn.readers.mxnet: images and labels from MXNet RecordIO files
    caffe       -- fn.readers.caffe, fn.readers.caffe2: LMDB databases of Caffe Datum /
                   Caffe2 TensorProtos values

Importing the package registers every reader.
"""

from stoker.operators.readers import (  # noqa: F401
    caffe,
    file,
    mxnet,
    numpy,
    tfrecord,
    webdataset,
)

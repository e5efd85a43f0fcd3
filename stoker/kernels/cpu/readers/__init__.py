"""Compiled loops of the readers family: protobuf wire-format decoding (tf.train.Example,
Caffe Datum, Caffe2 TensorProtos) and container framing walks (TFRecord, RecordIO).
Loaded on first use through ``stoker.kernels.cpu.compiled.loops``."""

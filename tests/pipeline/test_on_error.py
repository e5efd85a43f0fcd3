"""Pipeline(on_error=...): "raise" names the file, operator and cause; "skip" drops failing
samples, refills the batch from the sources' next samples and lists what it skipped, and an
iterator's epochs still hold every good sample exactly once."""

from __future__ import annotations

import collections
import zlib

import cv2
import numpy as np
import pytest

from stoker import fn, pipeline_def
from stoker.errors import ArgumentError, PipelineError, SampleError
from stoker.kernels.cpu.image import decode as K

SIZE = (24, 32)  # H, W of the good images


def _jpeg(k: int) -> bytes:
    rng = np.random.default_rng(k)
    img = np.clip(rng.normal(128, 40, (*SIZE, 3)), 0, 255).astype(np.uint8)
    img[:, :, 0] = (k * 30) % 256  # each file recognisable by its red channel
    return cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (len(data).to_bytes(4, "big") + kind + data +
            zlib.crc32(kind + data).to_bytes(4, "big"))


def _png_bomb() -> bytes:
    """A valid PNG header claiming 60000 x 60000 pixels (decoding would need 10 GB)."""
    ihdr = (60000).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) +
            _png_chunk(b"IDAT", zlib.compress(b"\0" * 100)) + _png_chunk(b"IEND", b""))


BAD = {
    "corrupt.jpg": lambda: b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4,
    "truncated.jpg": lambda: _jpeg(99)[:300],
    "empty.jpg": lambda: b"",
    "text.jpg": lambda: b"this is not an image at all\n" * 10,  # wrong extension
    "bomb.png": _png_bomb,  # a decompression bomb
}


@pytest.fixture
def folder(tmp_path):
    """13 files in one class folder, 5 of them bad, interleaved with good ones."""
    cls = tmp_path / "c"
    cls.mkdir()
    names = []
    bad = iter(BAD.items())
    for k in range(8):
        name = f"f{2 * k:02d}_good.jpg"
        (cls / name).write_bytes(_jpeg(k))
        names.append(name)
        entry = next(bad, None)
        if entry is not None:
            name = f"f{2 * k + 1:02d}_{entry[0]}"
            (cls / name).write_bytes(entry[1]())
            names.append(name)
    return tmp_path, sorted(names)


def _good(names):
    return [n for n in names if n.endswith("_good.jpg")]


def _pipe(root, files=None, on_error="skip", batch_size=4, **reader):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=5,
                  on_error=on_error)
    def p():
        if files is not None:
            jpegs, labels = fn.readers.file(files=files, labels=list(range(len(files))),
                                            file_root=str(root / "c"), name="r", **reader)
        else:
            jpegs, labels = fn.readers.file(file_root=str(root), name="r", **reader)
        img = fn.decoders.image(jpegs, device="cpu")
        return img, labels

    return p()


def test_on_error_must_be_raise_or_skip():
    with pytest.raises(ArgumentError, match="'on_error' must be 'raise' or 'skip', got 'ignore'"):
        pipeline_def(batch_size=2, device_id=None, on_error="ignore")(
            lambda: fn.random.uniform())()


def test_raise_names_file_operator_and_cause(folder):
    root, names = folder
    pipe = _pipe(root, on_error="raise")
    with pytest.raises(SampleError) as err:
        for _ in range(4):
            pipe.run()
    msg = str(err.value)
    assert "fn.decoders.image" in msg and "f01_corrupt.jpg" in msg
    assert "JPEG" in msg  # the cause


def test_skip_keeps_batches_full_of_good_samples_in_order(folder):
    root, names = folder
    pipe = _pipe(root)
    good = _good(names)
    seen = []
    for _ in range(2):  # 8 good samples, batches of 4
        img, _ = pipe.run()
        assert len(img) == 4
        for i in range(len(img)):
            name = img.source_info(i).split("/")[-1]
            seen.append(name)
            k = good.index(name)
            # The pixels are those of the good file, decoded alone (OpenCV as reference).
            ref = cv2.cvtColor(cv2.imdecode(np.frombuffer(_jpeg(k), np.uint8),
                                            cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
            assert np.abs(img.at(i).astype(int) - ref).max() <= 2
    assert seen == good
    skipped = pipe.skipped_samples()
    assert [s.split("/")[-1] for s, _ in skipped] == [n for n in names if n not in good]
    reasons = {s.split("/")[-1].split("_", 1)[1]: r for s, r in skipped}
    assert all("fn.decoders.image" in r for r in reasons.values())
    assert "empty input (0 bytes)" in reasons["empty.jpg"]
    assert "pixels" in reasons["bomb.png"]  # refused by the decoded-size limit
    for name, r in reasons.items():
        assert name in r  # each reason names its file


def test_skip_missing_file_is_a_read_failure(folder):
    root, names = folder
    good = _good(names)
    files = good[:3] + ["missing.jpg"] + good[3:]
    pipe = _pipe(root, files=files)
    img, labels = pipe.run()
    assert [files[int(x)] for x in np.asarray(labels.as_array()).ravel()] == good[:4]
    (source, reason), = pipe.skipped_samples()
    assert source.endswith("missing.jpg")
    assert "fn.readers.file" in reason and "cannot read file" in reason


def test_skip_in_a_later_operator():
    """A failure in any operator of the chain, not only the decoder, skips the sample."""
    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1, on_error="skip")
    def p():
        data = fn.external_source(source=lambda info: np.full(
            (2, 2) if info.idx_in_epoch % 3 else (3, 3), info.idx_in_epoch, np.float32),
            batch=False)
        # reshape to 4 elements fails for the 3x3 samples (every third one)
        return fn.reshape(data, shape=[4])

    pipe = p()
    (out,) = pipe.run()
    assert [float(out.at(i)[0]) for i in range(3)] == [1.0, 2.0, 4.0]
    (out,) = pipe.run()
    assert [float(out.at(i)[0]) for i in range(3)] == [5.0, 7.0, 8.0]
    skipped = pipe.skipped_samples()
    assert len(skipped) == 3 and all("fn.reshape" in r for _, r in skipped)


def test_skip_external_source_sample_callback():
    def source(info):
        if info.idx_in_epoch in (1, 2, 6):
            raise ValueError(f"bad record {info.idx_in_epoch}")
        return np.array([info.idx_in_epoch], np.int32)

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, on_error="skip")
    def p():
        return fn.external_source(source=source, batch=False)

    pipe = p()
    assert np.asarray(pipe.run()[0].as_array()).ravel().tolist() == [0, 3, 4, 5]
    assert np.asarray(pipe.run()[0].as_array()).ravel().tolist() == [7, 8, 9, 10]
    reasons = [r for _, r in pipe.skipped_samples()]
    assert len(reasons) == 3
    assert "the source raised on sample 6: ValueError: bad record 6" in reasons[2]


def test_skip_external_source_batch_callback():
    def source(info):
        if info.iteration == 1:
            raise OSError("shard unavailable")
        return [np.array([info.iteration], np.int32)] * 2

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, on_error="skip")
    def p():
        return fn.external_source(source=source, batch=True, batch_info=True)

    pipe = p()
    assert pipe.run()[0].at(0)[0] == 0
    assert pipe.run()[0].at(0)[0] == 2  # batch 1 failed; batch 2 took its place
    (what, reason), = pipe.skipped_samples()
    assert what == "batch 1 of epoch 0" and "OSError: shard unavailable" in reason


def test_skip_stops_when_every_sample_fails(tmp_path):
    cls = tmp_path / "c"
    cls.mkdir()
    for k in range(7):
        (cls / f"{k}.jpg").write_bytes(b"garbage")
    pipe = _pipe(tmp_path, batch_size=2)
    with pytest.raises(PipelineError, match="samples in a row failed.*Is every sample bad"):
        for _ in range(200):
            pipe.run()


def test_decoded_size_limit_is_configurable(folder, monkeypatch):
    root, names = folder
    monkeypatch.setattr(K, "MAX_PIXELS", SIZE[0] * SIZE[1] - 1)  # every good image too big
    pipe = _pipe(root, on_error="raise")
    with pytest.raises(SampleError, match="pixels"):
        pipe.run()


@pytest.mark.parametrize("shards", [1, 2, 3])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("batch_size", [2, 3, 4])
def test_iterator_epochs_hold_every_good_sample_once(folder, shards, shuffle, batch_size):
    torch = pytest.importorskip("torch")
    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    root, names = folder
    good = set(_good(names))
    iterators = [DALIGenericIterator(
        _pipe(root, files=names, batch_size=batch_size, shard_id=s, num_shards=shards,
              random_shuffle=shuffle),
        ["img", "label"], reader_name="r", last_batch_policy=LastBatchPolicy.PARTIAL)
        for s in range(shards)]
    for _ in range(3):
        seen = collections.Counter()
        for it in iterators:
            for batch in it:
                labels = batch[0]["label"]
                assert isinstance(labels, torch.Tensor)
                seen.update(names[int(x)] for x in labels.flatten())
            it.reset()
        assert seen == collections.Counter(good)


def test_several_pipelines_per_iterator_are_refused_with_skip(folder):
    pytest.importorskip("torch")
    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    root, names = folder
    pipes = [_pipe(root, files=names, shard_id=s, num_shards=2) for s in range(2)]
    with pytest.raises(PipelineError, match="one pipeline per iterator"):
        DALIGenericIterator(pipes, ["img", "label"], reader_name="r",
                            last_batch_policy=LastBatchPolicy.PARTIAL)


@pytest.mark.parametrize("policy", ["FILL", "DROP"])
def test_fill_and_drop_are_refused_with_skip(folder, policy):
    """Skipping moves samples across the positions FILL pads and DROP drops by (a review
    found FILL repeating and losing samples, DROP returning a short batch)."""
    pytest.importorskip("torch")
    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    root, names = folder
    with pytest.raises(PipelineError, match=f"needs last_batch_policy=LastBatchPolicy.PARTIAL"
                                            f".*; {policy} pads or drops samples by position"):
        DALIGenericIterator(_pipe(root, files=names), ["img", "label"], reader_name="r",
                            last_batch_policy=getattr(LastBatchPolicy, policy))


def test_skip_changes_nothing_without_failures(folder):
    root, names = folder
    good = _good(names)
    runs = []
    for on_error in ("raise", "skip"):
        pipe = _pipe(root, files=good, on_error=on_error, batch_size=3, random_shuffle=True)
        runs.append([np.asarray(pipe.run()[1].as_array()).ravel().tolist() for _ in range(5)])
    assert runs[0] == runs[1]


@pytest.mark.parametrize("depth", [1, 2])
def test_checkpoints_resume_exactly_while_skipping(folder, depth):
    """on_error="skip" with checkpoints: a run restored after any batch gives the same
    remaining batches, replacements included (readers and per-sample callbacks)."""
    root, names = folder

    def make(checkpoint=None):
        @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=2, on_error="skip",
                      prefetch_queue_depth=depth, enable_checkpointing=True,
                      checkpoint=checkpoint)
        def p():
            jpegs, labels = fn.readers.file(files=names, labels=list(range(len(names))),
                                            file_root=str(root / "c"), random_shuffle=True,
                                            name="r")
            img = fn.decoders.image(jpegs)
            extra = fn.external_source(
                source=lambda info: np.array([info.idx_in_epoch], np.int64)
                if info.idx_in_epoch % 4 else 1 // 0, batch=False)
            return labels, fn.random.uniform(), extra, img.shape()

        return p()

    def rows(outputs):
        return [np.asarray(tl.as_array()).ravel().tolist() for tl in outputs]

    pipe = make()
    checkpoints, batches = [], []
    for _ in range(8):
        checkpoints.append(pipe.checkpoint())
        batches.append(rows(pipe.run()))
    assert pipe.skipped_samples()  # some samples were skipped on the way
    for k in range(8):
        resumed = make(checkpoints[k])
        assert [rows(resumed.run()) for _ in range(k, 8)] == batches[k:]


def test_skip_in_the_cpu_part_of_a_gpu_pipeline(folder, monkeypatch):
    """CPU decode, then GPU operators (on torch CPU tensors here): bad files are skipped
    before the GPU part, batches stay full and equal the CPU pipeline's; an iterator's
    PARTIAL epochs still hold every good sample once."""
    pytest.importorskip("torch")
    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    monkeypatch.setenv("STOKER_GPU_ON_CPU", "1")
    root, names = folder
    good = _good(names)

    def make(device):
        @pipeline_def(batch_size=3, num_threads=2, device_id=0 if device == "gpu" else None,
                      seed=4, on_error="skip")
        def p():
            jpegs, labels = fn.readers.file(files=names, labels=list(range(len(names))),
                                            file_root=str(root / "c"), name="r")
            img = fn.decoders.image(jpegs, device="cpu")
            if device == "gpu":
                img = img.gpu()
            return fn.flip(img, horizontal=1, device=device), labels

        return p()

    cpu, gpu = make("cpu"), make("gpu")
    for _ in range(3):
        (a, la), (b, lb) = cpu.run(), gpu.run()
        assert len(b) == 3
        np.testing.assert_array_equal(la.as_array(), lb.as_array())
        for i in range(3):
            np.testing.assert_array_equal(a.at(i), b.as_cpu().at(i))
    assert gpu.skipped_samples() == cpu.skipped_samples()

    it = DALIGenericIterator(make("gpu"), ["img", "label"], reader_name="r",
                             last_batch_policy=LastBatchPolicy.PARTIAL)
    for _ in range(2):
        seen = collections.Counter()
        for batch in it:
            seen.update(names[int(x)] for x in batch[0]["label"].flatten())
        it.reset()
        assert seen == collections.Counter(good)


# -- the skip report: each bad file once, and nothing from libpng on stderr -------------------
def _png(k: int) -> bytes:
    rng = np.random.default_rng(k)
    img = np.clip(rng.normal(128, 40, (*SIZE, 3)), 0, 255).astype(np.uint8)
    return cv2.imencode(".png", img)[1].tobytes()


def _spoil(data: bytes, k: int, kinds: int) -> bytes:
    """Damage as disks, transfers and downloads do it: cut short, overwritten with
    garbage, zeroed, one bit flipped (JPEGs decode through the last two)."""
    rng = np.random.default_rng(1000 + k)
    cut = len(data) // 3
    return [data[:cut], data[:cut] + rng.bytes(len(data) - cut),
            data[:cut] + bytes(40) + data[cut + 40:],
            data[:cut] + bytes([data[cut] ^ 0x10]) + data[cut + 1:]][k % kinds]


@pytest.fixture(scope="module")
def mixed_folder(tmp_path_factory):
    """150 JPEGs and PNGs in three class folders, every other one damaged."""
    root = tmp_path_factory.mktemp("mixed")
    bad = set()
    for k in range(150):
        ext = ".png" if k % 4 < 2 else ".jpg"
        data = _png(k) if ext == ".png" else _jpeg(k)
        name = f"c{k % 3}/{k:03d}{ext}"
        if k % 2:
            data = _spoil(data, k // 4, 4 if ext == ".png" else 2)
            bad.add(name)
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(data)
    return root, bad


@pytest.mark.parametrize(("batch_size", "depth"), [(16, 2), (7, 1), (64, 3)])
def test_the_skip_report_lists_each_bad_file_once_per_epoch(mixed_folder, capfd, batch_size,
                                                            depth):
    """The last batch of an epoch reads on into the next epoch's first files, which the
    iterator drops (PARTIAL): their failures are not this epoch's (they were listed twice)."""
    pytest.importorskip("torch")
    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    root, bad = mixed_folder

    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=3,
                  on_error="skip", prefetch_queue_depth=depth)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(root), random_shuffle=True, name="R")
        return fn.resize(fn.decoders.image(jpegs), resize_x=8, resize_y=8), labels

    p = pipe()
    it = DALIGenericIterator([p], ["img", "label"], reader_name="R",
                             last_batch_policy=LastBatchPolicy.PARTIAL)
    for epoch in (1, 2):
        delivered = sum(len(batch[0]["label"]) for batch in it)
        assert delivered == 150 - len(bad)
        report = collections.Counter(name for name, _ in p.skipped_samples())
        assert report == collections.Counter({name: epoch for name in bad})
    err = capfd.readouterr().err
    assert "libpng" not in err and "imdecode" not in err

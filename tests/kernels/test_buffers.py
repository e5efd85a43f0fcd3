"""kernels/cpu/buffers.py: large outputs on recycled memory, given back only when the
array and every view of it are gone."""

import gc

import numpy as np
import pytest

from stoker.kernels.cpu import buffers

BIG = (300, 400, 3)  # 360,000 bytes of uint8: above MIN_BYTES


@pytest.fixture(autouse=True)
def empty_free_list():
    gc.collect()  # arrays of earlier tests held in reference cycles give their blocks back
    buffers.release()
    yield
    gc.collect()
    buffers.release()


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_empty_is_a_writable_c_contiguous_array_of_the_shape_and_type():
    for shape, dtype in [(BIG, np.uint8), ((3, 224, 224), np.float32), ((7, 5), np.int16)]:
        a = buffers.empty(shape, dtype)
        assert a.shape == shape and a.dtype == dtype
        assert a.flags.c_contiguous and a.flags.writeable
        a[...] = 1
        assert (a == 1).all()


def test_small_arrays_are_plain_numpy_arrays():
    a = buffers.empty((10, 10), np.uint8)
    del a
    assert buffers.held() == 0


def test_a_block_comes_back_only_when_every_view_is_gone():
    a = buffers.empty(BIG, np.uint8)
    first = address(a)
    views = [a[10:], a.T, a.reshape(-1), np.asarray(a)[..., 1], a.view(np.int8)]
    del a
    for v in views:
        assert buffers.held() == 0
        # While a view lives, its memory is not handed out again.
        other = buffers.empty(BIG, np.uint8)
        assert not (address(other) <= address(v) < address(other) + other.nbytes)
        del other
        buffers.release()
    del v, views
    assert buffers.held() >= 300 * 400 * 3
    again = buffers.empty(BIG, np.uint8)
    assert address(again) == first  # the same memory, taken back from the free list
    assert buffers.held() == 0


def test_a_torch_tensor_keeps_the_memory():
    torch = pytest.importorskip("torch")
    a = buffers.empty(BIG, np.uint8)
    a[...] = 7
    t = torch.from_numpy(a)
    del a
    assert buffers.held() == 0
    b = buffers.empty(BIG, np.uint8)
    b[...] = 0
    assert int(t.min()) == 7
    del t
    assert buffers.held() > 0


def test_a_request_takes_a_slightly_larger_block_but_not_a_much_larger_one():
    a = buffers.empty((buffers.MIN_BYTES + 3 * buffers.GRAIN,), np.uint8)
    block = address(a)
    del a
    near = buffers.empty((buffers.MIN_BYTES + buffers.GRAIN,), np.uint8)  # two grains less
    assert address(near) == block
    del near
    far = buffers.empty((buffers.MIN_BYTES,), np.uint8)  # three grains less
    assert address(far) != block


def test_the_free_list_keeps_its_budget_by_dropping_the_oldest_blocks(monkeypatch):
    monkeypatch.setattr(buffers, "BUDGET", 2 << 20)
    sizes = [(512 << 10) + k * 4 * buffers.GRAIN for k in range(3)]  # no block fits another
    arrays = [buffers.empty((n,), np.uint8) for n in sizes]
    for k in range(3):  # given back in this order: the first goes when the third comes
        arrays[k] = None
    assert buffers.held() == sizes[1] + sizes[2]
    again, held = [], []
    for n in sizes:
        again.append(buffers.empty((n,), np.uint8))
        held.append(buffers.held())
    assert held == [sizes[1] + sizes[2], sizes[2], 0]  # the first missed, the others hit
    del again
    buffers.release()
    assert buffers.held() == 0


def test_a_large_request_takes_a_block_up_to_an_eighth_larger():
    big = 8 << 20
    a = buffers.empty((big + big // 8,), np.uint8)
    block = address(a)
    del a
    assert address(buffers.empty((big,), np.uint8)) == block
    b = buffers.empty((big + big // 8 + buffers.GRAIN,), np.uint8)
    block = address(b)
    del b
    assert address(buffers.empty((big,), np.uint8)) != block


def test_contiguous_copies_only_what_is_not():
    a = np.arange(600_000, dtype=np.uint8).reshape(600, 1000)
    assert buffers.contiguous(a) is a
    window = a[:, 100:900]
    out = buffers.contiguous(window)
    assert out.flags.c_contiguous and np.array_equal(out, window)


def test_decoded_batches_kept_by_the_user_stay_intact_while_blocks_recycle(tmp_path):
    # Decoded images are handed out on recycled blocks: batches the user keeps must never
    # share memory with batches made after them, while dropped ones are recycled.
    cv2 = pytest.importorskip("cv2")
    from stoker import fn, pipeline_def

    rng = np.random.default_rng(3)
    (tmp_path / "c").mkdir()
    want = {}
    for i in range(10):
        h, w = 300 + 17 * i, 420 - 9 * i
        img = cv2.GaussianBlur(rng.integers(0, 256, (h, w, 3), np.uint8), (5, 5), 0)
        ok, enc = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])
        (tmp_path / "c" / f"{i}.jpg").write_bytes(enc.tobytes())
        want[f"c/{i}.jpg"] = cv2.cvtColor(cv2.imdecode(enc, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(tmp_path))
        return fn.decoders.image(jpegs)

    p = pipe()
    kept = []
    for step in range(12):
        (images,) = p.run()
        if step % 3 != 1:  # every third batch is dropped at once: its blocks come back
            kept.append(images)
    assert buffers.held() > 0
    for images in kept:
        for i in range(len(images)):
            assert np.array_equal(images.at(i), want[images.source_info(i)])
    p.close()


def test_closing_a_pipeline_empties_the_free_list(tmp_path):
    from stoker import fn, pipeline_def

    (tmp_path / "c").mkdir()
    for i in range(4):
        (tmp_path / "c" / f"{i}.bin").write_bytes(bytes(1))

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        data, _ = fn.readers.file(file_root=str(tmp_path), file_filters=["*.bin"])
        return data

    p = pipe()
    p.build()
    held = [buffers.empty(BIG, np.uint8) for _ in range(3)]
    del held
    assert buffers.held() > 0
    p.close()
    assert buffers.held() == 0


def test_a_block_over_the_budget_is_kept_alone(monkeypatch):
    """A whole batch's output block may exceed the budget: the free list then keeps that
    one block (the next batch takes it), dropping the others."""
    monkeypatch.setattr(buffers, "BUDGET", 2 << 20)
    buffers.release()
    small = buffers.empty((1 << 20,), np.uint8)
    big = buffers.empty((3 << 20,), np.uint8)
    block = address(big)
    del small
    assert buffers.held() == 1 << 20
    del big
    assert buffers.held() == 3 << 20  # the small one made room
    assert address(buffers.empty((3 << 20,), np.uint8)) == block
    buffers.release()


def test_recycled_knows_its_own_arrays_and_their_views_only():
    a = buffers.empty((600, 600), np.float32)
    assert buffers.recycled(a) and buffers.recycled(a[3:, ::2])
    assert buffers.recycled(np.ndarray((10,), np.uint8, buffer=a.reshape(-1).view(np.uint8)))
    assert not buffers.recycled(np.empty((600, 600), np.float32))
    assert not buffers.recycled(np.empty(10))  # small arrays come from np.empty
    small = buffers.empty((3,), np.float32)
    assert not buffers.recycled(small)
    del a
    b = buffers.empty((600, 600), np.float32)  # takes the freed block: its own entry
    assert buffers.recycled(b)

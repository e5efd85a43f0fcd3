"""Records DALI 2.4's fn.decoders.numpy outcomes and the files fn.dump_image writes.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/numpy_dump.py
(writes tests/data/dali_numpy_dump.json)

decoders.numpy: each case is a batch of .npy files made by numpy.save (CASES) and the
'dtype' argument; the file keeps the outputs (dtype, shape, values) or that DALI failed.
dump_image: the names and texts of the files DALI writes for DUMP_BATCH.
tests/readers/test_numpy_decoder.py and tests/image/test_dump_image.py replay them.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import tempfile

import numpy as np

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_numpy_dump.json"

# name -> (arrays as (values, dtype, shape, fortran)), dtype argument or None
CASES = {
    "int16": ([(list(range(12)), "int16", [3, 4], False), (list(range(6)), "int16", [1, 6], False)],
              None),
    "mixed_ndim": ([(list(range(12)), "int16", [3, 4], False),
                    (list(range(5)), "int16", [5], False)], None),
    # DALI 2.4 transposes Fortran-order arrays with CUDA: on a CPU-only machine it fails.
    "fortran_float32": ([([0.5, 1, 2, 3, 4, 5], "float32", [2, 3], True)], None),
    "to_float": ([(list(range(12)), "int16", [3, 4], False)], "FLOAT"),
    "mixed_types": ([(list(range(3)), "int16", [3], False), ([1.0, 2.0], "float32", [2], False)],
                    None),
    "mixed_to_int32": ([(list(range(3)), "int16", [3], False),
                        ([1.5, 2.5, -1.5, 3e10], "float32", [4], False)], "INT32"),
    "scalar_float64": ([([3.5], "float64", [], False)], None),
    "bool": ([([1, 0, 1], "bool", [3], False)], None),
    "big_endian": ([(list(range(3)), ">i4", [3], False)], None),
}
DUMP_BATCH = [(list(range(18)), [2, 3, 3]), ([7, 7], [1, 2, 1])]


def npy_bytes(values, dtype, shape, fortran) -> np.ndarray:
    a = np.array(values, dtype).reshape(shape)
    if fortran:
        a = np.asfortranarray(a)
    buf = io.BytesIO()
    np.save(buf, a)
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


def main() -> None:
    from nvidia.dali import fn, pipeline_def, types

    def run(graph, batch):
        @pipeline_def(batch_size=len(batch), num_threads=1, device_id=None)
        def pipe():
            return graph(fn.external_source(lambda: batch))

        p = pipe()
        p.build()
        return p.run()[0]

    decoded = {}
    for name, (arrays, dtype) in CASES.items():
        batch = [npy_bytes(*a) for a in arrays]
        kw = {} if dtype is None else {"dtype": getattr(types, dtype)}
        try:
            out = run(lambda x, kw=kw: fn.decoders.numpy(x, **kw), batch)
            decoded[name] = {"layout": out.layout(), "samples": [
                {"dtype": np.array(t).dtype.name, "shape": list(np.array(t).shape),
                 "values": np.array(t).astype(np.float64).ravel().tolist()} for t in out]}
        except Exception:
            decoded[name] = {"error": True}
    batch = [np.array(v, np.uint8).reshape(s) for v, s in DUMP_BATCH]
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            run(lambda x: fn.dump_image(fn.reshape(x, layout="HWC"), suffix="abc"), batch)
            files = {f: pathlib.Path(f).read_text() for f in sorted(os.listdir("."))}
        finally:
            os.chdir(cwd)
    OUT.write_text(json.dumps({"decoders.numpy": decoded, "dump_image": files}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

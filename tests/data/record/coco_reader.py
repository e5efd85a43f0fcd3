"""Records DALI 2.4's fn.readers.coco on a generated COCO dataset: tests/data/dali_coco.json.

The dataset is ``stoker.cli.make_coco.make_coco_dataset(images=12, seed=0)``: its
annotation file is stored in the record, so the replay (tests/readers/test_coco_reader.py)
rebuilds the same dataset without regenerating it (the image files' bytes do not matter:
the reader outputs them undecoded, and the replay checks them against the files it
writes). For each case the record holds DALI's arguments, its reader_meta and one batch
of every output (pixelwise masks as (value, run length) pairs, column by column), and for
the save cases the bytes of every file DALI wrote into save_preprocessed_annotations_dir.

Re-run (from the repository root, DALI installed in /work/dali-venv):
    PYTHONPATH=. /work/dali-venv/bin/python tests/data/record/coco_reader.py
"""

from __future__ import annotations

import base64
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT)]

from nvidia.dali import fn, pipeline_def  # noqa: E402

from stoker.cli.make_coco import make_coco_dataset  # noqa: E402

N = 12
IMAGES = ["000000000133.jpg", "000000000111.jpg", "000000000133.jpg", "000000000166.jpg"]
CASES = {
    "default": {"image_ids": True},
    "ltrb_ratio": {"ltrb": True, "ratio": True},
    "no_crowd_raw_labels": {"include_iscrowd": False, "avoid_class_remapping": True},
    "skip_empty": {"skip_empty": True, "image_ids": True},
    "size_threshold_20": {"size_threshold": 20.0},
    "size_threshold_0": {"size_threshold": 0.0, "image_ids": True},
    "polygons": {"polygon_masks": True, "image_ids": True},
    "polygons_ratio_ltrb": {"polygon_masks": True, "ratio": True, "ltrb": True},
    "legacy_masks": {"masks": True},
    "pixelwise": {"pixelwise_masks": True, "image_ids": True},
    "images_list": {"images": IMAGES, "image_ids": True, "_batch": len(IMAGES)},
    "shard_1_of_3": {"num_shards": 3, "shard_id": 1, "image_ids": True, "_batch": 4},
    "pad_last_batch": {"num_shards": 5, "shard_id": 4, "pad_last_batch": True,
                       "image_ids": True, "_batch": 4},
}
SAVES = {
    "save_plain": {},
    "save_polygons": {"polygon_masks": True, "image_ids": True, "ratio": True},
    "save_pixelwise": {"pixelwise_masks": True, "skip_empty": True, "ltrb": True},
}


def runs_of(mask: np.ndarray) -> list[list[int]]:
    flat = mask[..., 0].T.reshape(-1)  # column by column
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    starts = np.concatenate([[0], change])
    lengths = np.diff(np.concatenate([starts, [flat.size]]))
    return [[int(flat[s]), int(n)] for s, n in zip(starts, lengths, strict=True)]


def run(file_root: str, ann: str, args: dict) -> tuple[list, dict, list]:
    args = dict(args)
    batch = args.pop("_batch", N)

    @pipeline_def(batch_size=batch, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.readers.coco(file_root=file_root, annotations_file=ann,
                                     name="Reader", **args))

    p = pipe()
    p.build()
    outs = p.run()
    names = [t.source_info() for t in outs[0]]
    result = []
    for k, tl in enumerate(outs):
        samples = [np.array(t) for t in tl]
        if tl.layout() == "HWC":
            result.append({"layout": "HWC", "shapes": [list(s.shape) for s in samples],
                           "runs": [runs_of(s) for s in samples]})
        else:
            result.append({"layout": tl.layout(), "dtype": str(samples[0].dtype),
                           "values": [s.tolist() for s in samples],
                           "shapes": [list(s.shape) for s in samples]})
            if k == 0:
                result[-1] = {"sizes": [int(s.size) for s in samples]}
    return result, p.reader_meta("Reader"), [os.path.basename(n) for n in names]


def main() -> None:
    record: dict = {"dali": "2.4", "n": N, "cases": {}, "saves": {}}
    with tempfile.TemporaryDirectory() as tmp:
        file_root, ann = make_coco_dataset(tmp, images=N, seed=0)
        record["annotations"] = json.loads(pathlib.Path(ann).read_text())
        for name, args in CASES.items():
            outputs, meta, names = run(file_root, ann, args)
            record["cases"][name] = {"args": args, "outputs": outputs, "meta": meta,
                                     "files": names}
        for name, args in SAVES.items():
            folder = os.path.join(tmp, name)
            os.makedirs(folder)
            outputs, _, names = run(file_root, ann, {
                **args, "save_preprocessed_annotations": True,
                "save_preprocessed_annotations_dir": folder})
            files = {f: base64.b64encode((pathlib.Path(folder) / f).read_bytes()).decode()
                     for f in sorted(os.listdir(folder))}
            record["saves"][name] = {"args": args, "files": files, "outputs": outputs,
                                     "names": names}
    out = ROOT / "tests" / "data" / "dali_coco.json"
    out.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    print(f"wrote {out} ({out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()

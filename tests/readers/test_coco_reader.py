"""``fn.readers.coco`` against DALI 2.4's recorded outputs (tests/data/dali_coco.json).

The record holds the annotation file of a generated dataset (tests/data/record/
coco_reader.py) and one batch of DALI's outputs per case: boxes, labels, polygons,
vertices, image ids and reader_meta must be equal bit for bit; pixelwise masks equal
DALI's wherever DALI's merge keeps every mask (see ``_dali_drops_masks``), and everywhere
equal an independent painting from pycocotools' rasteriser. The preprocessed-annotation
files stoker writes must equal DALI's byte for byte, and DALI's load in stoker.
"""

from __future__ import annotations

import base64
import json
import pathlib

import numpy as np
import pytest

from stoker import fn, pipeline_def

pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")

RECORD = json.loads((pathlib.Path(__file__).parents[1] / "data" / "dali_coco.json").read_text())
ANNOTATIONS = RECORD["annotations"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> tuple[str, str]:
    """The recorded annotation file and one small file per image (distinct bytes)."""
    root = tmp_path_factory.mktemp("coco_replay")
    (root / "images").mkdir()
    for im in ANNOTATIONS["images"]:
        (root / "images" / im["file_name"]).write_bytes(
            f"image {im['id']} ".encode() * (1 + im["id"] % 7))
    ann = root / "annotations.json"
    ann.write_text(json.dumps(ANNOTATIONS))
    return str(root / "images"), str(ann)


def run_reader(file_root: str, batch: int, name: str = "Reader", **args) -> tuple[list, dict]:
    @pipeline_def(batch_size=batch, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.readers.coco(file_root=file_root, name=name, **args))

    p = pipe()
    p.build()
    outs = p.run()
    return [list(tl) for tl in outs] + [[t.source_info() for t in outs[0]]], p.reader_meta(name)


def decode_runs(runs: list, shape: list) -> np.ndarray:
    h, w = shape[0], shape[1]
    flat = np.repeat([v for v, _ in runs], [n for _, n in runs]).astype(np.int32)
    return flat.reshape(w, h).T


def _dali_drops_masks(image_id: int) -> bool:
    """Whether DALI 2.4's pixelwise merge loses a mask on this image: a label with both
    polygons and an RLE keeps only the polygons, a label with several RLEs only the last,
    the smallest label without any mask empties the whole map, and where two labels share
    the image's last pixel the lower one wins (stoker: every mask counts, higher label
    wins)."""
    cats = [c["id"] for c in ANNOTATIONS["categories"]]
    anns = [a for a in ANNOTATIONS["annotations"] if a["image_id"] == image_id
            and a["bbox"][2] >= 0.1 and a["bbox"][3] >= 0.1]
    kinds: dict[int, list[str]] = {}
    for a in anns:
        kinds.setdefault(cats.index(a["category_id"]) + 1, []).append(
            "rle" if isinstance(a["segmentation"], dict) else "poly")
    if not kinds:
        return False
    mixed = any("rle" in k and ("poly" in k or k.count("rle") > 1) for k in kinds.values())
    return mixed or not kinds[min(kinds)]


def painted_reference(image_id: int) -> np.ndarray:
    """The label map painted with pycocotools: every mask, higher label on top."""
    mask_api = pytest.importorskip("pycocotools.mask")
    im = next(i for i in ANNOTATIONS["images"] if i["id"] == image_id)
    h, w = im["height"], im["width"]
    cats = [c["id"] for c in ANNOTATIONS["categories"]]
    out = np.zeros((h, w), np.int32)
    for a in ANNOTATIONS["annotations"]:
        if a["image_id"] != image_id or a["bbox"][2] < 0.1 or a["bbox"][3] < 0.1:
            continue
        seg = a["segmentation"]
        if isinstance(seg, list):
            # DALI rasterises the float32 vertices it stores.
            polys = [np.asarray(p, np.float32).astype(np.float64).tolist() for p in seg]
            rle = mask_api.merge(mask_api.frPyObjects(polys, h, w))
        elif isinstance(seg["counts"], list):
            rle = mask_api.frPyObjects(seg, h, w)
        else:
            rle = {"size": seg["size"], "counts": seg["counts"].encode()}
        label = cats.index(a["category_id"]) + 1
        m = mask_api.decode(rle).astype(bool)
        out[m] = np.maximum(out[m], label)
    return out


def compare_case(case: dict, got: list, meta: dict, dataset: tuple[str, str]) -> None:
    file_root = pathlib.Path(dataset[0])
    names = [pathlib.Path(s).name for s in got[-1]]
    assert names == case["files"]
    for k, want in enumerate(case["outputs"]):
        samples = got[k]
        if k == 0:  # the undecoded bytes of each image file
            for name, s in zip(names, samples, strict=True):
                assert np.array(s).tobytes() == (file_root / name).read_bytes()
            continue
        if want.get("layout") == "HWC":
            ids = [int(np.array(s)[0]) for s in got[k + 1]]
            for j, s in enumerate(samples):
                arr = np.array(s)
                assert s.layout() == "HWC" and arr.dtype == np.int32
                assert list(arr.shape) == want["shapes"][j]
                dali = decode_runs(want["runs"][j], want["shapes"][j])
                if not _dali_drops_masks(ids[j]):
                    np.testing.assert_array_equal(arr[..., 0], dali, err_msg=f"image {ids[j]}")
                np.testing.assert_array_equal(arr[..., 0], painted_reference(ids[j]))
            continue
        for j, s in enumerate(samples):
            arr = np.array(s)
            assert str(arr.dtype) == want["dtype"], f"output {k}"
            assert list(arr.shape) == want["shapes"][j], f"output {k} sample {j}"
            np.testing.assert_array_equal(arr, np.array(want["values"][j], arr.dtype).reshape(
                want["shapes"][j]), err_msg=f"output {k} sample {j}")
    assert meta == case["meta"]


@pytest.mark.parametrize("name", sorted(RECORD["cases"]))
def test_outputs_equal_dalis(name, dataset):
    case = RECORD["cases"][name]
    args = dict(case["args"])
    batch = args.pop("_batch", RECORD["n"])
    if args.get("masks"):
        with pytest.warns(DeprecationWarning, match="polygon_masks"):
            got, meta = run_reader(dataset[0], batch, annotations_file=dataset[1], **args)
    else:
        got, meta = run_reader(dataset[0], batch, annotations_file=dataset[1], **args)
    compare_case(case, got, meta, dataset)


def test_the_record_exercises_dalis_dropped_masks_and_the_rest():
    ids = [im["id"] for im in ANNOTATIONS["images"]]
    dropped = [i for i in ids if _dali_drops_masks(i)]
    assert 0 < len(dropped) < len(ids) - 2


@pytest.mark.parametrize("name", sorted(RECORD["saves"]))
def test_saved_preprocessed_annotations_are_dalis_files(name, dataset, tmp_path):
    saved = RECORD["saves"][name]
    run_reader(dataset[0], RECORD["n"], annotations_file=dataset[1],
               save_preprocessed_annotations=True,
               save_preprocessed_annotations_dir=str(tmp_path), **saved["args"])
    ours = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    theirs = {f: base64.b64decode(b) for f, b in saved["files"].items()}
    assert sorted(ours) == sorted(theirs)
    for f in theirs:
        assert ours[f] == theirs[f], f


@pytest.mark.parametrize("name", sorted(RECORD["saves"]))
def test_dalis_preprocessed_annotations_load(name, dataset, tmp_path):
    saved = RECORD["saves"][name]
    for f, b in saved["files"].items():
        (tmp_path / f).write_bytes(base64.b64decode(b))
    args = {k: v for k, v in saved["args"].items() if k not in ("skip_empty", "ltrb")}
    got, _ = run_reader(dataset[0], len(saved["names"]),
                        preprocessed_annotations=str(tmp_path), **args)
    assert [pathlib.Path(s).name for s in got[-1]] == saved["names"]
    for k, want in enumerate(saved["outputs"][1:], start=1):
        if want.get("layout") == "HWC":
            continue  # compared through the JSON path above
        for j, s in enumerate(got[k]):
            np.testing.assert_array_equal(np.array(s), np.array(
                want["values"][j], np.array(s).dtype).reshape(want["shapes"][j]))


def test_pixelwise_masks_are_drawn_in_pixels_also_with_ratio(dataset, tmp_path):
    # DALI rasterises the relative vertices with ratio=True (an almost empty map); stoker
    # draws the same map with or without ratio, and from saved annotations too.
    plain, _ = run_reader(dataset[0], RECORD["n"], annotations_file=dataset[1],
                          pixelwise_masks=True)
    rel, _ = run_reader(dataset[0], RECORD["n"], annotations_file=dataset[1],
                        pixelwise_masks=True, ratio=True, save_preprocessed_annotations=True,
                        save_preprocessed_annotations_dir=str(tmp_path))
    saved, _ = run_reader(dataset[0], RECORD["n"], preprocessed_annotations=str(tmp_path),
                          pixelwise_masks=True, ratio=True)
    for a, b, c in zip(plain[3], rel[3], saved[3], strict=True):
        np.testing.assert_array_equal(np.array(a), np.array(b))
        np.testing.assert_array_equal(np.array(a), np.array(c))
    assert any(np.array(m).any() for m in plain[3])

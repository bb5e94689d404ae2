"""Every dataset of the offline mirror loads with the shapes its MANIFEST states.

The mirror is the ``shared/datasets`` folder beside the repository; these tests
skip when it is absent. Each uses a fresh cache, so they exercise the whole
file:// path: copy, checksum (MNIST, adult), decompression, parsing.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from rfrepro.data.registry import load_file_dataset
from rfrepro.data.schema import get_dataset_config, list_datasets

MIRROR = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"

pytestmark = [
    pytest.mark.mirror,
    pytest.mark.skipif(not (MIRROR / "MANIFEST.tsv").is_file(),
                       reason="offline dataset mirror not present"),
]

# name -> (task, train shape, test shape or None, classes); file-backed splits
# are the configs' own (official where a test file exists, else random 80/20)
SHAPES = {
    "cpusmall": ("regression", (6553, 12), (1639, 12), None),
    "cpuact": ("regression", (6553, 21), (1639, 21), None),
    "cadata": ("regression", (16512, 8), (4128, 8), None),
    "a9a": ("binary", (32561, 123), (16281, 123), 2),
    "letter": ("multiclass", (15000, 16), (5000, 16), 26),
    "letter_tr": ("multiclass", (10500, 16), (5000, 16), 26),
    "spambase": ("binary", (3680, 57), (921, 57), 2),
    "adult": ("binary", (30162, 104), (15060, 104), 2),
    "usps": ("multiclass", (7291, 256), (2007, 256), 10),
    "coil20": ("multiclass", (1152, 1024), (288, 1024), 20),
    "ijcnn1_val": ("binary", (11992, 22), (2998, 22), 2),
    "ujiindoorloc": ("regression", (19937, 520), (1111, 520), None),
    "blogfeedback": ("regression", (52397, 280), (7624, 280), None),
    "mnist": ("multiclass", (60000, 784), (10000, 784), 10),
}
# 3-10 s on a small machine (470 MB of float64 pixels); the idx parser and the
# checksum path are also covered by fast fixture tests
SLOW = {"mnist"}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mirror-cache")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in SHAPES])
def test_mirror_dataset_shapes(name, cache):
    task, train, test, n_classes = SHAPES[name]
    ds = load_file_dataset(get_dataset_config(name), data_dir=cache, mirror=MIRROR.as_uri(),
                           progress=False)
    assert ds.task == task and ds.meta["variant"] == name
    assert ds.X_train.shape == train and ds.X_test.shape == test
    assert (ds.meta["n_train"], ds.meta["n_test"]) == (train[0], test[0])
    if task == "binary":
        assert set(np.unique(ds.y_train)) == {-1.0, 1.0}
    elif task == "multiclass":
        labels = np.union1d(ds.y_train, ds.y_test)
        assert labels.tolist() == list(range(n_classes)) and ds.meta["n_classes"] == n_classes
    assert np.isfinite(ds.X_train).all()


def test_mirror_spot_values(cache):
    mirror = MIRROR.as_uri()
    cpu = load_file_dataset(get_dataset_config("cpu"), data_dir=cache, mirror=mirror)
    assert cpu.name == "cpu" and cpu.meta["variant"] == "cpuact" and cpu.n_features == 21
    adult = get_dataset_config("adult")
    adult["preprocess"] = "none"
    ds = load_file_dataset(adult, data_dir=cache, mirror=mirror)
    assert ds.X_train[0, 0] == 39.0  # first record of adult.data: age 39
    assert (ds.y_train == 1).sum() == 7508 and (ds.y_test == 1).sum() == 3700  # >50K rows
    coil = get_dataset_config("coil20")
    coil["split"] = {"kind": "none"}
    ds = load_file_dataset(coil, data_dir=cache, mirror=mirror)
    assert np.bincount(ds.y_train).tolist() == [72] * 20


def test_mirror_ujiindoorloc_columns(cache):
    uji = get_dataset_config("ujiindoorloc")
    uji["preprocess"] = "none"
    ds = load_file_dataset(uji, data_dir=cache, mirror=MIRROR.as_uri())
    assert ds.X_train.max() == 100.0  # RSSI 100 = access point not seen
    assert ds.X_train.min() >= -104.0  # only the 520 WAP columns, no ids or timestamps
    assert -7700 < ds.y_train.min() < ds.y_train.max() < -7200  # longitude (metres, UTM)


def test_manifest_digests_match_configs():
    """sha256 is pinned exactly where the MANIFEST says the bytes are the official ones."""
    with open(MIRROR / "MANIFEST.tsv", newline="") as f:
        rows = {r["url"]: r for r in csv.DictReader(f, delimiter="\t")}
    pinned = {}
    for name in list_datasets():
        for src in (get_dataset_config(name).get("sources") or {}).values():
            for key in ("url", "labels_url"):
                if src.get(key):
                    pinned[src[key]] = src.get("sha256" if key == "url" else "labels_sha256")
    official = {u: r["sha256"] for u, r in rows.items()
                if re.search(r"MD5 \S+ equals the", r["identity"])}
    assert len(official) == 6  # four MNIST idx files, adult.data, adult.test
    for url in rows.keys() & pinned.keys():
        assert pinned[url] == official.get(url), url
    assert set(official) <= set(pinned)

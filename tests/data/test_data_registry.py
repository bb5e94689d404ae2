"""Downloadable datasets: configs, loading through the real download path, caches, fallbacks."""

from __future__ import annotations

import bz2
import io
import zipfile

import numpy as np
import pytest
import yaml

from rfrepro.data import formats, load_dataset, schema
from rfrepro.data.cache import parsed_cache_path
from rfrepro.data.download import DatasetUnavailable, cache_path
from rfrepro.data.registry import load_file_dataset
from rfrepro.data.schema import get_dataset_config, list_datasets, validate_config

FAST = {"retries": 0, "backoff": 0.0, "timeout": (2.0, 5.0), "progress": False}

# 10 training rows (labels 1/2, 4 features, feature 4 only in the training file)
TRAIN = "".join(f"{1 + i % 2} 1:{i} 2:{i * 0.5} 4:1\n" for i in range(10))
TEST = "".join(f"{1 + i % 2} 1:{i} 3:{-i}\n" for i in range(4))


def libsvm_cfg(server, *, name="toy", task="binary", test=True, **extra) -> dict:
    cfg = {
        "name": name,
        "task": task,
        "sources": {"train": {"url": server.put(f"sets/{name}", TRAIN.encode()),
                              "format": "libsvm", "n_features": 4,
                              "expect": {"n_rows": 10, "n_features": 4}}},
        "preprocess": "none",
    }
    if test:
        cfg["sources"]["test"] = {"url": server.put(f"sets/{name}.t", TEST.encode()),
                                  "format": "libsvm", "n_features": 4}
    cfg.update(extra)
    return cfg


# ----------------------------------------------------------------------------- the registry


EXPECTED = {"cpu", "cpusmall", "cpuact", "cadata", "a9a", "blogfeedback", "slice",
            "ujiindoorloc", "mnist", "coil20", "spam", "spambase", "usps", "adult", "code_rna",
            "cod_rna", "cover", "forest", "covtype", "ijcnn1", "ijcnn1_val", "letter", "census",
            "susy", "acoustic"}


def file_configs():
    return [n for n in list_datasets() if "generator" not in get_dataset_config(n)]


def test_every_paper_dataset_has_a_config():
    assert EXPECTED <= set(list_datasets())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_configs_are_valid_and_named_after_their_file(name):
    cfg = get_dataset_config(name)
    validate_config(cfg)
    assert cfg["name"] == name
    for key in ("task", "split", "preprocess", "subsample"):
        assert key in cfg, f"{name}: missing {key} (experiments override it)"


def test_only_official_digests_are_pinned():
    # the MANIFEST vouches for the official bytes of MNIST and UCI adult only
    pinned = {n for n in file_configs()
              if any(s.get("sha256") or s.get("labels_sha256")
                     for s in (get_dataset_config(n).get("sources") or {}).values())}
    assert pinned == {"mnist", "adult"}


def test_shape_checks_where_no_digest():
    for name in file_configs():
        for role, src in (get_dataset_config(name).get("sources") or {}).items():
            assert (src.get("expect") or {}).get("n_rows"), f"{name}/{role} has no expect.n_rows"


def test_aliases_and_fallbacks():
    assert get_dataset_config("cpu")["alternatives"] == ["cpuact", "cpusmall"]
    assert get_dataset_config("spam")["alternatives"] == ["spambase"]
    assert get_dataset_config("code_rna")["alternatives"] == ["cod_rna"]
    assert get_dataset_config("cover")["keep_classes"] == [1, 2]
    assert "unclear" in get_dataset_config("census")["note"].lower()


def test_unknown_dataset_lists_valid_names():
    with pytest.raises(ValueError, match="unknown dataset 'nope'; valid datasets: .*cpusmall.*mnist"):
        get_dataset_config("nope")


# ----------------------------------------------------------------------------- loading


def test_load_official_split_binary_labels_and_meta(server, data_dir):
    cfg = libsvm_cfg(server)
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert ds.X_train.shape == (10, 4) and ds.X_test.shape == (4, 4)
    assert set(ds.y_train) == {-1.0, 1.0}
    np.testing.assert_array_equal(ds.y_test, [-1, 1, -1, 1])  # raw 2 -> +1
    np.testing.assert_array_equal(ds.X_test[2], [2, 0, -2, 0])
    m = ds.meta
    urls = [s["url"] for s in cfg["sources"].values()]
    assert m["source_urls"] == " ".join(urls)
    assert m["files"] == " ".join(str(cache_path(u, data_dir).relative_to(data_dir)) for u in urls)
    assert (m["variant"], m["n_train"], m["n_test"], m["subsample_seed"]) == ("toy", 10, 4, 0)
    assert m["classes"] == "1.0,2.0" and m["split"] == "official"


def test_random_split_subsample_and_preprocess(server, data_dir):
    cfg = libsvm_cfg(server, test=False, task="regression", preprocess="zscore",
                     split={"kind": "random", "test_size": 0.3, "seed": 1},
                     subsample={"n_train": 5, "n_test": 2, "seed": 3})
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert ds.X_train.shape == (5, 4) and ds.X_test.shape == (2, 4)
    assert (ds.meta["n_train"], ds.meta["n_test"], ds.meta["subsample_seed"]) == (5, 2, 3)
    assert ds.meta["preprocess"] == "zscore"
    again = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    np.testing.assert_array_equal(ds.X_train, again.X_train)  # seeded: reproducible
    cfg["subsample"]["n_train"] = 8
    with pytest.raises(ValueError, match="n_train=8 exceeds the 7 rows"):
        load_file_dataset(cfg, data_dir=data_dir, **FAST)


def test_split_none_pools_train_and_test(server, data_dir):
    cfg = libsvm_cfg(server, split={"kind": "none"})
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert ds.X_train.shape == (14, 4) and ds.X_test is None and ds.meta["n_test"] == 0


def test_multiclass_codes_shared_by_train_and_test(server, data_dir):
    train = "".join(f"{c} 1:{i}\n" for i, c in enumerate([3, 7, 9, 3, 7]))
    test = "9 1:0\n3 1:1\n"
    cfg = {"name": "mc", "task": "multiclass", "preprocess": "none", "sources": {
        "train": {"url": server.put("mc/tr", train.encode()), "format": "libsvm", "n_features": 1},
        "test": {"url": server.put("mc/te", test.encode()), "format": "libsvm", "n_features": 1}}}
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert ds.y_train.dtype == np.int64
    assert ds.y_train.tolist() == [0, 1, 2, 0, 1] and ds.y_test.tolist() == [2, 0]
    assert ds.meta["n_classes"] == 3 and ds.meta["classes"] == "3.0,7.0,9.0"


def test_keep_classes_and_positive(server, data_dir):
    rows = "".join(f"{c} 1:{i}\n" for i, c in enumerate([1, 2, 3, 2, 1, 3, 2]))
    cfg = {"name": "cov", "task": "binary", "preprocess": "none", "keep_classes": [1, 2],
           "positive": 1, "sources": {"all": {"url": server.put("cov", rows.encode()),
                                              "format": "libsvm", "n_features": 1,
                                              "expect": {"n_classes": 3}}},
           "split": {"kind": "none"}}
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert ds.y_train.tolist() == [1, -1, -1, 1, -1]
    assert ds.X_train[:, 0].tolist() == [0, 1, 3, 4, 6]


def test_bz2_source_and_float32(server, data_dir):
    cfg = libsvm_cfg(server, test=False, dtype="float32", split={"kind": "none"})
    cfg["sources"]["train"]["url"] = server.put("sets/toy.bz2", bz2.compress(TRAIN.encode()))
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert ds.X_train.dtype == np.float32 and ds.X_train.shape == (10, 4)
    with np.load(parsed_cache_path(cfg, data_dir)) as z:
        assert z["X_train"].dtype == np.float32


def test_csv_in_zip_with_glob_and_categories(server, data_dir):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("pkg/train.csv", "id,color,x,y\n1,red,0.5,1\n2,blue,1.5,0\n3,red,2.5,1\n")
        zf.writestr("pkg/test-2.csv", "id,color,x,y\n5,green,4.5,1\n")
        zf.writestr("pkg/test-1.csv", "id,color,x,y\n4,blue,3.5,0\n")
    url = server.put("z/data.zip", buf.getvalue())
    opts = {"url": url, "format": "csv", "header": True, "label": "y", "drop": ["id"],
            "categorical": ["color"]}
    cfg = {"name": "zipped", "task": "binary", "preprocess": "none", "categorical_fit": "train",
           "sources": {"train": {**opts, "member": "train.csv", "expect": {"n_rows": 3}},
                       "test": {**opts, "member": "test-*.csv", "expect": {"n_rows": 2}}}}
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    # columns: color=blue, color=red, x (categories from the training file only)
    np.testing.assert_array_equal(ds.X_train, [[0, 1, 0.5], [1, 0, 1.5], [0, 1, 2.5]])
    np.testing.assert_array_equal(ds.X_test, [[1, 0, 3.5], [0, 0, 4.5]])  # test-1 first
    assert ds.y_test.tolist() == [-1.0, 1.0]
    assert server.hits["/z/data.zip"] == 1  # one download for both roles


def test_manual_file_source(data_dir):
    cfg = {"name": "byhand", "task": "regression", "preprocess": "none",
           "sources": {"all": {"file": "manual/byhand.txt", "format": "libsvm", "n_features": 2}},
           "split": {"kind": "none"}}
    with pytest.raises(DatasetUnavailable, match="place the file at .*manual/byhand.txt"):
        load_file_dataset(cfg, data_dir=data_dir, **FAST)
    (data_dir / "raw" / "manual").mkdir(parents=True)
    (data_dir / "raw" / "manual" / "byhand.txt").write_text("1.5 1:1 2:2\n")
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert ds.X_train.tolist() == [[1.0, 2.0]] and ds.meta["source_urls"] == ""


def test_load_dataset_routes_file_configs(server, data_dir):
    ds = load_dataset(libsvm_cfg(server), data_dir=str(data_dir))
    assert ds.X_train.shape == (10, 4)


# ----------------------------------------------------------------------------- caches


def test_second_load_uses_parsed_cache(server, data_dir, monkeypatch):
    cfg = libsvm_cfg(server)
    calls = []
    real = formats.read_libsvm
    monkeypatch.setattr(formats, "read_libsvm", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert len(calls) == 2  # train and test parsed once
    assert parsed_cache_path(cfg, data_dir).is_file()
    second = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert len(calls) == 2  # nothing parsed again
    assert sum(server.hits.values()) == 2  # nothing downloaded again
    np.testing.assert_array_equal(first.X_test, second.X_test)
    # a different split or subsample reuses the same parse
    cfg["subsample"] = {"n_train": 3, "n_test": None, "seed": 0}
    assert load_file_dataset(cfg, data_dir=data_dir, **FAST).X_train.shape == (3, 4)
    assert len(calls) == 2


def test_truncated_parsed_cache_is_rebuilt(server, data_dir, monkeypatch):
    cfg = libsvm_cfg(server)
    first = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    npz = parsed_cache_path(cfg, data_dir)
    npz.write_bytes(npz.read_bytes()[:100])
    calls = []
    real = formats.read_libsvm
    monkeypatch.setattr(formats, "read_libsvm", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert len(calls) == 2
    np.testing.assert_array_equal(first.X_train, again.X_train)
    assert np.load(npz)["X_train"].shape == (10, 4)


def test_corrupt_raw_file_is_fetched_again(server, data_dir):
    cfg = libsvm_cfg(server, test=False, split={"kind": "none"})
    url = cfg["sources"]["train"]["url"]
    raw = cache_path(url, data_dir)
    raw.parent.mkdir(parents=True)
    raw.write_text("1 1:1\n1 1:")  # a cut-off copy left by some other tool
    ds = load_file_dataset(cfg, data_dir=data_dir, **FAST)
    assert ds.X_train.shape == (10, 4)
    assert server.hits["/sets/toy"] == 1 and raw.read_text() == TRAIN


def test_file_still_bad_after_refetch_names_it(server, data_dir):
    cfg = libsvm_cfg(server, test=False, split={"kind": "none"})
    url = server.put("sets/toy", b"1 1:1\n2 garbage\n")
    with pytest.raises(ValueError) as info:
        load_file_dataset(cfg, data_dir=data_dir, **FAST)
    msg = str(info.value)
    assert str(cache_path(url, data_dir)) in msg and "after a fresh fetch" in msg
    assert server.hits["/sets/toy"] == 2
    assert not parsed_cache_path(cfg, data_dir).exists()


def test_shape_mismatch_is_reported(server, data_dir):
    cfg = libsvm_cfg(server, test=False, split={"kind": "none"})
    cfg["sources"]["train"]["expect"] = {"n_rows": 11, "n_features": 4}
    with pytest.raises(ValueError, match="n_rows expected 11, got 10"):
        load_file_dataset(cfg, data_dir=data_dir, **FAST)


# ----------------------------------------------------------------------------- mirrors, fallbacks


def test_mirror_from_argument_config_key_and_env(tmp_path, data_dir, monkeypatch, closed_port):
    official = f"http://127.0.0.1:{closed_port}/sets/toy"
    mirror = tmp_path / "mirror"
    (mirror / f"127.0.0.1:{closed_port}" / "sets").mkdir(parents=True)
    (mirror / f"127.0.0.1:{closed_port}" / "sets" / "toy").write_text(TRAIN)
    cfg = {"name": "toy", "task": "binary", "split": {"kind": "none"}, "preprocess": "none",
           "sources": {"all": {"url": official, "format": "libsvm", "n_features": 4}}}
    assert load_file_dataset(cfg, data_dir=data_dir / "a", mirror=mirror.as_uri(),
                             **FAST).X_train.shape == (10, 4)
    assert load_file_dataset({**cfg, "mirror": mirror.as_uri()}, data_dir=data_dir / "b",
                             **FAST).X_train.shape == (10, 4)
    monkeypatch.setenv("RFREPRO_MIRROR", mirror.as_uri())
    assert load_file_dataset(cfg, data_dir=data_dir / "c", **FAST).X_train.shape == (10, 4)


def test_alternative_loads_when_primary_is_unreachable(server, data_dir, closed_port):
    alt = libsvm_cfg(server, name="backup", test=False, task="regression")
    primary = {"name": "wanted", "task": "regression", "preprocess": "none",
               "split": {"kind": "random", "test_size": 0.5, "seed": 0},
               "sources": {"all": {"url": f"http://127.0.0.1:{closed_port}/w", "format": "libsvm"}},
               "alternatives": [alt]}
    ds = load_file_dataset(primary, data_dir=data_dir, **FAST)
    assert ds.name == "wanted" and ds.meta["variant"] == "backup"
    assert ds.X_train.shape == (5, 4) and ds.X_test.shape == (5, 4)  # the primary's split


def test_all_variants_unavailable(data_dir, closed_port):
    def cfg(name):
        return {"name": name, "task": "regression",
                "sources": {"all": {"url": f"http://127.0.0.1:{closed_port}/{name}",
                                    "format": "libsvm"}}}

    alias = {"name": "alias", "task": "regression", "alternatives": [cfg("one"), cfg("two")]}
    with pytest.raises(DatasetUnavailable) as info:
        load_file_dataset(alias, data_dir=data_dir, **FAST)
    msg = str(info.value)
    assert "none of its variants (one, two)" in msg
    assert f"127.0.0.1:{closed_port}/one" in msg and f"127.0.0.1:{closed_port}/two" in msg
    assert msg.count("RFREPRO_MIRROR") == 2


def test_registry_alias_resolves_by_name(tmp_path, data_dir, monkeypatch):
    conf = tmp_path / "conf"
    (conf / "dataset").mkdir(parents=True)
    (conf / "dataset" / "real.yaml").write_text(yaml.safe_dump(
        {"name": "real", "task": "regression", "split": {"kind": "none"},
         "sources": {"all": {"file": "manual/real", "format": "libsvm"}}}))
    (data_dir / "raw" / "manual").mkdir(parents=True)
    (data_dir / "raw" / "manual" / "real").write_text("2 1:1\n3 1:2\n")
    monkeypatch.setattr(schema, "conf_dir", lambda: conf)
    assert list_datasets() == ["real"]
    ds = load_file_dataset({"name": "nick", "task": "regression", "alternatives": ["real"]},
                           data_dir=data_dir)
    assert ds.meta["variant"] == "real" and ds.y_train.tolist() == [2.0, 3.0]


# ----------------------------------------------------------------------------- bad configs


@pytest.mark.parametrize(("change", "message"), [
    ({"format": "arff"}, "unknown format 'arff'; valid formats: libsvm, csv, tsv, idx, mat"),
    ({"delimiter": ";"}, r"unknown keys \['delimiter'\] for format 'libsvm'"),
    ({"url": None}, "exactly one of url"),
    ({"url": "ftp://x/y"}, "must be an http:// or https:// URL"),
    ({"expect": {"rows": 3}}, r"unknown expect keys \['rows'\]"),
])
def test_bad_source_configs(change, message, data_dir):
    src = {"url": "http://127.0.0.1:9/x", "format": "libsvm", **change}
    cfg = {"name": "bad", "task": "binary", "sources": {"train": src}}
    with pytest.raises(ValueError, match=message):
        load_file_dataset(cfg, data_dir=data_dir)


@pytest.mark.parametrize(("cfg", "message"), [
    ({"name": "b", "task": "ranking", "sources": {}}, "task='ranking'; valid tasks"),
    ({"name": "b", "task": "binary"}, "needs sources"),
    ({"name": "b", "task": "binary", "sources": {"training": {}}}, "roles train"),
    ({"name": "b", "task": "binary", "split": {"kind": "official"},
      "sources": {"all": {"url": "http://127.0.0.1:9/x", "format": "libsvm"}}}, "needs a test"),
    ({"name": "b", "task": "binary", "split": {"kind": "kfold"},
      "sources": {"all": {"url": "http://127.0.0.1:9/x", "format": "libsvm"}}}, "split.kind='kfold'"),
    ({"name": "b", "task": "binary", "generator": "checkerboard"}, "is generated"),
    ({"name": "b", "task": "binary", "alternatives": ["no_such_set"]}, "unknown dataset 'no_such_set'"),
])
def test_bad_dataset_configs(cfg, message, data_dir):
    with pytest.raises(ValueError, match=message):
        load_file_dataset(cfg, data_dir=data_dir)


def test_corrupt_raw_file_while_offline_is_unavailable(data_dir, closed_port):
    url = f"http://127.0.0.1:{closed_port}/sets/toy"
    raw = cache_path(url, data_dir)
    raw.parent.mkdir(parents=True)
    raw.write_text("1 1:1\n1 1:")
    cfg = {"name": "toy", "task": "binary", "split": {"kind": "none"},
           "sources": {"all": {"url": url, "format": "libsvm"}}}
    with pytest.raises(DatasetUnavailable) as info:
        load_file_dataset(cfg, data_dir=data_dir, **FAST)
    msg = str(info.value)
    assert f"{raw} failed to parse" in msg and "was deleted" in msg and "RFREPRO_MIRROR" in msg
    assert not raw.exists()

"""Opening cached files (compressed, zipped) and the parsers: LIBSVM, delimited text (with one-hot), idx and .mat."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import struct
import zipfile

import numpy as np
import pytest
import scipy.io

from rfrepro.data import formats
from rfrepro.data.formats import ParseError, one_hot, read_idx, read_libsvm, read_mat, read_table

PAYLOAD = b"+1 1:0.5 3:2\n-1 2:1.5\n"


def b(text: str) -> io.BytesIO:
    return io.BytesIO(text.encode())


def test_libsvm_crlf_and_fixed_width():
    X, y = read_libsvm(b("1.5 1:2 3:4\r\n-2 2:1 \r\n"), n_features=5)
    assert X.shape == (2, 5)
    np.testing.assert_array_equal(X, [[2, 0, 4, 0, 0], [0, 1, 0, 0, 0]])
    np.testing.assert_array_equal(y, [1.5, -2.0])


def test_libsvm_float32():
    X, _ = read_libsvm(b("1 1:0.1\n"), n_features=1, dtype=np.float32)
    assert X.dtype == np.float32


@pytest.mark.parametrize("text", ["1 1:2 x:3\n", "1 9:1\n", "1 0:1\n"])
def test_libsvm_bad_content_is_parse_error(text):
    # a bad token, an index beyond n_features, a 0 index in a 1-based file
    with pytest.raises(ParseError, match="LIBSVM"):
        read_libsvm(b(text), n_features=3)


def test_table_header_label_by_name_and_drop():
    text = "id,a,b,target\n7,1.0,2.0,10.5\n8,3.0,4.0,11.5\n"
    X, y = read_table([b(text)], header=True, label="target", drop=["id"])
    assert list(X.columns) == ["a", "b"]
    np.testing.assert_array_equal(X.to_numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(y, [10.5, 11.5])


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_table_any_line_end(end):
    # UCI's spambase.data has CR line ends; the mirror's copy LF
    X, y = read_table([b(f"0,0.64,1{end}0.21,0.28,0{end}")])
    np.testing.assert_array_equal(X.to_numpy(), [[0, 0.64], [0.21, 0.28]])
    np.testing.assert_array_equal(y, [1, 0])


def test_table_whitespace_label_first_and_concatenation():
    one = "6.0000 -1 0.5 \n5.0000 0.25 1\n"
    two = "4.0000 1 -1\n"
    X, y = read_table([b(one), b(two)], delimiter="whitespace", label=0)
    assert X.shape == (3, 2)
    np.testing.assert_array_equal(y, [6, 5, 4])
    np.testing.assert_array_equal(X.to_numpy()[0], [-1, 0.5])


def test_table_adult_style_file():
    text = ("|1x3 Cross validator\n"
            "25, Private, 11th, <=50K.\n"
            "38, ?, HS-grad, >50K.\n"
            "28, Local-gov, HS-grad, >50K.\n"
            "\n")
    X, y = read_table([b(text)], skip_rows=1, label=3, categorical=[1, 2], na_values=["?"],
                      dropna=True, label_strip=".")
    assert X.shape == (2, 3)  # the row with '?' is dropped, the blank line ignored
    assert list(y) == ["<=50K", ">50K"]
    assert list(X[1]) == ["Private", "Local-gov"]


def test_table_missing_value_without_dropna_is_an_error():
    with pytest.raises(ParseError, match="missing value at row 1"):
        read_table([b("1,2\n?,3\n")], na_values=["?"])


def test_table_text_column_must_be_declared_categorical():
    with pytest.raises(ParseError, match="column 1 is not numeric"):
        read_table([b("1,red,0\n2,blue,1\n")], label=-1)


def test_table_unknown_label_name():
    with pytest.raises(ParseError, match="label='y' is not a column"):
        read_table([b("a,b\n1,2\n")], header=True, label="y")
    with pytest.raises(ValueError, match="no header"):
        read_table([b("1,2\n")], header=False, label="y")


def test_table_concatenated_files_must_agree():
    with pytest.raises(ParseError, match="column counts"):
        read_table([b("1,2\n"), b("1,2,3\n")])


def test_one_hot_fit_on_train_only_or_all():
    X_tr, _ = read_table([b("1,a,x,0\n2,b,x,1\n")], categorical=[1, 2])
    X_te, _ = read_table([b("3,c,x,0\n")], categorical=[1, 2])
    (tr, te), names = one_hot([X_tr, X_te], fit_on=[0])
    assert names == ["0", "1=a", "1=b", "2=x"]
    np.testing.assert_array_equal(tr, [[1, 1, 0, 1], [2, 0, 1, 1]])
    np.testing.assert_array_equal(te, [[3, 0, 0, 1]])  # unseen 'c' -> all zeros
    (tr, te), names = one_hot([X_tr, X_te], fit_on=[0, 1])
    assert names == ["0", "1=a", "1=b", "1=c", "2=x"]
    np.testing.assert_array_equal(te, [[3, 0, 0, 1, 1]])


def _idx(arr: np.ndarray, code: int = 0x08) -> bytes:
    head = bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return head + arr.astype(">u1").tobytes()


def test_idx_roundtrip_through_gzip():
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    with gzip.open(io.BytesIO(gzip.compress(_idx(images)))) as f:
        got = read_idx(f)
    np.testing.assert_array_equal(got, images)


def test_idx_truncated_or_foreign():
    images = np.zeros((5, 2, 2), dtype=np.uint8)
    with pytest.raises(ParseError, match="truncated"):
        read_idx(io.BytesIO(_idx(images)[:-3]))
    with pytest.raises(ParseError, match="magic"):
        read_idx(io.BytesIO(b"PK\x03\x04 not idx"))


def test_mat_keys_and_shapes():
    buf = io.BytesIO()
    scipy.io.savemat(buf, {"X": np.ones((4, 3)), "Y": np.array([[1], [2], [1], [2]], np.uint8)})
    buf.seek(0)
    X, y = read_mat(buf)
    assert X.shape == (4, 3) and y.tolist() == [1, 2, 1, 2]
    buf.seek(0)
    with pytest.raises(ParseError, match=r"lacks \['gnd'\]; it holds \['X', 'Y'\]"):
        read_mat(buf, y_key="gnd")


def test_mat_garbage_is_parse_error():
    with pytest.raises(ParseError, match=".mat"):
        read_mat(io.BytesIO(b"not a mat file at all" * 10))


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress, lambda b: b])
def test_open_decompressed_detects_by_content(tmp_path, compress):
    path = tmp_path / "file.bin"  # name says nothing: the magic bytes decide
    path.write_bytes(compress(PAYLOAD))
    with formats.open_decompressed(path) as f:
        assert f.read() == PAYLOAD


def test_zip_members_glob_and_basename(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("top/train.csv", "1,2\n")
        zf.writestr("top/test-02.csv", "3,4\n")
        zf.writestr("top/test-01.csv", "5,6\n")
        zf.writestr("empty/", "")
    assert formats.zip_members(path, "train.csv") == ["top/train.csv"]
    assert formats.zip_members(path, "test-*.csv") == ["top/test-01.csv", "top/test-02.csv"]
    assert formats.zip_members(path, "top/t*") == [
        "top/test-01.csv", "top/test-02.csv", "top/train.csv"]
    assert formats.open_zip_member(path, "top/test-01.csv").read() == b"5,6\n"


def test_open_streams_of_a_zip_member_or_a_bad_archive(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("top/x.csv", "1,2\n")
    assert [s.read() for s in formats.open_streams(path, "x.csv")] == [b"1,2\n"]
    with pytest.raises(ParseError, match="no member matching 'y.csv'"):
        formats.open_streams(path, "y.csv")
    path.write_bytes(b"PK not really")
    with pytest.raises(ParseError, match="not a readable zip archive"):
        formats.open_streams(path, "x.csv")

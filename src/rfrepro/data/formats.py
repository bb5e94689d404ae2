"""Parsers for the file formats the benchmark datasets come in.

Files are cached as served; :func:`open_decompressed` and the zip functions open
them as binary streams. Each parser takes such streams and returns the features
and the raw labels of one file; label encoding and one-hot encoding across the
train and test files are done by :mod:`rfrepro.data.parse`, which sees both.

Malformed data raises :class:`ParseError` (a ``ValueError``); the parsed cache
treats it as a corrupt cached file and fetches the file once more.
"""

from __future__ import annotations

import bz2
import fnmatch
import gzip
import io
import lzma
import os
import struct
import zipfile
import zlib
from collections.abc import Sequence
from typing import BinaryIO

import numpy as np
import pandas as pd

__all__ = [
    "FORMATS",
    "ParseError",
    "one_hot",
    "open_decompressed",
    "open_streams",
    "open_zip_member",
    "read_idx",
    "read_libsvm",
    "read_mat",
    "read_table",
    "zip_members",
]

FORMATS = ("libsvm", "csv", "tsv", "idx", "mat")

# What a damaged or truncated file raises from the decompressors, zipfile,
# scipy, pandas and sklearn; wrapped into ParseError so that callers can tell
# bad data from a bad config.
DATA_ERRORS = (ValueError, EOFError, OSError, zipfile.BadZipFile, zlib.error,
               UnicodeDecodeError, struct.error, pd.errors.ParserError, IndexError)


class ParseError(ValueError):
    """A file's content does not parse as its configured format."""


_MAGIC = (
    (b"\x1f\x8b", gzip.open),
    (b"BZh", bz2.open),
    (b"\xfd7zXZ\x00", lzma.open),
)


def open_decompressed(path: str | os.PathLike) -> BinaryIO:
    """Open a cached file for reading, decompressing gzip, bz2 or xz on the fly.

    The compression is read from the file's first bytes, not its name, so a
    server that already decompressed a ``.gz`` does not break the parser.
    """
    with open(path, "rb") as f:
        head = f.read(6)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            return opener(path, "rb")
    return open(path, "rb")  # noqa: SIM115 - the caller closes it


def zip_members(path: str | os.PathLike, pattern: str) -> list[str]:
    """Names of the members of zip ``path`` matching ``pattern`` (a glob), sorted.

    Folder entries are skipped; a pattern without a ``/`` also matches members
    inside folders by their base name (``trainingData.csv`` finds
    ``UJIndoorLoc/trainingData.csv``).
    """
    with zipfile.ZipFile(path) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
    if "/" in pattern:
        hits = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
    else:
        hits = [n for n in names if fnmatch.fnmatchcase(n.rsplit("/", 1)[-1], pattern)]
    return sorted(hits)


def open_zip_member(path: str | os.PathLike, member: str) -> BinaryIO:
    """Open one zip member as a binary stream (decompressed), fully read into memory.

    Reading the member whole surfaces a truncated or corrupt archive here (as
    ``zipfile.BadZipFile`` / ``EOFError``) rather than halfway through parsing.
    """
    with zipfile.ZipFile(path) as zf:
        return io.BytesIO(zf.read(member))


def open_streams(path: str | os.PathLike, member: str | None) -> list[BinaryIO]:
    """The binary streams of one cached file: the file itself, or its zip members matching ``member``.

    Several matching members are returned in name order (read and concatenated
    by :func:`read_table`). An unreadable archive raises :class:`ParseError`.
    """
    if member is None:
        return [open_decompressed(path)]
    try:
        names = zip_members(path, member)
        if not names:
            raise ParseError(f"zip archive has no member matching {member!r}")
        return [open_zip_member(path, n) for n in names]
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise ParseError(f"not a readable zip archive: {e}") from e


def read_libsvm(
    stream: BinaryIO, *, n_features: int | None = None, zero_based: bool = False,
    dtype: type = np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """Read a LIBSVM / svmlight file into a dense array.

    ``n_features`` fixes the width so that a train and a test file agree even
    when the highest feature index is absent from one of them. LIBSVM's data
    sets index features from 1, hence ``zero_based=False``. CRLF line ends are
    accepted.
    """
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(stream, n_features=n_features, zero_based=zero_based,
                                  dtype=dtype)
    except DATA_ERRORS as e:
        raise ParseError(f"not a valid LIBSVM file: {e}") from e
    return X.toarray(), y


def _column_index(columns: Sequence, key, *, header: bool, what: str) -> int:
    """Position of column ``key``: a name (with a header) or an int position (negative ok)."""
    n = len(columns)
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise ValueError(f"{what}={key!r}: give a column position (int) or a header name (str)")
    if isinstance(key, int):
        if not -n <= key < n:
            raise ParseError(f"{what}={key} is out of range for {n} columns")
        return key % n
    if not header:
        raise ValueError(f"{what}={key!r} names a column but the file has no header (header: false)")
    names = [str(c) for c in columns]
    if key not in names:
        raise ParseError(f"{what}={key!r} is not a column; columns are {names[:8]}...")
    return names.index(key)


def read_table(
    streams: Sequence[BinaryIO],
    *,
    delimiter: str = ",",
    header: bool = False,
    label: int | str = -1,
    drop: Sequence[int | str] = (),
    categorical: Sequence[int | str] = (),
    na_values: Sequence[str] = (),
    dropna: bool = False,
    skip_rows: int = 0,
    label_strip: str | None = None,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Read delimited text (csv / tsv / whitespace) from one or more streams.

    Parameters
    ----------
    streams : sequence of binary streams
        Read in order and concatenated (e.g. BlogFeedback's 60 daily test files);
        they must have the same columns.
    delimiter : str
        Field separator; ``"whitespace"`` for runs of blanks (ESL's USPS files).
    header : bool
        First line (after ``skip_rows``) holds column names.
    label : int or str
        Label column: position (negative counts from the end) or header name.
    drop : sequence of int or str
        Columns that are neither label nor feature (ids, other targets).
    categorical : sequence of int or str
        Columns kept as strings for one-hot encoding (see :func:`one_hot`);
        every other feature column must be numeric.
    na_values : sequence of str
        Extra strings meaning "missing" (adult uses ``?``).
    dropna : bool
        Drop rows with a missing value; otherwise a missing value is an error.
    skip_rows : int
        Lines to skip at the top (adult.test starts with ``|1x3 Cross validator``).
    label_strip : str, optional
        Characters stripped from the end of string labels (adult.test's labels
        end with ``.``).

    Returns
    -------
    features : pandas.DataFrame
        Feature columns in file order (label and ``drop`` removed); the
        categorical ones as strings.
    y : numpy.ndarray
        Raw labels (numbers or strings).
    """
    sep = r"\s+" if delimiter == "whitespace" else delimiter
    frames = []
    for stream in streams:
        try:
            frames.append(pd.read_csv(
                stream, sep=sep, header=0 if header else None, skiprows=skip_rows,
                na_values=list(na_values) or None, skipinitialspace=True,
                skip_blank_lines=True,
            ))
        except DATA_ERRORS as e:
            raise ParseError(f"not a valid delimited text file: {e}") from e
    if not frames:
        raise ParseError("no table to read")
    widths = {f.shape[1] for f in frames}
    if len(widths) != 1:
        raise ParseError(f"concatenated files have different column counts {sorted(widths)}")
    if header:
        heads = {tuple(f.columns) for f in frames}
        if len(heads) != 1:
            raise ParseError("concatenated files have different headers")
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    df.columns = list(frames[0].columns) if header else list(range(df.shape[1]))
    cols = list(df.columns)
    lab = _column_index(cols, label, header=header, what="label")
    dropped = {_column_index(cols, c, header=header, what="drop") for c in drop}
    cats = {_column_index(cols, c, header=header, what="categorical") for c in categorical}
    if lab in dropped or lab in cats:
        raise ValueError("the label column is also listed in drop/categorical")
    if dropna:
        df = df.dropna(axis=0, how="any").reset_index(drop=True)
    elif df.isna().to_numpy().any():
        where = np.argwhere(df.isna().to_numpy())[0]
        raise ParseError(f"missing value at row {where[0]}, column {cols[where[1]]!r}; "
                         "set dropna: true or fix na_values")
    ycol = df.iloc[:, lab]
    if pd.api.types.is_numeric_dtype(ycol):
        y = ycol.to_numpy(dtype=np.float64)
    else:
        ys = ycol.astype(str).str.strip()
        if label_strip:
            ys = ys.str.rstrip(label_strip)
        y = ys.to_numpy(dtype=str)
    keep = [i for i in range(len(cols)) if i != lab and i not in dropped]
    for i in keep:
        col = df.iloc[:, i]
        if i not in cats and not pd.api.types.is_numeric_dtype(col):
            bad = col.astype(str)[pd.to_numeric(col, errors="coerce").isna()].iloc[0]
            raise ParseError(f"column {cols[i]!r} is not numeric (value {bad!r}; list it "
                             "under categorical?)")
    # positional selection keeps pandas' column blocks (no per-column rebuild of
    # a 50k x 280 table)
    features = df.iloc[:, keep]
    if cats:
        features = features.copy()
        for i in sorted(cats):
            features[cols[i]] = df.iloc[:, i].astype(str).str.strip()
    return features, y


def one_hot(
    frames: Sequence[pd.DataFrame], *, fit_on: Sequence[int], dtype: type = np.float64,
) -> tuple[list[np.ndarray], list[str]]:
    """One-hot encode the string columns of several tables with shared categories.

    The categories of each string column are the sorted category names seen in
    the tables indexed by ``fit_on`` (e.g. only the training table); a category
    absent there encodes as all zeros. Numeric columns pass through unchanged,
    and every output keeps the column order of the input (each string column
    replaced by its indicator block).

    Returns the dense arrays and the output column names.
    """
    if not frames:
        return [], []
    cols = list(frames[0].columns)
    string_cols = [c for c in cols if not pd.api.types.is_numeric_dtype(frames[0][c])]
    categories = {
        c: sorted(set().union(*(set(frames[i][c].astype(str).unique()) for i in fit_on)))
        for c in string_cols
    }
    names: list[str] = []
    for c in cols:
        names += [f"{c}={v}" for v in categories[c]] if c in categories else [str(c)]
    outs = []
    for f in frames:
        blocks = []
        for c in cols:
            if c in categories:
                cats = np.asarray(categories[c], dtype=str)
                vals = f[c].to_numpy(dtype=str)
                codes = np.searchsorted(cats, vals).clip(0, max(len(cats) - 1, 0))
                seen = cats[codes] == vals if len(cats) else np.zeros(len(vals), bool)
                block = np.zeros((len(f), len(cats)), dtype=dtype)
                block[np.flatnonzero(seen), codes[seen]] = 1.0
                blocks.append(block)
            else:
                blocks.append(f[c].to_numpy(dtype=dtype)[:, None])
        outs.append(np.hstack(blocks) if blocks else np.empty((len(f), 0), dtype=dtype))
    return outs, names


def read_idx(stream: BinaryIO) -> np.ndarray:
    """Read an idx file (MNIST's format): magic, dims, then the raw array, big endian."""
    try:
        head = stream.read(4)
        if len(head) != 4 or head[0] != 0 or head[1] != 0:
            raise ParseError("not an idx file (bad magic number)")
        types = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
        if head[2] not in types:
            raise ParseError(f"idx file with unknown element type 0x{head[2]:02x}")
        ndim = head[3]
        dims = struct.unpack(f">{ndim}I", stream.read(4 * ndim))
        dt = np.dtype(types[head[2]])
        count = int(np.prod(dims))
        body = stream.read(count * dt.itemsize)
    except (EOFError, OSError, zlib.error, gzip.BadGzipFile, struct.error) as e:
        raise ParseError(f"truncated or corrupt idx file: {e}") from e
    if len(body) != count * dt.itemsize:
        raise ParseError(f"idx file truncated: {len(body)} of {count * dt.itemsize} bytes")
    return np.frombuffer(body, dtype=dt).reshape(dims)


def read_mat(stream: BinaryIO, *, x_key: str = "X", y_key: str = "Y") -> tuple[np.ndarray, np.ndarray]:
    """Read features ``x_key`` (rows = samples) and labels ``y_key`` from a MATLAB .mat file."""
    import scipy.io

    try:
        mat = scipy.io.loadmat(stream)
    except DATA_ERRORS as e:
        raise ParseError(f"not a readable .mat file: {e}") from e
    missing = [k for k in (x_key, y_key) if k not in mat]
    if missing:
        found = sorted(k for k in mat if not k.startswith("__"))
        raise ParseError(f".mat file lacks {missing}; it holds {found}")
    X = np.asarray(mat[x_key])
    y = np.asarray(mat[y_key]).ravel()
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise ParseError(f".mat {x_key} shape {X.shape} does not match {y_key} length {y.shape[0]}")
    return X, y

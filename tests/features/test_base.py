"""One validation path for every map: the declared constraints, checked at fit; what a fit records."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import rfrepro.features as features
from rfrepro.features._base import FeatureMap, fitted_summary
from rfrepro.features.hadamard import SRHT

MAPS = [getattr(features, name) for name in features.__all__
        if inspect.isclass(getattr(features, name)) and issubclass(getattr(features, name), FeatureMap)]
#: small inputs inside the unit ball, which every map's default kernel accepts
_X = np.random.RandomState(0).rand(40, 3) / 2


@pytest.mark.parametrize("cls", MAPS, ids=lambda c: c.__name__)
def test_fit_records_n_features_out_and_what_n_components_counts(cls):
    params = {"n_components": 4} if "n_components" in cls().get_params() else {}
    if cls.__name__ == "RFFSelection":
        params = {"max_components": 20, "chunk_size": 5, "n_landmarks": 10}
    summary = fitted_summary(cls(**params).fit(_X))
    assert summary["n_features_out"] > 0
    if "n_components" in cls().get_params() or cls.__name__ == "RFFSelection":
        assert summary.get("n_components_counts") in ("columns", "frequencies"), cls.__name__
        assert f'n_components_counts = "{cls.n_components_counts}"' in " ".join(inspect.getdoc(cls).split())
    else:
        assert "n_components_counts" not in summary


@pytest.mark.parametrize("cls", [c for c in MAPS if "n_components" in c().get_params()], ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", [0, -2, 2.5, True, "8"])
def test_a_bad_n_components_is_one_line_naming_it(cls, bad):
    with pytest.raises(InvalidParameterError, match=rf"^The 'n_components' parameter of {cls.__name__} must be "
                                                    r"an int in the range \[1, inf\)\. Got .* instead\.$") as e:
        cls(n_components=bad).fit(_X)
    assert "\n" not in str(e.value)


def test_columns_and_frequencies_differ_for_cossin():
    rff = features.RandomFourierFeatures(4, variant="cossin", random_state=0).fit(_X)
    assert fitted_summary(rff) == {"n_features_out": 8, "n_components_counts": "frequencies"}
    tefm = features.TEFMS(4, random_state=0).fit(_X)
    assert fitted_summary(tefm) == {"n_features_out": 4, "n_components_counts": "columns"}


@pytest.mark.parametrize("bad", [0, True, 1.5])
def test_srht_checks_its_sizes_by_the_same_constraints(bad):
    with pytest.raises(InvalidParameterError, match=r"'n_components' parameter of SRHT must be an int"):
        SRHT(8, bad)
    assert SRHT(np.int64(8), 4).n_features_in == 8

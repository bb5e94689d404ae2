"""scikit-learn's own estimator checks on the feature maps and models.

Skipped: ``check_array_api_input`` skips itself unless SCIPY_ARRAY_API=1 is
set before scipy is imported; the maps are numpy-only. The maps of the paper
modules (Fastfood, Quasi, Comp, TEFM, leverage) run the same checks in their
own test files.
"""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from rfrepro.features import ExactKernel, Nystroem, RandomFourierFeatures, RFFSelection

ESTIMATORS = [
    RandomFourierFeatures(n_components=20, random_state=0),
    RandomFourierFeatures(n_components=10, variant="cossin", random_state=0),
    RandomFourierFeatures(n_components=20, kernel="laplacian", random_state=0),
    RandomFourierFeatures(n_components=20, sigma="median", random_state=0),
    # more landmarks than the checks' 10-30 training rows: every row is used, with a warning
    Nystroem(n_components=100, random_state=0),
    ExactKernel(),
    ExactKernel(kernel="polynomial", degree=3),
    RFFSelection(max_components=20, chunk_size=5, n_landmarks=50, random_state=0),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)

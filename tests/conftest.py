"""Settings every test shares."""

import os

# Runs record ``roofline: null`` unless a test turns the host measurement on (with tiny sizes
# and a temporary cache): the suite must not spend seconds measuring, nor write to the user's cache.
os.environ.setdefault("RFREPRO_ROOFLINE", "off")

# --doctest-modules would import this file a second time as a test module, under the name
# another directory's conftest already holds; it has no doctests
collect_ignore = ["conftest.py"]

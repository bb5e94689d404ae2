"""Whether the host was busy while a study's timed runs ran: the guard of every timing claim.

Each record keeps the 1-minute load average at its start (``host_load``). A
timing study runs one run at a time, so the sweep itself keeps the load at
about its thread count, never above the cores (its idle BLAS threads sleep:
:data:`rfrepro.BLAS_IDLE_ENV`); a median load above
``cores + BUSY_MARGIN`` means other work held at least half a core beyond
them, and the times say more about the host than about the code. Timing
claims judged on such runs are ``inconclusive``, never pass or fail
(:func:`unless_busy`).

>>> import pandas as pd
>>> host_busy(pd.DataFrame({LOAD: [0.9, 1.1, 3.2], CORES: [2, 2, 2]}))
(False, "median 1-minute host load 1.10 on 2 cores at the runs' start")
>>> host_busy(pd.DataFrame({LOAD: [2.7, 2.9], CORES: [2, 2]}))[0]
True
"""

from __future__ import annotations

import pandas as pd

from rfrepro.harness.report.claims import withhold

LOAD, CORES = "host_load.start_1min", "host_load.cores"
#: how far above the cores the median load may go before the times are not evidence
BUSY_MARGIN = 0.5


def host_busy(sub: pd.DataFrame) -> tuple[bool, str]:
    """Whether the host was busy during ``sub``'s runs, and the sentence saying so (or why unknown)."""
    if LOAD not in sub or sub[LOAD].isna().all():
        return False, "host load not recorded for these runs"
    load, cores = float(sub[LOAD].median()), int(sub[CORES].max())
    text = f"median 1-minute host load {load:.2f} on {cores} cores at the runs' start"
    return load > cores + BUSY_MARGIN, text


def unless_busy(claim: dict, busy: bool, text: str, why: str = "the times are not evidence either way") -> dict:
    """``claim``, made ``inconclusive`` when its pass or fail rests on a busy host's times.

    The verdict the times gave stays as ``measured_verdict``; the reason says
    the load (``text``, from :func:`host_busy`) and ``why`` it does not count.

    >>> c = unless_busy({"verdict": "fail", "reason": "ratio 0.8"}, True, "load 3.6 on 2 cores")
    >>> c["verdict"], c["measured_verdict"], c["reason"]
    ('inconclusive', 'fail', 'host busy (load 3.6 on 2 cores, above cores + 0.5): the times are not evidence either way; ratio 0.8')
    """
    if busy and claim["verdict"] in ("pass", "fail"):
        withhold(claim, f"host busy ({text}, above cores + {BUSY_MARGIN}): {why}")
    return claim

"""A run caught by a worker crash is retried after the others, alone (a run killed for memory gets the machine)."""

import os
import time
from types import SimpleNamespace

from rfrepro.harness.run import pools as sweep


def _work(p, parent, executor):
    """Stands in for run_planned in the pool's workers: the victim kills its worker once."""
    start = time.time()
    if p.run_id == "victim" and not os.path.exists(p.flag):
        open(p.flag, "w").close()
        time.sleep(0.2)  # let the runs beside it start, so the crash catches them too
        os._exit(1)
    time.sleep(0.3)
    return {"run_id": p.run_id, "status": "ok", "start": start, "end": time.time()}


class _Bar:
    def update(self, n=1):
        pass


def test_crashed_runs_are_retried_one_at_a_time_after_the_rest(tmp_path, monkeypatch):
    died = []
    monkeypatch.setattr(sweep, "_worker_died",
                        lambda p, exc, attempt: died.append(p.run_id) or {"run_id": p.run_id, "status": "failed"})
    flag = str(tmp_path / "died-once")
    todo = [SimpleNamespace(run_id=name, flag=flag) for name in ("victim", "a", "b", "c", "d", "e")]
    results = []
    sweep._run_pool(todo, 2, _Bar(), results, submit=_work)
    ok = {r["run_id"]: r for r in results if r["status"] == "ok"}
    assert set(ok) == {"victim", "a", "b", "c", "d", "e"} and "victim" in died
    retried = list(died)  # the victim and whatever ran beside it
    others = [r for name, r in ok.items() if name not in retried]
    assert others, "some runs were not caught by the crash"
    for name in retried:
        r = ok[name]
        # after every run that was not retried, and overlapping no other retried run
        assert all(r["start"] >= o["end"] for o in others)
        assert all(r["start"] >= ok[m]["end"] or r["end"] <= ok[m]["start"] for m in retried if m != name)

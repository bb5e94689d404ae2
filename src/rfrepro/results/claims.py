"""Claims: a paper's statement, the number we measured, and a verdict."""

from __future__ import annotations

VERDICTS = ("pass", "fail", "not-run")


def claim(cid: str, statement: str, measured, passed: bool | None, note: str = "") -> dict:
    """One evaluated claim; ``passed=None`` means it could not be run (data unavailable)."""
    verdict = "not-run" if passed is None else ("pass" if passed else "fail")
    return {"id": cid, "statement": statement, "measured": measured, "verdict": verdict, "note": note}

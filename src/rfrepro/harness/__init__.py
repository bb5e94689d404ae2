"""Orchestration and presentation, in three rooms that never import upward:

- ``run/``: composing a study's configs, its grid and plan, checks before dispatch, process pools
  and Dask, the console summary and exit statuses;
- ``report/``: a study's outputs from its records, claims and their statistics, plots, the
  scorecard, REPORT.md and the site;
- the entry points (``cli``, ``multirun``, ``reproduce``, ``reference``, ``report_cli``), which nothing imports.

What both sides need lives in small shared modules: ``paths`` (results roots, writability, a full
disk), ``planfile`` (the saved-plan file) and ``catalog`` (config folders, each group's options).
No module here is in a run's code (``rfrepro.runner.code``): editing one keeps every record.
``tests/test_import_graph.py`` holds the structure.
"""

"""Reporting on a results folder: a study's outputs from its records, claims and their statistics, plots,
the scorecard model, REPORT.md and the HTML site."""

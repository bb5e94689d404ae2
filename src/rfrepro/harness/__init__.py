"""Orchestration and presentation: sweeps, pools, outputs, claims, plots, report, CLI.

Never hashed into the code version (``rfrepro.runner.identity.ORCHESTRATION``).
"""

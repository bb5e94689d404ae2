"""Run records, the tidy results table, and claims."""

from rfrepro.results.claims import judge, mean_interval, not_run, paired_values
from rfrepro.results.store import RecordStore, atomic_write_text, records_to_table

__all__ = ["RecordStore", "atomic_write_text", "judge", "mean_interval", "not_run", "paired_values",
           "records_to_table"]

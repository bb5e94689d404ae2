"""Run records, the tidy results table, and claims."""

from rfrepro.results.claims import claim
from rfrepro.results.store import RecordStore, atomic_write_text, records_to_table

__all__ = ["RecordStore", "atomic_write_text", "claim", "records_to_table"]

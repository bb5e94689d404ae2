"""Running a study: composing its configs, its grid and plan, checking them, and sending its runs to
process pools or a Dask cluster, with the console summary and exit statuses."""

"""``s3vm bench``: benchmark suites (instances x formulations x settings x seeds in one TOML
file), run on a local pool or a Dask cluster, each result appended to a results file.

A face: may import anything below it (the API, formulations, data, solvers); nothing below
imports it.
"""

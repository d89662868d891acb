"""Data in: the validated :class:`~s3vm.data.instance.Instance` and its readers (CSV, LIBSVM,
arrays, data frames), the bundled data sets (:mod:`~s3vm.data.loaders`), seeded generators,
explicit feature scaling and the resources shipped inside the package.

May import: :mod:`s3vm.solvers` (errors, runtime), :mod:`s3vm.instances`. Nothing above.
"""

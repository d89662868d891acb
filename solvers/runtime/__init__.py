"""What every solve runs inside: the clock and its time limit (:mod:`~s3vm.solvers.runtime.clock`),
the supervisor that holds the limit and turns signals into results
(:mod:`~s3vm.solvers.runtime.supervisor`), the solves and calls it isolates in child processes
(:mod:`~s3vm.solvers.runtime.processes`), native output kept off stdout
(:mod:`~s3vm.solvers.runtime.stdio`), the memory guard (:mod:`~s3vm.solvers.runtime.memory`) and
safe file output (:mod:`~s3vm.solvers.runtime.files`).

May import: :mod:`s3vm.solvers.errors`. Nothing of S3VM, nothing else of the solver layer.
"""

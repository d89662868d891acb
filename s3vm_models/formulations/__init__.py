"""One module per registered formulation, named after its registry name (``bd-mip`` is
:mod:`~s3vm.formulations.bd_mip`), each a subclass of a family base in
:mod:`s3vm.formulations.families` that declares what it solves.

May import: :mod:`~s3vm.formulations.families`, :mod:`s3vm.bounds`, :mod:`s3vm.models`,
:mod:`s3vm.core`, :mod:`s3vm.data`, :mod:`s3vm.solvers`. A formulation may subclass another
(``cvs3vm`` extends ``vs3vm``, said in its docstring) but uses no other formulation's helpers;
nothing here imports a face.
"""

# Each problem's objective at a labeling, which scores the fallback labels a stopped solve
# answers, is registered by the family package: imported here, so that a formulation built
# on the core's Formulation alone (switching) has it too. Without it, switching's fallback had
# no objective: a signal before its first labeling waited the 2 s grace, not 0.4 s.
from s3vm.formulations.families import labeling  # noqa: E402,F401

"""The contracts every formulation shares: the formulation base and its solve pipeline
(:mod:`~s3vm.core.formulation`), option tables (:mod:`~s3vm.core.options`), problem settings and
instance files (:mod:`~s3vm.core.settings`), the registry of formulation names
(:mod:`~s3vm.core.registry`), the three problems of docs/formulations.md
(:mod:`~s3vm.core.problems`), kernel matrices (:mod:`~s3vm.core.kernels`) and the supervised
SVM the pipeline falls back on (:mod:`~s3vm.core.supervised`).

May import: :mod:`s3vm.data`, :mod:`s3vm.solvers`. Never: models, bounds, formulations or a face
(the registry names formulations as ``"module:Class"`` strings, imported on first use).
"""

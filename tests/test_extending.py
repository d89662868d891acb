"""Adding a formulation from outside the package (docs/extending.md): the page's own code runs,
and a formulation registered that way is a formulation like the others."""

from __future__ import annotations

import os
import re

import pytest

import s3vm
from s3vm.core import registry
from s3vm.data.generators import gaussian_blobs
from s3vm.solvers.errors import InputError

from reference import l2_objective

PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                    "extending.md")


def page_code() -> list:
    """The page's python code blocks, in order."""
    with open(PAGE, encoding="utf-8") as fh:
        return re.findall(r"```python\n(.*?)```", fh.read(), flags=re.S)


@pytest.fixture
def own_registry(monkeypatch):
    # Registrations made by a test stay in that test.
    monkeypatch.setattr(registry, "FORMULATIONS", dict(registry.FORMULATIONS))


@pytest.fixture
def toy(own_registry):
    namespace = {"__name__": "extending_page"}
    for block in page_code():
        exec(compile(block, PAGE, "exec"), namespace)
    return namespace


def test_the_page_has_its_worked_example():
    blocks = page_code()
    assert len(blocks) >= 2 and "register_formulation" in blocks[0]


@pytest.mark.slow
def test_the_page_runs(toy, capsys):
    assert "supervised-l2" in s3vm.formulation_names()
    assert toy["clf"].decision_rule_ == "expansion"  # from problem = 1, no table entry


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("balance", ["count", "none"])
def test_a_registered_formulation_solves_checks_and_predicts(toy, balance):
    instance = gaussian_blobs(n=24, n_labeled_per_class=3, seed=3)
    result = s3vm.solve(instance, "supervised-l2", kernel="rbf", sigma=1.0, C=5.0, C_star=2.0,
                        balance=balance)
    settings = s3vm.Settings(kernel="rbf", sigma=1.0, C=5.0, C_star=2.0, balance=balance)
    # Its objective is J of Problem 1 at its labels, computed here from the definition.
    assert result.objective == pytest.approx(l2_objective(instance, settings, result.labels),
                                             rel=1e-5)
    if balance == "count":
        assert (result.labels == 1).sum() == settings.positive_count(instance)
    # The pipeline completed the result as for every formulation.
    assert result.info["settings"]["balance"] == balance and result.seconds >= 0
    # A setting it does not read is an error, as for the shipped formulations.
    with pytest.raises(InputError, match="mu"):
        s3vm.solve(instance, "supervised-l2", mu=0.5)


@pytest.mark.slow
def test_the_registry_refuses_a_taken_name_and_a_mismatched_class(toy):
    cls = s3vm.core.registry.formulation_class("supervised-l2")
    with pytest.raises(InputError, match="already registered"):
        registry.register_formulation("bb", cls)
    with pytest.raises(InputError, match="must set name"):
        registry.register_formulation("other-name", cls)
    registry.register_formulation("supervised-l2", cls)  # the same again is no change


def test_registration_does_not_outlive_the_test():
    assert "supervised-l2" not in s3vm.formulation_names()


def test_every_declaration_speaks_the_named_vocabularies():
    # The problem classes and model kinds are named once (s3vm.solvers.vocabulary); a
    # formulation or a backend declaring another word would be matched by nothing.
    from s3vm.solvers.lazy import lookup
    from s3vm.solvers.registry import BACKENDS, DEFAULT_SOLVERS
    from s3vm.solvers.vocabulary import MODEL_KINDS, PROBLEM_CLASSES

    for name in s3vm.formulation_names():
        assert registry.formulation_class(name).problem_class in PROBLEM_CLASSES, name
    assert set(DEFAULT_SOLVERS) <= set(PROBLEM_CLASSES)
    for solver, classes in BACKENDS.items():
        assert set(classes) <= set(PROBLEM_CLASSES), solver
        for key in classes:
            try:
                backend = lookup(classes, key, "problem class")
            except ImportError:  # an optional solver library that is not installed
                continue
            assert backend.model_kind in MODEL_KINDS, (solver, key)

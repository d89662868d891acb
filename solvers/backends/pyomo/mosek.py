"""MOSEK through the `mosek` Python package and Pyomo's direct interface (needs a licence)."""

from typing import Optional

from s3vm.solvers.backends.pyomo.legacy import PyomoLegacyBackend


def mosek_licence_problem() -> Optional[str]:
    """None when MOSEK is importable and licensed, else why not.

    MOSEK solves nothing without a licence, not even a one-variable LP, so importing is not
    enough: check a licence out.
    """
    try:
        import mosek
    except ImportError:
        return "the mosek package is not installed"
    try:
        with mosek.Env() as env:
            env.checkoutlicense(mosek.feature.pts)
    except mosek.Error as exc:
        return f"no MOSEK licence ({str(exc).splitlines()[0][:120]})"
    return None


class NeedsMosekLicence:
    """Mixin of the backends that run MOSEK: available only with a licence."""

    extra = "mosek"

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        return mosek_licence_problem() or super().unavailable_reason()


class MosekBackend(NeedsMosekLicence, PyomoLegacyBackend):
    name = "mosek"
    factory_name = "mosek_direct"
    time_limit_option = "dparam.optimizer_max_time"
    gap_option = "dparam.mio_tol_rel_gap"
    threads_option = "iparam.num_threads"

"""What the command line prints: a result, a comparison table, the labeling proved optimal, and
the drivers' log lines on stderr."""

from __future__ import annotations

import json
import logging
import sys

from tabulate import tabulate

from s3vm import api


def fmt(value, spec=".6g"):
    """A number for a table cell; ``-`` for none."""
    return "-" if value is None else format(value, spec)


def print_solve(args, out, instance, result) -> None:
    """One result: JSON with ``--json``, else a summary."""
    if args.json:
        answer = result.to_dict(primal=args.primal)
        if result.info.get("unlabeled_effect") is not None:   # local formulations (issue 34)
            answer["unlabeled_effect"] = result.info["unlabeled_effect"]
        print(json.dumps(answer), file=out)
    else:
        # no instance: a signal before the data was read (an answer without labels)
        metrics = {"error": None, "auc": None} if instance is None else \
            api.evaluate(instance, result)
        print(summary(result, metrics), file=out)


def print_compare(args, out, instance, rows) -> None:
    """Several results: a JSON list with ``--json``, else a table."""
    if args.json:
        print(json.dumps([dict(r.to_dict(), **m) for r, m in rows]), file=out)
    else:
        print(table(rows, instance), file=out)


def summary(result, metrics) -> str:
    """A result, one field a line."""
    lines = [f"formulation  {result.formulation}", f"solver       {result.solver}",
             f"status       {result.status}", f"objective    {fmt(result.objective)}",
             f"lower bound  {fmt(result.lower_bound)}", f"gap          {fmt(result.gap, '.2%')}",
             f"seconds      {result.seconds:.3f}"]
    if result.iterations is not None:
        lines.append(f"iterations   {result.iterations}")
    if result.nodes is not None:
        lines.append(f"nodes        {result.nodes}")
    if result.certified_labels is not None:
        certified = result.certified_labels
        lines.append(f"certified    {int(sum(bool(v) for v in certified))} of {len(certified)} "
                     "labels (every labeling as good agrees)")
    if metrics["error"] is not None:
        lines.append(f"error        {metrics['error']:.2%}")
    if metrics["auc"] is not None:
        lines.append(f"ROC AUC      {metrics['auc']:.4f}")
    if result.message:
        lines.append(f"message      {result.message}")
    return "\n".join(lines)


def table(rows, instance) -> str:
    """A comparison: one row per formulation, then the labelings proved optimal."""
    header = ["formulation", "solver", "status", "objective", "lower bound", "gap", "error",
              "ROC AUC", "seconds"]
    body = [[r.formulation, r.solver, r.status, fmt(r.objective), fmt(r.lower_bound),
             fmt(r.gap, ".2%"), fmt(m["error"], ".2%"), fmt(m["auc"], ".4f"),
             f"{r.seconds:.3f}"] for r, m in rows]
    title = f"{instance.name}: n = {instance.n}, labeled = {instance.l}, unlabeled = {instance.u}"
    lines = [title, tabulate(body, headers=header, disable_numparse=True)]
    for r, m in rows:
        if r.status == "optimal" and r.labels is not None:
            lines.append(proved(r, m))
    return "\n".join(lines)


def proved(result, metrics, width: int = 72) -> str:
    """Two or more lines naming a labeling proved optimal: who, its value, and the labels."""
    error = "" if metrics["error"] is None else f", error {metrics['error']:.2%}"
    signs = "".join("+" if v > 0 else "-" for v in result.labels)
    bound = result.lower_bound
    if bound is not None and bound < result.objective:
        # closed within a gap tolerance: say how far from the bound
        head = (f"proved optimal by {result.formulation} within its gap tolerance: objective "
                f"{fmt(result.objective)}, lower bound {fmt(bound)} (gap "
                f"{fmt(result.gap, '.2%')}){error}; labels of the unlabeled rows (file order):")
    else:
        head = (f"proved optimal by {result.formulation}: objective {fmt(result.objective)} = "
                f"lower bound{error}; labels of the unlabeled rows (file order):")
    body = ["  " + signs[i:i + width] for i in range(0, len(signs), width)]
    return "\n".join([head, *body])


class StderrLog(logging.Handler):
    """Drivers' log lines on stderr, as a MIP solver prints them.

    Records marked ``progress`` are a status line redrawn in place on a terminal and dropped
    elsewhere, so a log file or a pipe gets only the periodic lines.
    """

    def __init__(self, stream):
        super().__init__(logging.INFO)
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.redrawn = False

    def emit(self, record):
        try:
            text = record.getMessage()
            if getattr(record, "progress", False):
                if self.tty:
                    self.stream.write("\r\033[K" + text)
                    self.stream.flush()
                    self.redrawn = True
                return
            if self.redrawn:
                self.stream.write("\r\033[K")
                self.redrawn = False
            self.stream.write(text + "\n")
            self.stream.flush()
        except Exception:  # a log line must never end a solve
            self.handleError(record)

    def close(self):
        if self.redrawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
        super().close()


def configure_logging(args):
    """Route the package's log lines to stderr unless --quiet; returns the handler to remove."""
    if getattr(args, "quiet", True):
        return None
    handler = StderrLog(sys.stderr)
    logger = logging.getLogger("s3vm")
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    return handler

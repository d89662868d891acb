"""``s3vm check-certificate FILE``: check a certificate of optimality (bb-sdp's
``--certificate``) with numpy alone; exit 0 when the proof holds, 1 when it does not (the
reasons on stdout), 2 when the file is not a certificate."""

from __future__ import annotations

from s3vm import api


def add_parser(sub) -> None:
    parser = sub.add_parser("check-certificate",
                            help="check a certificate of optimality (bb-sdp --certificate)")
    parser.add_argument("certificate", metavar="FILE", help="the certificate (JSON)")


def run(args, out) -> int:
    report = api.check_certificate(args.certificate)
    for line in report.lines():
        print(line, file=out)
    return 0 if report.holds else 1

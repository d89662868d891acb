"""The package version, read by setup.cfg and reported by ``s3vm --version``."""

__version__ = "0.2.0"

"""The ``postgresql://`` driver (see :mod:`.driver`)."""

from .driver import PostgresStore

__all__ = ["PostgresStore"]

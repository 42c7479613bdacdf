"""``files://``: an example luoshod store driver, written outside luoshod against its
driver SDK (``luoshod.store.kit``), and proved by its conformance kit::

    pytest --pyargs luoshod.store.conformance --luoshod-driver files=files://{tmp}/store
"""

from .driver import FilesStore

__all__ = ["FilesStore"]

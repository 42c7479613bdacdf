"""The agent loop: runs, merge, tools, fingerprint and drift, fork, compare, leases.

Pure Python, handed a store and a provider: it imports no gRPC, no ``luoshod.server`` and
no driver distribution (the ``[tool.importlinter]`` contracts of pyproject.toml)."""

"""luoshod: a gRPC sidecar daemon that gives services in any language durable AI-agent runs.

Layout (the folders are the architecture; ``lint-imports`` keeps the arrows one way):

- ``domain``     the run's data: messages, tool calls, usage, agent spec, checkpoint.
- ``errors``     the one error hierarchy.
- ``engine/``    the agent loop (no gRPC, no server, no driver imports).
- ``providers/`` model providers (``scripted`` always available).
- ``store/``     the storage contract and driver SDK (``store.kit``), the in-memory driver,
  the conformance kit (``store.conformance``, a pytest plugin); the durable drivers are
  distributions of their own (``drivers/`` in the repository), found by entry point.
- ``observe/``   metrics and traces.
- ``server/``    the gRPC service layer and the composition root; ``http/`` the console.
- ``admin/``     the people CLI's commands (a gRPC client: none of the daemon).
"""

__version__ = "0.1.0"

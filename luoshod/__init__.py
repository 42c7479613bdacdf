"""luoshod: a gRPC sidecar daemon that gives services in any language durable AI-agent runs.

Layout (the folders are the architecture):

- ``domain``    the run's data: messages, tool calls, usage, agent spec, checkpoint.
- ``errors``    the one error hierarchy.
- ``engine/``   the agent loop (no gRPC, no driver imports): merge, tools, fingerprint.
- ``providers/`` model providers (``scripted`` always available).
- ``store/``    the storage contract and its drivers (memory, sqlite).
- ``server/``   gRPC service layer and the composition root.
"""

__version__ = "0.1.0"

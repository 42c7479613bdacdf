"""Tests of the engine itself (tests/engine/harness.py): no server, no disk."""

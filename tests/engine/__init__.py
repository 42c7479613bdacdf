"""Tests of the engine itself (tests/support/engine_harness.py): no server, no disk."""

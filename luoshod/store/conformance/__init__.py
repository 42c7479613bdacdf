"""The store conformance kit: one pytest test per rule of the storage contract, run
against any driver, in this repository or outside it::

    pip install luoshod pytest pytest-asyncio   # and your driver, registered in luoshod.drivers
    pytest --pyargs luoshod.store.conformance --luoshod-driver mine=mine://{tmp}/db

Each test runs once per driver named, with its name as the test id, so a failure names
the driver and the rule (``test_r7_save_needs_the_next_version[mine-stale]``). The optional
parts of the contract are tested both ways: what the driver declares in
``capabilities`` must work, what it does not declare must be refused. Multi-process,
crash (``kill -9``) and lease tests are included, each for the drivers it applies to.

- :mod:`.plugin`: the pytest plugin (``--luoshod-driver``, the ``backend`` and ``driver``
  fixtures), loaded through the ``pytest11`` entry point;
- :mod:`.helpers`: checkpoints, approvals and events to save, and ``SessionWriter``, which
  saves a session as the engine does; for drivers' own tests too;
- ``test_store_*.py``: the rules.
"""

"""How often the daemon calls a model that keeps failing, whoever asks.

A provider's own retries (``retry.py``) ride out a blip inside one model call. What they do
not fix ends the run, and a run can be started again at once: by a client's retry, by the
daemon's input queue, by an operator's loop. Two floors, shared by every run of the daemon,
keep any of them from making the daemon hammer a provider:

- **A backoff per session.** After a failed model call of a session (its lead agent, or
  one sub-agent task of it) on ``provider:model``, the next call of the same key is not made
  before ``min(failure_backoff_max_s, failure_backoff_base_s * 2**(n-1))`` has passed since
  the failure, ``n`` being its failures in a row. A call asked for earlier fails at once,
  without reaching the provider: transient, ``error_type`` ``session_backoff``, with
  ``retry_after_s``.
- **A circuit per provider and model.** After ``circuit_failures`` transient failures in a
  row (any sessions), the circuit opens for ``circuit_open_s``, twice as long each time it
  opens again (at most ``failure_backoff_max_s``, or ``circuit_open_s`` when that is
  longer): calls fail at once (``circuit_open``, ``retry_after_s``). Then one call probes
  it: an answer closes it, a failure opens it again. A permanent failure (HTTP 400, …) is an
  answer: the provider is up.

A model call that succeeds ends its session's backoff. The last failure of each session is
kept (:meth:`ModelGuard.last_failure`, shown by ``GetSession``) until the session's next
successful model call, for at most ``MAX_SESSIONS`` sessions (the oldest forgotten first).
This state is the daemon's own: a restarted daemon, or another one sharing the store,
starts with none.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import ProviderError

#: Sessions whose last failure is remembered at once; the oldest is forgotten past this.
MAX_SESSIONS = 10_000


@dataclass(frozen=True, slots=True)
class GuardPolicy:
    """One provider entry's floors (its ``failure_backoff_*`` and ``circuit_*`` keys)."""

    failure_backoff_base_s: float = 1.0
    failure_backoff_max_s: float = 60.0
    circuit_failures: int = 5
    circuit_open_s: float = 30.0

    def session_backoff(self, failures: int) -> float:
        return min(
            self.failure_backoff_max_s, self.failure_backoff_base_s * 2 ** max(0, failures - 1)
        )

    def circuit_backoff(self, opens: int) -> float:
        ceiling = max(self.failure_backoff_max_s, self.circuit_open_s)
        return min(ceiling, self.circuit_open_s * 2 ** max(0, opens - 1))


@dataclass(slots=True)
class Failure:
    """A session's last failed model call, as ``GetSession`` shows it."""

    reason: str
    message: str
    metadata: dict[str, str]
    at: float  # wall-clock seconds
    failures: int  # in a row, for the key that failed
    not_before: float  # wall-clock seconds: no call of that key before then


@dataclass(slots=True)
class _Circuit:
    failures: int = 0  # transient failures in a row
    opens: int = 0  # times opened in a row (without an answer between)
    open_until: float = 0.0  # monotonic
    probing: bool = False  # the one call let through after open_until


@dataclass(slots=True)
class _Backoff:
    failures: int = 0
    not_before: float = 0.0  # monotonic


@dataclass
class ModelGuard:
    """The floors of every remote provider of one daemon (see the module's docstring)."""

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    _circuits: dict[tuple[str, str], _Circuit] = field(default_factory=dict)
    _backoffs: OrderedDict[tuple[str, str, str, str], _Backoff] = field(default_factory=OrderedDict)
    #: Each session's last failure per scope (the lead's, each sub-agent's): a sub-agent's
    #: answer does not clear the lead's failure, nor the other way round.
    _last: OrderedDict[str, dict[str, Failure]] = field(default_factory=OrderedDict)

    def before_call(
        self,
        policy: GuardPolicy,
        provider: str,
        model: str,
        session_id: str,
        scope: str,
        *,
        probe: bool = True,
    ) -> None:
        """Raise a transient ``ProviderError`` when this call must not be made yet.
        ``probe=False``: only ask (a half-open circuit is not taken for this call's probe)."""
        now = self.monotonic()
        backoff = self._backoffs.get((session_id, scope, provider, model))
        if backoff is not None and now < backoff.not_before:
            wait = backoff.not_before - now
            raise self._refusal(
                "session_backoff",
                f"model call {provider}:{model} not made: the session's last {backoff.failures} "
                f"call(s) of it failed; the daemon calls it again in {wait:.2f}s",
                provider,
                model,
                session_id,
                wait,
            )
        circuit = self._circuits.get((provider, model))
        if circuit is None or circuit.opens == 0:
            return
        if now < circuit.open_until or circuit.probing:
            # Probing: its answer decides; ask again in a moment.
            wait = max(circuit.open_until - now, 0.0) or policy.failure_backoff_base_s
            raise self._refusal(
                "circuit_open",
                f"model call {provider}:{model} not made: {provider}:{model} failed "
                f"{circuit.failures} time(s) in a row and the daemon pauses its calls for "
                f"{wait:.2f}s",
                provider,
                model,
                session_id,
                wait,
            )
        if probe:
            circuit.probing = True  # this call probes the circuit; the others wait for it

    def released(self, provider: str, model: str) -> None:
        """A call ended with neither an answer nor a failure (the run was cancelled): a
        probe it was is given up, so the next call probes instead."""
        circuit = self._circuits.get((provider, model))
        if circuit is not None:
            circuit.probing = False

    def succeeded(self, provider: str, model: str, session_id: str, scope: str) -> None:
        self._backoffs.pop((session_id, scope, provider, model), None)
        scopes = self._last.get(session_id)
        if scopes is not None:
            scopes.pop(scope, None)
            if not scopes:
                del self._last[session_id]
        self._circuits.pop((provider, model), None)

    def failed(
        self,
        policy: GuardPolicy,
        error: ProviderError,
        provider: str,
        model: str,
        session_id: str,
        scope: str,
    ) -> None:
        """Record a failed call; set ``retry_after_s`` on ``error`` when it is transient."""
        now = self.monotonic()
        transient = error.metadata.get("transient") == "true"
        circuit = self._circuits.setdefault((provider, model), _Circuit())
        circuit.probing = False
        if transient:
            circuit.failures += 1
            if circuit.opens or circuit.failures >= policy.circuit_failures:
                circuit.opens += 1
                circuit.open_until = now + policy.circuit_backoff(circuit.opens)
        else:  # the provider answered: it is up
            self._circuits.pop((provider, model), None)
        key = (session_id, scope, provider, model)
        backoff = self._backoffs.pop(key, None) or _Backoff()
        backoff.failures += 1
        backoff.not_before = now + policy.session_backoff(backoff.failures)
        self._backoffs[key] = backoff
        while len(self._backoffs) > MAX_SESSIONS:
            self._backoffs.popitem(last=False)
        wait = backoff.not_before - now
        if transient:
            if circuit.opens:
                wait = max(wait, circuit.open_until - now)
            given = _seconds(error.metadata.get("retry_after_s"))
            error.metadata["retry_after_s"] = _fmt(max(wait, given or 0.0))
        self._remember(session_id, scope, error, backoff.failures, wait)

    def last_failure(self, session_id: str) -> Failure | None:
        """The newest failure of the session's scopes that have not answered since."""
        scopes = self._last.get(session_id)
        return max(scopes.values(), key=lambda f: f.at) if scopes else None

    def _refusal(
        self, error_type: str, message: str, provider: str, model: str, session_id: str, wait: float
    ) -> ProviderError:
        return ProviderError(
            message,
            provider=provider,
            model=model,
            error_type=error_type,
            attempts=0,
            transient="true",
            retry_after_s=_fmt(wait),
            session_id=session_id,
        )

    def _remember(
        self, session_id: str, scope: str, error: ProviderError, failures: int, wait: float
    ) -> None:
        wall = self.wall()
        scopes = self._last.pop(session_id, None) or {}
        scopes[scope] = Failure(
            error.reason, error.message, dict(error.metadata), wall, failures, wall + wait
        )
        self._last[session_id] = scopes  # the newest last
        while len(self._last) > MAX_SESSIONS:
            self._last.popitem(last=False)


def _fmt(seconds: float) -> str:
    """Seconds to the millisecond, rounded up: a wait still to come is never said as 0."""
    ms = math.ceil(max(0.0, seconds) * 1000 - 1e-6)  # less float noise: 1 ms stays "0.001"
    return f"{ms / 1000:.3f}".rstrip("0").rstrip(".") or "0"


def _seconds(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


__all__ = ["Failure", "GuardPolicy", "MAX_SESSIONS", "ModelGuard"]

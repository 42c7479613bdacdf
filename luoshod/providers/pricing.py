"""What a model call costs (docs/reference/rules.md R78).

A call's cost is the one its provider reports, when it reports one (a ``cost_usd``
above 0 in the call's usage); else its tokens at the model's price from the daemon's price
table (``[providers.NAME.prices."MODEL"]``, :class:`~luoshod.config.Price`): prompt tokens
not read from or written to the cache at ``prompt_per_mtok``, cached ones at
``cached_input_per_mtok``, cache writes at ``cache_write_per_mtok``, output tokens at
``completion_per_mtok``. Without either it is 0, and a run with a cost limit on such a
model is refused at start (``priced``).
"""

from __future__ import annotations

from typing import Any

from ..config import Price
from ..domain import Usage
from .base import Provider


def call_cost(usage: Usage, price: Price | None) -> float:
    """The cost of one call whose usage is ``usage``: the reported one, else the table's."""
    if usage.cost_usd > 0 or price is None:
        return usage.cost_usd
    return price.cost(
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cached_input_tokens,
        usage.cache_write_tokens,
    )


def priced(provider: Provider, model: str, settings: dict[str, Any]) -> bool:
    """Whether a call of ``model`` has a known cost: a price, or a provider that reports it."""
    return provider.price(model, settings) is not None or provider.reports_cost(model, settings)


__all__ = ["call_cost", "priced"]

"""R83 in the Python client against a real daemon: an agent's output schema given as a
pydantic model, the answer returned parsed (``output``) and as that model (``output_as``),
and an answer still invalid after its repair turn."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from luosho.client import Agent, AsyncClient
from luoshod.server.app import Daemon


class City(BaseModel):
    city: str
    population: int


def agent(*answers: str) -> Agent:
    return Agent(
        "scripted:structured",
        output_schema=City,
        model_settings={"script": [{"text": a} for a in answers]},
    )


@pytest.mark.asyncio
async def test_r83_the_answer_comes_back_parsed_and_as_the_callers_model(daemon: Daemon) -> None:
    async with AsyncClient(daemon.addresses[0]) as client:
        result = await client.execute(
            "r83-ok",
            "where?",
            agent=agent('{"city": "Paris"}', '{"population": 2, "city": "Paris"}'),
        )
    assert result.finish_reason == "stop" and result.step_index == 2  # one repair turn
    assert result.output == {"city": "Paris", "population": 2}
    assert result.output_as(City) == City(city="Paris", population=2)
    assert result.output_as(dict) == {"city": "Paris", "population": 2}


@pytest.mark.asyncio
async def test_r83_an_answer_invalid_twice_gives_output_invalid_and_its_errors(
    daemon: Daemon,
) -> None:
    async with AsyncClient(daemon.addresses[0]) as client:
        result = await client.execute(
            "r83-bad", "where?", agent=agent("Paris", '{"city": "Paris"}')
        )
    assert result.finish_reason == "output_invalid"
    assert result.output is None
    assert result.output_errors == ("(root): 'population' is a required property",)
    with pytest.raises(ValueError, match="no structured output"):
        result.output_as(City)

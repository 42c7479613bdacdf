"""TLS, mTLS and bearer tokens over real loopback connections; who may listen where;
unix socket modes."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from luosho.client import AsyncClient, Client, LuoshoError
from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from luoshod.config import ConfigError, Secret
from luoshod.server.app import Config, Daemon
from tests.support.certs import CA
from tests.support.harness import Harness, agent, error_info

TOKEN = "tok-" + "a1b2c3" * 6


@pytest.fixture
def ca(tmp_path: Path) -> CA:
    return CA(tmp_path)


@pytest.fixture
async def start(tmp_path: Path) -> AsyncIterator[Callable[..., asyncio.Future[Daemon]]]:
    daemons: list[Daemon] = []

    async def go(**kw: object) -> Daemon:
        d = Daemon(Config(**{"listen": ["127.0.0.1:0"], "store": "memory://", **kw}))  # type: ignore[arg-type]
        await d.start()
        daemons.append(d)
        return d

    yield go  # type: ignore[misc]
    for d in daemons:
        await d.stop()


async def ran(channel: grpc.aio.Channel, address: str, metadata: tuple = ()) -> str:
    """Run one scripted session over ``channel`` (closed after); its final text."""
    h = Harness(address, channel=channel)
    try:
        call = h.stub.Execute(
            pb.ExecuteRequest(
                session_id="s1",
                input=[pb.Message(role=pb.ROLE_USER, content="hi")],
                agent=agent([{"text": "secure hello"}]),
            ),
            metadata=metadata,
        )
        events = [r.event async for r in call]
        return events[-1].run_done.final_text
    finally:
        await h.close()


def tls_channel(
    address: str, ca: CA, client: tuple[bytes, bytes] | None = None
) -> grpc.aio.Channel:
    key, cert = client or (None, None)
    return grpc.aio.secure_channel(
        address, grpc.ssl_channel_credentials(ca.pair.cert.read_bytes(), key, cert)
    )


async def test_tls_listener_serves_tls_and_refuses_plaintext(start, ca: CA) -> None:
    server = ca.issue("server", server=True)
    d = await start(tls_cert_file=server.cert, tls_key_file=server.key)
    address = d.addresses[0]
    assert await ran(tls_channel(address, ca), address) == "secure hello"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await ran(grpc.aio.insecure_channel(address), address)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    # A client that trusts another CA refuses the daemon's certificate.
    other = CA(ca.folder / "..", "other CA")
    with pytest.raises(grpc.aio.AioRpcError):
        await ran(tls_channel(address, other), address)


async def test_mtls_needs_a_client_certificate_from_the_client_ca(
    start, ca: CA, tmp_path: Path
) -> None:
    server, client = ca.issue("server", server=True), ca.issue("client", server=False)
    d = await start(
        tls_cert_file=server.cert, tls_key_file=server.key, tls_client_ca_file=ca.pair.cert
    )
    address = d.addresses[0]
    assert await ran(tls_channel(address, ca, client.read()), address) == "secure hello"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await ran(tls_channel(address, ca), address)  # no client certificate
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    stranger = CA(tmp_path / "..", "stranger CA").issue("intruder", server=False)
    with pytest.raises(grpc.aio.AioRpcError):
        await ran(tls_channel(address, ca, stranger.read()), address)


async def test_tokens_guard_every_rpc_but_health(start) -> None:
    d = await start(auth_tokens=(Secret("other-token"), Secret(TOKEN)))
    address = d.addresses[0]
    channel = grpc.aio.insecure_channel(address)
    try:
        for metadata, reason in (
            ((), "TOKEN_REQUIRED"),
            ((("authorization", "Bearer nope"),), "TOKEN_INVALID"),
            ((("authorization", f"Basic {TOKEN}"),), "TOKEN_INVALID"),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as err:  # a stream
                await ran(grpc.aio.insecure_channel(address), address, metadata)
            assert error_info(err.value)[:2] == (grpc.StatusCode.UNAUTHENTICATED, reason)
            with pytest.raises(grpc.aio.AioRpcError) as err:  # a unary call
                await pb_grpc.AgentServiceStub(channel).GetSession(
                    pb.GetSessionRequest(session_id="s1"), metadata=metadata
                )
            assert error_info(err.value)[:2] == (grpc.StatusCode.UNAUTHENTICATED, reason)
        assert (
            await ran(
                grpc.aio.insecure_channel(address), address, (("authorization", f"Bearer {TOKEN}"),)
            )
            == "secure hello"
        )
        # Probes send no token: health answers.
        resp = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert resp.status == health_pb2.HealthCheckResponse.SERVING
        # Reflection only describes the (public) API: open, so that grpcurl can look up
        # Health/Check without a token.
        refl = reflection_pb2_grpc.ServerReflectionStub(channel)
        answers = refl.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")])
        )
        names = [s.name async for a in answers for s in a.list_services_response.service]
        assert "luosho.v1.AgentService" in names
    finally:
        await channel.close()


async def test_tokens_from_a_file(start, tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"# rotated 2026-12\n\n  {TOKEN}  \nsecond-token\n")
    d = await start(auth_token_file=path)
    address = d.addresses[0]
    async with AsyncClient(address, token="second-token") as client:
        assert (await client.execute("f1", "hi", agent=agent([{"text": "ok"}]))).final_text == "ok"
    async with AsyncClient(address, token="wrong") as client:
        with pytest.raises(LuoshoError) as err:
            await client.get_session("f1")
        assert (err.value.code, err.value.reason) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_INVALID",
        )


def test_an_empty_or_missing_token_file_is_a_configuration_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match="auth_token_file: .* holds no token"):
        Daemon(Config(listen=["127.0.0.1:0"], store="memory://", auth_token_file=empty))
    with pytest.raises(ConfigError, match="auth_token_file: cannot read"):
        Daemon(
            Config(listen=["127.0.0.1:0"], store="memory://", auth_token_file=tmp_path / "missing")
        )


async def test_the_python_clients_take_a_token_and_tls_credentials(start, ca: CA) -> None:
    server, client_pair = ca.issue("server", server=True), ca.issue("client", server=False)
    d = await start(
        tls_cert_file=server.cert,
        tls_key_file=server.key,
        tls_client_ca_file=ca.pair.cert,
        auth_tokens=(Secret(TOKEN),),
    )
    key, cert = client_pair.read()
    creds = grpc.ssl_channel_credentials(ca.pair.cert.read_bytes(), key, cert)
    async with AsyncClient(d.addresses[0], token=TOKEN, credentials=creds) as client:
        assert (
            await client.execute("c1", "hi", agent=agent([{"text": "async tls"}]))
        ).final_text == "async tls"

    def blocking() -> str:
        with Client(d.addresses[0], token=TOKEN, credentials=creds) as client:
            return client.get_session("c1").session_id

    assert await asyncio.to_thread(blocking) == "c1"


async def test_the_people_cli_takes_a_token_file_and_tls_options(
    start, ca: CA, tmp_path: Path
) -> None:
    server, client_pair = ca.issue("server", server=True), ca.issue("client", server=False)
    d = await start(
        tls_cert_file=server.cert,
        tls_key_file=server.key,
        tls_client_ca_file=ca.pair.cert,
        auth_tokens=(Secret(TOKEN),),
    )
    async with AsyncClient(
        d.addresses[0],
        token=TOKEN,
        credentials=grpc.ssl_channel_credentials(ca.pair.cert.read_bytes(), *client_pair.read()),
    ) as client:
        await client.execute("cli-1", "hi", agent=agent([{"text": "ok"}]))
    token_file = tmp_path / "token"
    token_file.write_text(f"# for the CLI\n{TOKEN}\n")
    tls = [
        "--address",
        d.addresses[0],
        "--tls-ca-file",
        str(ca.pair.cert),
        "--tls-cert-file",
        str(client_pair.cert),
        "--tls-key-file",
        str(client_pair.key),
    ]

    async def luoshod(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "luoshod",
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        out, err = await proc.communicate()
        return proc.returncode or 0, out.decode(), err.decode()

    code, out, _ = await luoshod(
        "sessions", "list", "--json", *tls, "--token-file", str(token_file)
    )
    assert code == 0 and [s["session_id"] for s in json.loads(out)] == ["cli-1"]
    code, out, _ = await luoshod("sessions", "show", "cli-1", *tls, env={"LUOSHOD_TOKEN": TOKEN})
    assert code == 0 and "cli-1" in out
    code, _, err = await luoshod("sessions", "list", *tls)
    assert code == 1 and err.startswith("luoshod: TOKEN_REQUIRED: ")
    code, _, err = await luoshod(
        "sessions", "list", *tls, "--token-file", str(tmp_path / "missing")
    )
    assert code == 1 and "--token-file: cannot read" in err
    # The health check needs TLS but no token.
    code, _, err = await luoshod("healthcheck", *tls)
    assert code == 0, err


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0"])
def test_remote_listening_needs_tls_tokens_or_allow_remote(address: str, ca: CA) -> None:
    with pytest.raises(
        ConfigError, match="configure TLS .* or bearer tokens .* or give --allow-remote"
    ):
        Daemon(Config(listen=[address], store="memory://"))
    server = ca.issue("server", server=True)
    Daemon(
        Config(
            listen=[address], store="memory://", tls_cert_file=server.cert, tls_key_file=server.key
        )
    )
    Daemon(Config(listen=[address], store="memory://", auth_tokens=(Secret(TOKEN),)))
    Daemon(Config(listen=[address], store="memory://", allow_remote=True))


def test_a_tls_file_that_is_not_pem_is_a_configuration_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    with pytest.raises(ConfigError, match="tls_cert_file: .* is not a PEM file"):
        Daemon(
            Config(listen=["127.0.0.1:0"], store="memory://", tls_cert_file=junk, tls_key_file=junk)
        )


@pytest.mark.parametrize("mode", [0o600, 0o660])
async def test_unix_socket_gets_its_mode(start, tmp_path: Path, mode: int) -> None:
    path = tmp_path / "run" / "luoshod.sock"
    d = await start(listen=[f"unix:{path}"], unix_socket_mode=mode)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    async with AsyncClient(f"unix:{path}") as client:
        assert (
            await client.execute("u1", "hi", agent=agent([{"text": "uds"}]))
        ).final_text == "uds"
    assert d.addresses == [f"unix:{path}"]

"""The container and Kubernetes files, tested without a Docker engine: the Dockerfile's
commands exist and work in this venv, its settings are valid, the manifest is valid YAML
with a native sidecar, gRPC probes and a shared socket volume, and `luoshod healthcheck`
answers right against a real daemon, a TLS one, and nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from luoshod import settings
from luoshod.server.app import Daemon
from tests.support.certs import CA
from tests.support.container import (
    ROOT,
    build_copies,
    dockerfile,
    exec_form,
    final_stage,
    image_env,
    in_context,
    manifest,
    tracked,
)
from tests.support.daemon_process import DaemonProcess

BIN = Path(sys.executable).parent


def luoshod(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("LUOSHOD_")}
    return subprocess.run(
        [str(BIN / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **(env or {})},
    )


def test_the_image_is_multi_stage_slim_and_non_root() -> None:
    froms = [rest for word, rest in dockerfile() if word == "FROM"]
    assert len(froms) >= 2 and froms[-1] == "python:3.11-slim"
    user = next(rest for word, rest in final_stage() if word == "USER")
    assert user.split(":")[0] not in {"0", "root"}
    assert json.loads(next(rest for word, rest in final_stage() if word == "VOLUME")) == [
        "/var/lib/luoshod"
    ]
    assert image_env()["LUOSHOD_STORE"].startswith("lmdb:///var/lib/luoshod/")


def test_entrypoint_and_cmd_are_the_luoshod_serve_command() -> None:
    command = exec_form("ENTRYPOINT") + exec_form("CMD")
    assert command == ["luoshod", "serve"]
    out = luoshod(*command, "--help")
    assert out.returncode == 0 and "--listen" in out.stdout


def test_the_image_settings_are_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    env = image_env()
    for key in env:
        if key.startswith("LUOSHOD_"):
            assert key.removeprefix("LUOSHOD_").lower() in settings.Settings.model_fields, key
            monkeypatch.setenv(key, env[key])
    config = settings.to_config(settings.load())
    Daemon(config)  # the listeners pass the remote check, the store URL parses


def test_dockerignore_keeps_what_the_build_copies() -> None:
    assert not in_context(".git") and not in_context(".venv/bin/python")
    for source in build_copies():
        # Tracked, so a fresh clone has it (not a leftover of an old layout in this tree).
        files = tracked(source)
        assert files, f"COPY {source}: nothing of it is in git"
        assert in_context(source) and any(in_context(f) for f in files), source


def test_the_image_carries_every_driver() -> None:
    """Each distribution under drivers/ is in the context and installed by the build stage,
    with the files its build needs; the drivers' tests stay out of the image."""
    install = next(
        rest
        for word, rest in dockerfile()
        if word == "RUN" and "pip install" in rest and "./drivers/" in rest
    )
    drivers = sorted(p.parent.name for p in (ROOT / "drivers").glob("*/pyproject.toml"))
    assert drivers == ["lmdb", "postgres", "sqlite"]
    assert "drivers" in build_copies()
    for name in drivers:
        assert f"./drivers/{name}" in install.split(), name
        package = f"drivers/{name}/luoshod_{name}"
        for needed in (
            f"drivers/{name}/pyproject.toml",
            f"drivers/{name}/README.md",
            f"{package}/__init__.py",
        ):
            assert tracked(needed) and in_context(needed), needed
        assert not in_context(f"drivers/{name}/tests/conftest.py")
    for needed in (
        "pyproject.toml",
        "README.md",
        "luoshod/__init__.py",
        "luoshod/engine/engine.py",
        "clients/python/pyproject.toml",
    ):
        assert in_context(needed), needed
    assert not any(in_context(f) for f in tracked("tests")[:20])


def test_healthcheck_passes_against_the_image_default_socket(tmp_path: Path) -> None:
    sock = tmp_path / "luoshod.sock"
    d = DaemonProcess("--store", "memory://", "--listen", f"unix:{sock}").start()
    try:
        # The HEALTHCHECK as the image runs it: no flags, the address from LUOSHOD_LISTEN.
        listen = image_env()["LUOSHOD_LISTEN"].replace("/run/luoshod/luoshod.sock", str(sock))
        out = luoshod(*json.loads(healthcheck_cmd()), env={"LUOSHOD_LISTEN": listen})
        assert (out.returncode, out.stderr) == (0, "")
    finally:
        d.stop()


def healthcheck_cmd() -> str:
    rest = next(rest for word, rest in final_stage() if word == "HEALTHCHECK")
    return rest[rest.index("CMD") + 3 :].strip()


def test_healthcheck_fails_with_one_line_when_nothing_answers(tmp_path: Path) -> None:
    out = luoshod(
        "luoshod", "healthcheck", "--address", f"unix:{tmp_path}/none.sock", "--timeout", "2"
    )
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(
        f"luoshod healthcheck: unix:{tmp_path}/none.sock: UNAVAILABLE"
    )


def test_healthcheck_over_tls(tmp_path: Path) -> None:
    ca = CA(tmp_path)
    server = ca.issue("server", server=True)
    d = DaemonProcess(
        "--store",
        "memory://",
        "--tls-cert-file",
        str(server.cert),
        "--tls-key-file",
        str(server.key),
    ).start()
    try:
        ok = luoshod(
            "luoshod", "healthcheck", "--address", d.address, "--tls-ca-file", str(ca.pair.cert)
        )
        assert (ok.returncode, ok.stderr) == (0, "")
        plain = luoshod("luoshod", "healthcheck", "--address", d.address, "--timeout", "2")
        assert plain.returncode == 1 and plain.stderr.startswith("luoshod healthcheck: ")
    finally:
        d.stop()


def test_the_manifest_runs_luoshod_as_a_native_sidecar_with_exec_probes() -> None:
    docs = manifest()
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    assert deployment["apiVersion"] == "apps/v1"
    pod = deployment["spec"]["template"]["spec"]
    (sidecar,) = pod["initContainers"]
    assert sidecar["restartPolicy"] == "Always"
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        # The kubelet's grpc probes dial the pod IP: the API would have to listen there.
        assert "grpc" not in sidecar[probe] and sidecar[probe]["exec"]["command"][:2] == [
            "luoshod",
            "healthcheck",
        ], probe
    mounts = {
        c["name"]: {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
        for c in [sidecar, *pod["containers"]]
    }
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes["luoshod-socket"]
    assert mounts["luoshod"]["luoshod-socket"] == mounts["app"]["luoshod-socket"] == "/run/luoshod"
    claim = volumes["luoshod-data"]["persistentVolumeClaim"]["claimName"]
    assert any(
        d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == claim for d in docs
    )
    assert sidecar["securityContext"]["runAsUser"] != 0 and pod["securityContext"]["runAsNonRoot"]


def test_the_manifest_settings_start_a_daemon_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its env is valid settings, and the API listens on the socket and loopback only (no
    token or API on the pod IP; the metrics port is all that is there)."""
    deployment = next(d for d in manifest() if d["kind"] == "Deployment")
    (sidecar,) = deployment["spec"]["template"]["spec"]["initContainers"]
    assert sidecar["args"] == ["serve"]
    for var in sidecar["env"]:
        assert var["name"].removeprefix("LUOSHOD_").lower() in settings.Settings.model_fields, var[
            "name"
        ]
        monkeypatch.setenv(var["name"], var.get("value", "secret-token-from-the-secret"))
    config = settings.to_config(settings.load())
    assert (
        config.listen == ["unix:/run/luoshod/luoshod.sock", "127.0.0.1:50051"]
        and config.auth_tokens
    )
    assert config.metrics_listen == "0.0.0.0:9464"
    monkeypatch.delenv("LUOSHOD_AUTH_TOKENS")
    Daemon(settings.to_config(settings.load()))  # no remote API listener: tokens are optional

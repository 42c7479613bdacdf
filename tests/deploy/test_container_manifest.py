"""Issue 17, the container and manifest as written: one image name everywhere, no port
EXPOSEd that nothing listens on, dependencies installed in a layer of their own, and a
manifest whose probes, tokens, lease owner and metrics work — its probe commands run
against a real daemon started with its settings, and the manifest checked strictly
against the Kubernetes API's own types (deploy/kubernetes/validate, a Go program)."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.container import ROOT, dockerfile, final_stage, image_env, manifest
from tests.support.daemon_process import DaemonProcess

#: The page that shows the image being built and run.
KUBERNETES_DOC = ROOT / "docs" / "guides" / "kubernetes.md"

IMAGE = "luoshod:0.1.0"


def sidecar_and_app() -> tuple[dict, dict, dict]:
    deployment = next(d for d in manifest() if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]
    (sidecar,) = pod["spec"]["initContainers"]
    (app,) = pod["spec"]["containers"]
    return pod, sidecar, app


def env_of(container: dict) -> dict[str, dict]:
    return {v["name"]: v for v in container["env"]}


def test_one_image_name_in_the_dockerfile_the_readme_and_the_manifest() -> None:
    _, sidecar, _ = sidecar_and_app()
    assert sidecar["image"] == IMAGE
    built = re.findall(
        r"docker build -t (\S+) \.", (ROOT / "Dockerfile").read_text() + KUBERNETES_DOC.read_text()
    )
    assert built and set(built) == {IMAGE}, built
    ran = re.findall(r"docker run .*?(luoshod\S*)\s*$", KUBERNETES_DOC.read_text(), re.M)
    assert all(r == IMAGE for r in ran), ran


def _tcp_hosts(listen: str) -> list[str]:
    return [a.rsplit(":", 1)[0] for a in listen.split(",") if not a.startswith("unix:")]


def test_no_port_is_exposed_that_only_loopback_listens_on() -> None:
    exposed = [rest for word, rest in final_stage() if word == "EXPOSE"]
    remote = [
        h
        for h in _tcp_hosts(image_env()["LUOSHOD_LISTEN"])
        if not ipaddress.ip_address(h).is_loopback
    ]
    assert not exposed or remote, f"EXPOSE {exposed} but the image listens on loopback only"


def test_dependencies_are_installed_before_the_sources_are_copied(tmp_path: Path) -> None:
    steps = dockerfile()
    first_source = next(
        i for i, (w, rest) in enumerate(steps) if w == "COPY" and rest.startswith("luoshod/")
    )
    deps = next(
        i for i, (w, rest) in enumerate(steps) if w == "RUN" and "-r /tmp/requirements.txt" in rest
    )
    assert deps < first_source
    copied_before = [rest.split()[0] for w, rest in steps[:deps] if w == "COPY"]
    assert all(src.endswith("pyproject.toml") for src in copied_before), copied_before
    # The step's own command lists every dependency of every distribution but ours.
    run = steps[deps][1]
    listing = run[: run.index(" > /tmp/requirements.txt")].replace(
        "/opt/luoshod/bin/python", sys.executable
    )
    out = subprocess.run(
        ["sh", "-c", listing], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert (
        "lmdb~=3.0" in out
        and any(d.startswith("psycopg[binary]") for d in out)
        and any(d.startswith("aiohttp") for d in out)
    )
    assert not any(d.startswith(("luoshod", "luosho-client")) for d in out)


def test_the_api_is_not_on_the_pod_ip_and_metrics_are_scraped() -> None:
    pod, sidecar, _ = sidecar_and_app()
    env = env_of(sidecar)
    assert all(
        ipaddress.ip_address(h).is_loopback for h in _tcp_hosts(env["LUOSHOD_LISTEN"]["value"])
    )
    port = env["LUOSHOD_METRICS_LISTEN"]["value"].rsplit(":", 1)[1]
    assert {"name": "metrics", "containerPort": int(port)} in sidecar["ports"]
    notes = pod["metadata"]["annotations"]
    assert (
        notes["prometheus.io/scrape"],
        notes["prometheus.io/port"],
        notes["prometheus.io/path"],
    ) == ("true", port, "/metrics")


def test_the_lease_owner_is_the_pod_name_and_the_app_is_locked_down() -> None:
    _, sidecar, app = sidecar_and_app()
    assert env_of(sidecar)["LUOSHOD_LEASE_OWNER"]["valueFrom"] == {
        "fieldRef": {"fieldPath": "metadata.name"}
    }
    ctx = app["securityContext"]
    assert (
        ctx["allowPrivilegeEscalation"] is False
        and ctx["capabilities"]["drop"] == ["ALL"]
        and ctx["readOnlyRootFilesystem"]
    )


def test_probes_and_a_token_rotation_work_against_a_daemon_with_the_manifest_settings(
    tmp_path: Path,
) -> None:
    """The daemon takes every token of daemon-tokens (old and new during a rotation), the
    app sends only app-token; the probes' commands answer 0 over the socket."""
    _, sidecar, app = sidecar_and_app()
    daemon_key = env_of(sidecar)["LUOSHOD_AUTH_TOKENS"]["valueFrom"]["secretKeyRef"]["key"]
    app_key = env_of(app)["LUOSHOD_TOKEN"]["valueFrom"]["secretKeyRef"]["key"]
    assert daemon_key != app_key
    secret = {daemon_key: "old-token,new-token", app_key: "new-token"}
    sock = tmp_path / "luoshod.sock"
    env = {
        name: (
            v["value"]
            if "value" in v
            else secret.get(v["valueFrom"].get("secretKeyRef", {}).get("key"), "pod-1")
        )
        for name, v in env_of(sidecar).items()
    }
    env["LUOSHOD_LISTEN"] = (
        env["LUOSHOD_LISTEN"]
        .replace("/run/luoshod/luoshod.sock", str(sock))
        .replace(":50051", ":0")
    )
    env["LUOSHOD_STORE"] = f"lmdb://{tmp_path}/store"
    env["LUOSHOD_METRICS_LISTEN"] = "127.0.0.1:0"
    d = DaemonProcess(env=env)
    d.args = d.args[: d.args.index("--listen")]  # the manifest's listeners, not the helper's
    d.start()
    try:
        probe_env = {**os.environ, "LUOSHOD_LISTEN": env["LUOSHOD_LISTEN"]}
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            command = sidecar[probe]["exec"]["command"]
            done = subprocess.run(
                [sys.executable, "-m", *command],
                env=probe_env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert (done.returncode, done.stderr) == (0, ""), probe
        app_env = {
            **os.environ,
            "LUOSHOD_ADDRESS": f"unix:{sock}",
            "LUOSHOD_TOKEN": secret[app_key],
        }
        listed = subprocess.run(
            [sys.executable, "-m", "luoshod", "sessions", "list", "--json"],
            env=app_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (listed.returncode, json.loads(listed.stdout)) == (0, []), listed.stderr
    finally:
        d.stop()


def test_the_manifest_is_valid_against_the_kubernetes_api_types() -> None:
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if go is None:
        pytest.skip("no Go toolchain: deploy/kubernetes/validate needs one (go run)")
    done = subprocess.run(
        [go, "run", ".", str(ROOT / "deploy/kubernetes/sidecar.yaml")],
        cwd=ROOT / "deploy/kubernetes/validate",
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "GOFLAGS": "-mod=mod"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(": valid") == len(manifest())

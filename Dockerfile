# luoshod: the daemon in a slim, non-root image.
#   docker build -t luoshod:0.1.0 .
#   docker run -v luoshod-data:/var/lib/luoshod luoshod:0.1.0
# Settings come from LUOSHOD_* variables (README: Configuration); the defaults below keep
# the store in the volume and listen on loopback and on a unix socket in /run/luoshod
# (a sidecar's app shares the socket's volume, or the pod's loopback). No port is
# EXPOSEd: nothing listens on the container's address unless LUOSHOD_LISTEN says so, and
# then with tokens or TLS (README: Security).

FROM python:3.11-slim AS build
WORKDIR /src
RUN python -m venv /opt/luoshod
# The dependencies first, read from the pyproject files alone: an edit of the sources
# reuses this layer instead of downloading every dependency again.
COPY pyproject.toml ./
COPY clients/python/pyproject.toml clients/python/
COPY drivers/sqlite/pyproject.toml drivers/sqlite/
COPY drivers/lmdb/pyproject.toml drivers/lmdb/
COPY drivers/postgres/pyproject.toml drivers/postgres/
RUN /opt/luoshod/bin/python -c "import tomllib, pathlib; print('\\n'.join(d for p in ('pyproject.toml', 'clients/python/pyproject.toml', 'drivers/sqlite/pyproject.toml', 'drivers/lmdb/pyproject.toml', 'drivers/postgres/pyproject.toml') for d in tomllib.loads(pathlib.Path(p).read_text())['project'].get('dependencies', []) if not d.startswith(('luoshod', 'luosho-client'))))" > /tmp/requirements.txt \
 && /opt/luoshod/bin/pip install --no-cache-dir -r /tmp/requirements.txt
COPY clients/python/ clients/python/
COPY README.md ./
COPY luoshod/ luoshod/
COPY drivers/ drivers/
# The daemon and all three durable drivers (each its own distribution, found through the
# luoshod.drivers entry points). `serve --help` loads the whole daemon (`--help` alone loads
# none of it); driver_for finds each driver and checks its store contract version.
RUN /opt/luoshod/bin/pip install --no-cache-dir ./clients/python . ./drivers/sqlite ./drivers/lmdb ./drivers/postgres \
 && /opt/luoshod/bin/luoshod serve --help >/dev/null \
 && /opt/luoshod/bin/python -c "from luoshod.store import driver_for; [driver_for(u) for u in ('sqlite:///x.db', 'lmdb:///x', 'postgresql://x')]"

FROM python:3.11-slim
RUN groupadd --system --gid 10001 luoshod \
 && useradd --system --uid 10001 --gid luoshod --home-dir /var/lib/luoshod --shell /usr/sbin/nologin luoshod \
 && install -d -o luoshod -g luoshod -m 0750 /var/lib/luoshod \
 && install -d -o luoshod -g luoshod -m 0770 /run/luoshod
COPY --from=build /opt/luoshod /opt/luoshod
ENV PATH=/opt/luoshod/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    LUOSHOD_STORE=lmdb:///var/lib/luoshod/store \
    LUOSHOD_LISTEN=unix:/run/luoshod/luoshod.sock,127.0.0.1:50051 \
    LUOSHOD_LOG_FORMAT=json
USER 10001:10001
WORKDIR /var/lib/luoshod
VOLUME ["/var/lib/luoshod"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["luoshod", "healthcheck"]
ENTRYPOINT ["luoshod"]
CMD ["serve"]

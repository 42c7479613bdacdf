# luoshod: the daemon in a slim, non-root image.
#   docker build -t luoshod .
#   docker run -v luoshod-data:/var/lib/luoshod luoshod
# Settings come from LUOSHOD_* variables (README: Configuration); the defaults below keep
# the store in the volume and listen on loopback and on a unix socket in /run/luoshod.

FROM python:3.11-slim AS build
WORKDIR /src
RUN python -m venv /opt/luoshod
COPY clients/python/ clients/python/
COPY pyproject.toml README.md ./
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
EXPOSE 50051
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["luoshod", "healthcheck"]
ENTRYPOINT ["luoshod"]
CMD ["serve"]

# syntax=docker/dockerfile:1
# aasa-server in a container: a Swift 6.3 builder, then a slim Debian 12 runtime holding the binary (Swift
# runtime linked in statically) and only the libraries it loads. Runs as UID 10001, works with a read-only
# root filesystem (state, such as the CA of `aasa-server dev`, lives in the /var/lib/aasa-server volume).
#
#   docker build --build-arg AASA_BUILD_COMMIT="$(git rev-parse --short=12 HEAD)" -t aasa-server .
#   docker run -p 8080:8080 -v "$PWD/conf:/etc/aasa-server:ro" -v aasa-state:/var/lib/aasa-server aasa-server
#   docker run -p 80:80 -p 443:443 --sysctl net.ipv4.ip_unprivileged_port_start=0 -v aasa-dev:/var/lib/aasa-server \
#       aasa-server dev --host dev.example.com --app TEAMID.com.example.app --public-address 192.168.1.20

FROM swift:6.3-bookworm AS builder
# The system libraries the package links; pkg-config finds them.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libssl-dev zlib1g-dev libsqlite3-dev libpq-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
# .git is not copied; the commit --version reports comes in as a build argument.
ARG AASA_BUILD_COMMIT=unknown
COPY . .
RUN swift build -c release --static-swift-stdlib --product aasa-server \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/aasa-server" /out/aasa-server \
    && strip /out/aasa-server

FROM debian:bookworm-slim AS runtime
LABEL org.opencontainers.image.title="aasa-server" \
      org.opencontainers.image.description="Hosts, generates and checks apple-app-site-association files" \
      org.opencontainers.image.source="https://github.com/aasa-server/aasa-server" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="0.1.0"
# Only what `ldd aasa-server` lists beyond the base image (libssl3, zlib1g), libsqlite3-0 and libpq5 (each opened when a link store
# is in it: SQLite, or PostgreSQL for the replica variants), the CA bundle `check` uses, and
# curl for DNS-01 hooks (deploy/kubernetes/acme's asks a DNS provider's HTTP API with it).
# Debian's security updates replace these packages in place, so versions are not pinned.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libssl3 zlib1g libsqlite3-0 libpq5 ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 aasa \
    && useradd --system --uid 10001 --gid aasa --home-dir /var/lib/aasa-server --no-create-home --shell /usr/sbin/nologin aasa \
    && install -d -o 10001 -g 10001 -m 0750 /var/lib/aasa-server
COPY --from=builder /out/aasa-server /usr/local/bin/aasa-server
COPY config/example.json /etc/aasa-server/config.json
USER 10001:10001
WORKDIR /var/lib/aasa-server
VOLUME ["/var/lib/aasa-server"]
# The AASA listener of the bundled config. Its admin listener is on loopback (the HEALTHCHECK's), so not here.
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/usr/local/bin/aasa-server", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/aasa-server"]
CMD ["serve", "--config", "/etc/aasa-server/config.json"]

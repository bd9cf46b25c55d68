# syntax=docker/dockerfile:1
# Build: the release binary, with the exact dependency versions of Cargo.lock.
FROM rust:1-bookworm AS builder
WORKDIR /src
# sqlx's compile-time checked queries (if any) read the committed .sqlx/ data, not a live database.
ENV SQLX_OFFLINE=true
COPY . .
# Cache mounts keep the registry and build tree between builds; the binary is copied out of the
# cached target dir in the same step.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked \
    && install -m 0755 target/release/videoapp /usr/local/bin/videoapp

# Run: a slim Debian with CA roots (for TLS to a managed ClickHouse / Postgres) and ffmpeg (media
# processing), as a non-root user.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates ffmpeg \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/videoapp --shell /usr/sbin/nologin videoapp \
    && mkdir -p /var/lib/videoapp/spool /var/lib/videoapp/media \
    && chown -R videoapp:videoapp /var/lib/videoapp
COPY --from=builder /usr/local/bin/videoapp /usr/local/bin/videoapp
USER videoapp
WORKDIR /var/lib/videoapp
ENV VIDEOAPP_LISTEN=0.0.0.0:8080 \
    VIDEOAPP_METRICS_LISTEN=0.0.0.0:9464 \
    VIDEOAPP_SPOOL_DIR=/var/lib/videoapp/spool \
    VIDEOAPP_MEDIA_DIR=/var/lib/videoapp/media
EXPOSE 8080 9464
# SIGTERM starts the graceful shutdown (stop accepting, flush the spool).
STOPSIGNAL SIGTERM
ENTRYPOINT ["videoapp"]
CMD ["serve"]

# toolhost: a multi-stage build. The final image holds the stripped release binary, the
# example catalog and CA certificates, and runs as an unprivileged user.
#   docker build -t toolhost .
#   docker run -p 8080:8080 toolhost            # the example catalog at http://localhost:8080
#   docker run -p 8080:8080 -e TOOLHOST_PUBLIC_URL=https://tools.example.com toolhost
#                                               # behind a proxy that serves that https URL
# Mount your catalog at /etc/toolhost/catalog (and a config with --config); see docs/operations.md.
# crates/toolhost/tests/it/deploy_run.rs starts the binary with this file's ENTRYPOINT, CMD, ENV
# and USER, and what it copies, and waits for /readyz.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p toolhost

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin toolhost
COPY --from=build /src/target/release/toolhost /usr/local/bin/toolhost
COPY examples/catalog /etc/toolhost/catalog
USER 10001:10001
# The URL clients reach the server at: the WoA document advertises it, and the protocol routes
# answer to its host. The server listens on every address without TLS, which WoA allows only
# behind an https URL (draft §8.1): this default is the URL `docker run -p 8080:8080` gives on
# this machine (loopback, so nothing plain-http is advertised to the network). Anywhere else,
# set the https URL your proxy serves; plain http on a private network on purpose takes
# TOOLHOST_ALLOW_HTTP_PUBLIC_URL=true as well.
ENV TOOLHOST_PUBLIC_URL=http://localhost:8080
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/toolhost"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--catalog", "/etc/toolhost/catalog"]

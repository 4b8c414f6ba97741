# toolhost: a multi-stage build. The final image holds the stripped release binary, the
# example catalog and CA certificates, and runs as an unprivileged user.
#   docker build -t toolhost .
#   docker run -p 8080:8080 toolhost            # the example catalog on :8080
# Mount your catalog at /etc/toolhost/catalog (and a config with --config); see docs/operations.md.
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
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/toolhost"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--catalog", "/etc/toolhost/catalog"]

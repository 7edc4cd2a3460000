# vramdiff in a container: the image runs `vramdiff` on standard input.
#
#   docker build -t vramdiff .
#   docker run -i --rm vramdiff < server.log
#   journalctl -u ollama --no-pager | docker run -i --rm vramdiff --format markdown
#   docker run -i --rm vramdiff mcp              # the MCP server, for an agent (docs/guide/mcp.md)
#
# Built with the dist profile (the binaries the releases ship); the runtime image is Debian slim with the binary
# alone (rustls and the webpki roots are compiled in: no OpenSSL, no CA bundle needed for `inspect URL`).
FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist && cp target/dist/vramdiff /usr/local/bin/vramdiff

FROM debian:bookworm-slim
COPY --from=build /usr/local/bin/vramdiff /usr/local/bin/vramdiff
# Reports depend on the log alone: there are no model blobs in the container to look for.
ENV VRAMDIFF_NO_MODEL_SEARCH=1
USER 65534:65534
ENTRYPOINT ["vramdiff"]

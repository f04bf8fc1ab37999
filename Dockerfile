# isogate container image.
#
#   docker build -t isogate .
#   docker run -p 8787:8787 -e ISOGATE_TOKEN=… -v $PWD/isogate.yaml:/etc/isogate/isogate.yaml isogate
#
# Stage 1 builds the binary with cgo (v8go links V8's static library).
# Stage 2 is a Node.js runtime image, so stdio backends started with
# `node` or `npx` (most published MCP servers) run inside the container.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/isogate ./cmd/isogate \
    && CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o /out/isogate-worker ./cmd/isogate-worker \
    && /out/isogate version

FROM node:22-bookworm-slim
# tini reaps stdio backends' children; ca-certificates for HTTPS backends and OTLP.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --create-home --home-dir /home/isogate isogate
COPY --from=build /out/isogate /out/isogate-worker /usr/local/bin/
USER 10001:10001
ENV HOME=/home/isogate \
    NPM_CONFIG_CACHE=/home/isogate/.npm \
    XDG_CACHE_HOME=/home/isogate/.cache
WORKDIR /home/isogate
EXPOSE 8787
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/isogate"]
CMD ["serve", "--config", "/etc/isogate/isogate.yaml"]

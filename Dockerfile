# syntax=docker/dockerfile:1
# Switchboard's image: one static binary (no cgo: the SQLite driver is pure Go), CA certificates
# for outbound HTTPS (webhooks, carriers, attachments) and nothing else, run as a non-root user.
#
#   docker build -t switchboard --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) --build-arg BUILD_DATE=$(date -u +%FT%TZ) .

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel COMMIT=unknown BUILD_DATE=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.buildDate=${BUILD_DATE}" \
      -o /out/switchboard ./cmd/switchboard \
 && mkdir -p /out/data

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/switchboard /switchboard
COPY --from=build --chown=65532:65532 /out/data /data
# An unprivileged user without a passwd entry (scratch has none); the data directory is its own.
USER 65532:65532
ENV SWITCHBOARD_DATA_DIR=/data \
    SWITCHBOARD_LISTEN=0.0.0.0:8443
VOLUME /data
# 8443: the API (TLS); 8080: the plain listener for a TLS-terminating proxy, when set
# (SWITCHBOARD_PLAIN_LISTEN); 9090: metrics, when set (SWITCHBOARD_METRICS_LISTEN).
EXPOSE 8443 8080 9090
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["/switchboard", "healthcheck"]
ENTRYPOINT ["/switchboard"]
CMD ["serve"]

# One Dockerfile builds every manager; BINARY picks which:
#   docker build --build-arg BINARY=address-controller -t ghcr.io/cozystack/address-controller:dev .
#   docker build --build-arg BINARY=metallb-iad -t ghcr.io/cozystack/metallb-iad:dev .
#   docker build --build-arg BINARY=cilium-iad -t ghcr.io/cozystack/cilium-iad:dev .
# Override BASE_IMAGE to build from another registry, e.g. docker.io/library/golang:1.26
ARG BASE_IMAGE=golang:1.26
FROM ${BASE_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH
ARG BINARY=address-controller
# VERSION is the release the binary reports (--version, its first log line).
ARG VERSION=

WORKDIR /workspace
# Copy the Go Modules manifests and download dependencies in their own layer,
# so that source changes don't invalidate it.
COPY go.mod go.mod
COPY go.sum go.sum
RUN go mod download

# Copy the Go source (relies on .dockerignore to filter)
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/

# GOARCH has no default, so the binary matches the platform the image is built for.
RUN test -d "cmd/${BINARY}" || { echo "BINARY must be address-controller, metallb-iad or cilium-iad, not '${BINARY}'" >&2; exit 1; }
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath \
    -ldflags "-X github.com/cozystack/address-controller/internal/version.version=${VERSION}" \
    -o /manager "./cmd/${BINARY}"

# Use distroless as minimal base image to package the manager binary
# Refer to https://github.com/GoogleContainerTools/distroless for more details
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /manager /manager
USER 65532:65532

ENTRYPOINT ["/manager"]

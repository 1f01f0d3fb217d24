# Builds the manager and the collector as static binaries on distroless nonroot images.
# (No Docker engine runs on the project's CI machines: there hack/imagepack packs the same binaries into OCI
# tarballs. This Dockerfile is for users who build with Docker or Buildah.)
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o /out/manager ./cmd/manager && \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o /out/collector ./cmd/collector && \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o /out/launcher ./cmd/launcher

# The manager image: docker build --target manager -t evalrun/manager .
FROM gcr.io/distroless/static:nonroot AS collector
WORKDIR /
COPY --from=builder /out/collector /collector
# The runner container's init; `collector install` copies it into the pod's bin volume.
COPY --from=builder /out/launcher /launcher
USER 65532:65532
ENTRYPOINT ["/collector"]

FROM gcr.io/distroless/static:nonroot AS manager
WORKDIR /
COPY --from=builder /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]

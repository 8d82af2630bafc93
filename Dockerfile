# syntax=docker/dockerfile:1
#
# The bridge as a container image: `make image` (IMAGE ?= tasksbridge:dev).
#
# Build stage: a static binary (CGO_ENABLED=0: no libc, no dynamic loader),
# -trimpath (no build machine paths in it). The build context has no .git
# (.dockerignore), so the version is passed as build arguments and linked in
# with -X (internal/version); `make image` fills them from git.
# deploy/deploy_test.go builds the binary with this very command line and
# checks that it is static and serves from an empty directory and environment
# as uid 65532.
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG REVISION=""
ARG DIRTY=""
ARG BUILD_TIME=""
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -o /out/bridge \
    -ldflags "-s -w -X github.com/tasksbridge/tasksbridge/internal/version.Version=${VERSION} -X github.com/tasksbridge/tasksbridge/internal/version.Revision=${REVISION} -X github.com/tasksbridge/tasksbridge/internal/version.Dirty=${DIRTY} -X github.com/tasksbridge/tasksbridge/internal/version.BuildTime=${BUILD_TIME}" \
    ./cmd/bridge
# The data directory, owned by the runtime user so that a fresh volume
# mounted there inherits a writable owner.
RUN mkdir -p /out/var/lib/tasksbridge

# Final stage: distroless/static rather than scratch. It is as empty (no shell,
# no package manager, no libc), but brings what a scratch image would have to
# copy in and keep current by hand: the CA bundle (rediss://, an https
# upstream), tzdata, and /etc/passwd entries for uid 65532 ("nonroot"), so
# tools that map the uid to a name work. The :nonroot tag's default user is
# 65532; USER repeats it numerically so that Kubernetes' runAsNonRoot can
# check it without resolving a name.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bridge /bridge
COPY --from=build --chown=65532:65532 /out/var/lib/tasksbridge /var/lib/tasksbridge
USER 65532:65532
# Listen on every interface (the default is loopback only) and keep the
# embedded store on the volume: the bridge writes nowhere else, so the root
# filesystem can be mounted read-only. With --store redis://... (Kubernetes,
# deploy/kubernetes) the data directory is not used at all.
ENV TASKSBRIDGE_LISTEN=0.0.0.0:8080 \
    TASKSBRIDGE_DATA_DIR=/var/lib/tasksbridge
VOLUME ["/var/lib/tasksbridge"]
EXPOSE 8080
ENTRYPOINT ["/bridge"]
CMD ["serve"]

# The gpuplan image the sweep Job's pods run (gpuplan sweep --emit-job):
# one static binary on distroless, no shell, running as the nonroot user.
#
#   docker build -t registry.example/gpuplan:v1 .
#
# go-nvml (NVML discovery in gpuplan calibrate) is cgo and loads
# libnvidia-ml at run time; built with CGO_ENABLED=0 it is left out and
# calibrate says NVML is not available. Sweeps, simulate, recommend and the
# rest need no cgo. For calibrate on a GPU node, build with cgo on a CUDA
# base image instead.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /gpuplan ./cmd/gpuplan

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /gpuplan /gpuplan
USER 65532:65532
ENTRYPOINT ["/gpuplan"]

# acp-agent serve in a container: a static binary in a distroless image,
# run as a non-root user (docs/remote.md, "Docker").
#   docker build -t acp-agent .
#   docker run -d -p 127.0.0.1:7420:7420 -v "$PWD:/work" -v acp-state:/state -e OPENAI_API_KEY acp-agent
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static: no C library, so it runs on any base image (and as its own
# sandbox helper).
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/acp-agent ./cmd/acp-agent

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/acp-agent /acp-agent
# The token file, the session files and the log live in /state.
ENV HOME=/state XDG_STATE_HOME=/state XDG_CONFIG_HOME=/state/config
VOLUME ["/state"]
WORKDIR /work
USER 65532:65532
EXPOSE 7420
# Plain HTTP on the container's own network: publish the port on
# 127.0.0.1 of the host, or put a TLS proxy in front (docs/remote.md).
ENTRYPOINT ["/acp-agent", "serve", "--listen", "0.0.0.0:7420", "--insecure", "--root", "/work"]

# For agents that run commands, put the binary in an image with your
# toolchain instead, e.g.:
#   FROM golang:1.26
#   COPY --from=acp-agent /acp-agent /usr/local/bin/acp-agent
#   RUN useradd -m agent
#   USER agent
#   ENTRYPOINT ["acp-agent", "serve", "--listen", "0.0.0.0:7420", "--insecure", "--root", "/work"]

# The service in a container, set up and started by the README's own two commands (make install is
# the first half of both). Debian's packages give Python 3.11, Stockfish and Chromium, as on a host.
FROM debian:bookworm-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv make ca-certificates stockfish chromium \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /studio
COPY . .
RUN make install

# The data dir (SQLite control plane, archive, keys) lives on a volume: it outlives the container.
ENV STUDIO_DATA_DIR=/studio/studio-data
VOLUME /studio/studio-data
EXPOSE 8000
# inside a container the service must listen beyond loopback for the published port to reach it
CMD ["make", "serve", "HOST=0.0.0.0", "PORT=8000"]

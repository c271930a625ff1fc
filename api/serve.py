"""`studio serve`: one process running the whole service under uvicorn on one data dir."""
from __future__ import annotations

import os
import signal
import socket
import sys

import uvicorn

from api import accesslog
from api.app import create_app
from orchestrator import datadir
from orchestrator.bootstrap import bootstrap_owner, is_first_start, reuse_notice
from orchestrator.core import Core
from orchestrator.store import StoreError


# How long an idle keep-alive connection is kept (uvicorn's default is 5 s). An agent's connection idles
# between answering a turn and asking for the next (a model's reply can take a minute); a server that
# closed it at 5 s raced the agent's next request on it, which the client saw as a dropped request
# (RemoteProtocolError). Longer than client pools keep a connection (httpx: 5 s), so the client closes first.
KEEP_ALIVE_S = 75


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, taken before anything is created or printed: a busy port is one line, and
    no owner token is shown for a server that never starts. uvicorn serves on this very socket."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise datadir.StartError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    family, kind, proto, _, address = infos[0]
    # getaddrinfo's proto (IPPROTO_TCP), not 0: asyncio sets TCP_NODELAY on accepted connections only
    # when their proto says TCP, and without it every answer waited out a 40 ms delayed ACK
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart need not wait
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise datadir.StartError(f"cannot listen on {host}:{port} ({e.strerror}): another program holds that "
                                 "port; stop it, or serve on another with `studio serve --port N` "
                                 "(`make serve PORT=N`)") from None
    return sock


def uvicorn_config(app, *, host: str, port: int, log_level: str = "info",
                   forwarded_allow_ips: str | None = None) -> uvicorn.Config:
    # Proxy headers (X-Forwarded-For, used by the per-address limit) are trusted only from the
    # addresses the operator names; by default the socket's peer is the client.
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, workers=1, http="httptools",
                          timeout_keep_alive=KEEP_ALIVE_S,
                          proxy_headers=bool(forwarded_allow_ips), forwarded_allow_ips=forwarded_allow_ips or "")


def serve(*, host: str, port: int, data_dir: str, ray_address: str | None = None, bootstrap: bool = True,
          log_level: str = "info", forwarded_allow_ips: str | None = None) -> int:
    # Checked before Ray starts: a read-only or full data dir, one another server holds, or a port
    # another program holds, is one line.
    os.umask(0o077)  # files the service and its workers create are the operator's alone
    ray_address = ray_address or os.environ.get("RAY_ADDRESS")
    try:
        datadir.check(data_dir)
        # heads joined to one Ray cluster may share the data dir: they are one service (docs/CLUSTER.md)
        held = datadir.lock(data_dir, shared=bool(ray_address))  # noqa: F841  (open for the life of the process)
        listening = bind(host, port)
        first_start = is_first_start(data_dir)
        core = Core.open(data_dir)  # migrates the store before any request
        datadir.make_private(data_dir)
        # `studio account login-link` prints links for the address served on (docs/api.md)
        datadir.record_serving(data_dir, datadir.serving_url(host, port))
    except datadir.StartError as e:
        print(f"studio serve: {e}", file=sys.stderr, flush=True)
        return 2
    except (OSError, StoreError) as e:
        print(f"studio serve: cannot open the store in {data_dir}: {e}", file=sys.stderr, flush=True)
        return 2
    if first_start and bootstrap:
        account, token = bootstrap_owner(core)
        print(f"studio: new data dir {core.data_dir.resolve()}; owner account {account['email']} (plan lab).\n"
              "studio: owner API token (full scope), shown once; store it now:\n"
              f"{token}", flush=True)
        from orchestrator.console_auth import login_link

        print("studio: web console sign-in link for the owner (one use, 15 minutes):\n"
              f"{login_link(core, account['email'], datadir.base_url(data_dir, core.config))}", flush=True)
    elif not first_start:
        print(reuse_notice(core), flush=True)
    # Compiled before Ray starts its workers and before the port opens: the workers then load the
    # kernels from the shared cache, and no first match waits on the compiler.
    from engine.warm import warm

    print("studio: compiling the engine's kernels (a minute on a fresh install, instant after)", flush=True)
    warmed = warm()
    print(f"studio: kernels ready ({warmed['seconds']} s; cache {warmed['cache_dir']})", flush=True)
    # Ray installs its own SIGTERM handler when it starts; starting it before uvicorn lets uvicorn's
    # graceful shutdown (and the quiet handler below) win, so a stop still closes the dispatcher.
    from orchestrator.workers import init_ray

    init_ray(ray_address)
    app = create_app(core=core, dispatch=True, ray_address=ray_address)
    # the OpenAPI document (discovery, /api/v1/openapi.json and a 405's Allow read it), built before the
    # port opens rather than on the event loop by the first request that needs it
    from api.routes.discovery import endpoint_list

    endpoint_list(app)
    config = uvicorn_config(app, host=host, port=port, log_level=log_level, forwarded_allow_ips=forwarded_allow_ips)
    accesslog.install()  # after uvicorn configured its loggers
    server = uvicorn.Server(config)
    # uvicorn catches SIGINT/SIGTERM, finishes in-flight requests, then re-raises the signal to the
    # handler that was installed before it. Installing a quiet one here turns that into a normal
    # return, so an operator's stop exits 0 instead of dying by the signal.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: None)
    server.run(sockets=[listening])
    return 0 if server.started else 1  # uvicorn logs why it could not start (port taken, ...)


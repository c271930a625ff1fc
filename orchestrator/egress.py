"""Where the service may send a provider request (docs/api.md): the rule for base URLs.

A base URL an account stores must be http or https and resolve only to public addresses, unless it
starts with an entry of the operator's `[providers] allow_base_urls` in config.toml. "Starts with" is
read on the URL as the HTTP client (httpx) will request it: same scheme, host and port, and a path
under the entry's path once dot segments are resolved and percent-escapes decoded (`/v1/../../x`,
`/v1/%2e%2e/x` are not under `/v1`), userinfo aside; so `http://127.0.0.1:11434@169.254.169.254/` or
`http://127.0.0.1.example.org/` never pass as `http://127.0.0.1`. The seats' transport checks the
address it connects to again (seats/transport.py).
"""
from __future__ import annotations

import ipaddress
import posixpath
import socket
from urllib.parse import urlsplit

import httpx

from orchestrator.errors import DomainError
from orchestrator.plans import ConfigError

SCHEMES = ("http", "https")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
RULE = ("an account's provider base URL must be http or https and reach only public addresses, unless the "
        "operator lists it under [providers] allow_base_urls in the data dir's config.toml")


def allow_list(config: dict) -> tuple[str, ...]:
    """The operator's allowed base URL prefixes; a wrong type is the operator's mistake, said plainly."""
    entries = (config.get("providers") or {}).get("allow_base_urls") or []
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise ConfigError('config.toml: providers.allow_base_urls must be a list of URLs, like '
                         '["http://127.0.0.1:11434"]')
    return tuple(entries)


def _parts(url: str) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path) where httpx sends a request for url, the path normalised as a server
    that decodes percent-escapes before routing reads it: decoded (httpx.URL.path), backslashes read as
    slashes, dot segments resolved. ValueError when the URL has no host or a bad port."""
    try:
        u = httpx.URL(url.strip())  # lowercases scheme and host, resolves literal dot segments
    except httpx.InvalidURL as e:
        raise ValueError(f"{url!r} is not a URL ({e})") from None
    if not u.host:
        raise ValueError(f"{url!r} names no host")
    path = posixpath.normpath(u.path.replace("\\", "/") or "/")
    default = {"http": 80, "https": 443}.get(u.scheme)
    return u.scheme, u.host, u.port or default, "/" + path.lstrip("/")


def allowed(url: str, entries: tuple[str, ...]) -> bool:
    """True when url starts with one of the operator's entries (compared part by part, not as text)."""
    try:
        scheme, host, port, path = _parts(url)
    except ValueError:
        return False
    for entry in entries:
        try:
            e_scheme, e_host, e_port, e_path = _parts(entry)
        except ValueError:
            continue
        base = e_path.rstrip("/")
        if (scheme, host, port) == (e_scheme, e_host, e_port) and (path == base or path.startswith(base + "/")):
            return True
    return False


def is_public(address: str) -> bool:
    """An address on the public internet: none of private, loopback, link-local (169.254.0.0/16, the
    cloud metadata service), reserved, multicast or unspecified, including IPv4 hidden in an IPv6
    form (::ffff:-mapped, 6to4, NAT64, Teredo)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    inner = []
    if ip.version == 6:
        inner = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
        if ip in _NAT64:
            inner.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    for a in [ip, *(i for i in inner if i is not None)]:
        if (a.is_private or a.is_loopback or a.is_link_local or a.is_reserved or a.is_multicast
                or a.is_unspecified or not a.is_global):
            return False
    return True


def resolve_public(host: str, port: int) -> list[str]:
    """Every address host resolves to, when all are public; else ValueError naming the first that is not."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise ValueError(f"the host {host} does not resolve ({e})") from None
    return public_only(host, [info[4][0] for info in infos])


def public_only(host: str, addresses: list[str]) -> list[str]:
    if not addresses:
        raise ValueError(f"the host {host} resolves to no address")
    for a in addresses:
        if not is_public(a):
            raise ValueError(f"{host} resolves to {a}, which is not a public address")
    return addresses


def check_scheme(url: str) -> None:
    """http or https with a host: the one shape any stored base URL has, the operator's included."""
    scheme = urlsplit(url.strip()).scheme.lower()
    if scheme not in SCHEMES:
        raise ValueError(f"the base URL {url!r} uses {scheme or 'no scheme'}; only http and https are allowed")
    try:
        _parts(url)
    except ValueError as e:
        raise ValueError(f"the base URL {url!r} is not a URL with a host ({e})") from None


def check_account_url(url: str, config: dict, *, own: tuple[str, ...] = ()) -> None:
    """DomainError bad_base_url unless an account may store url. own: the service's own addresses
    (its public_url, the address it serves on), refused unless the operator allows them."""
    try:
        check_scheme(url)
        if allowed(url, allow_list(config)):
            return
        if allowed(url, tuple(o for o in own if o)):
            raise ValueError(f"the base URL {url!r} points at this service itself")
        _, host, port, _ = _parts(url)
        resolve_public(host, port)
    except ValueError as e:
        raise DomainError("bad_base_url", f"{e}; {RULE}") from None

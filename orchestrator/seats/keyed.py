"""The one way a request carrying a provider key is built and sent: to the key's own origin only.

A key goes only to the origin (scheme, host and port) of the base URL it was stored with (docs/api.md,
"Provider base URLs"). Every caller that sends a key (the seats' chat calls, the key check and its probes, the
router balance, `studio prices update`) builds its request here: a URL on another origin raises
OffOrigin before anything is sent, a link an answer hands back (a router's `links.next`) is read
against the page it came on and checked the same way, and a redirect is never followed (`moved` says
where one pointed). The address rule itself (public addresses only) stays with the transport.
"""
from __future__ import annotations

import httpx

DEFAULT_PORTS = {"http": 80, "https": 443}


class OffOrigin(Exception):
    """A request carrying a key would go to another origin than the one the key was stored for."""

    def __init__(self, url: str, origin: str):
        self.url, self.origin = url, origin
        super().__init__(f"{url} is not on {origin}, the origin the key was stored for; a request carrying "
                         "the key goes there only, so it was not sent")


def origin_of(url: str | httpx.URL) -> str:
    """scheme://host:port of url, the port spelled out (http://a and http://a:80 are one origin)."""
    u = url if isinstance(url, httpx.URL) else httpx.URL(str(url).strip())
    host = f"[{u.host}]" if ":" in u.host else u.host
    return f"{u.scheme}://{host}:{u.port or DEFAULT_PORTS.get(u.scheme)}"


class Keyed:
    """A key's headers and the origin its base URL names. `url` and `follow` give URLs on that origin
    (OffOrigin otherwise); `request` and `send` check the URL they are handed again, so nothing that
    carries the headers leaves for another origin whichever way its URL was made."""

    def __init__(self, base_url: str, headers: dict[str, str]):
        self.base = base_url.strip().rstrip("/")
        self.origin = origin_of(self.base)
        self.headers = headers
        self._raw = list(headers.items())  # a seat's turn builds its request from these as they are
        self._checked: httpx.URL | None = None  # a seat sends to one URL every turn: checked once

    def check(self, url: str | httpx.URL) -> httpx.URL:
        if url is self._checked:
            return url
        try:
            u = url if isinstance(url, httpx.URL) else httpx.URL(str(url).strip())
            here = origin_of(u) if u.host else None
        except (httpx.InvalidURL, TypeError, ValueError):
            here = None
        if here != self.origin:
            raise OffOrigin(str(url), self.origin)
        self._checked = u
        return u

    def url(self, path: str = "") -> httpx.URL:
        """The base URL with path appended ("/models" under "https://r.example/api/v1")."""
        return self.check(self.base + path)

    def follow(self, page: str | httpx.URL, link: str) -> httpx.URL:
        """A link found in the answer to page, read as a browser reads it (relative to page, or
        absolute), when it stays on the key's origin."""
        try:
            target = httpx.URL(str(page)).join(link.strip())
        except (httpx.InvalidURL, TypeError, ValueError):
            raise OffOrigin(link, self.origin) from None
        return self.check(target)

    def request(self, method: str, url: str | httpx.URL, *, headers=None, **kw) -> httpx.Request:
        """An httpx.Request carrying the key's headers (and headers), to url on the key's origin."""
        both = {**self.headers, **dict(headers)} if headers else self._raw
        return httpx.Request(method, self.check(url), headers=both, **kw)

    async def send(self, client: httpx.AsyncClient, method: str, url: str | httpx.URL, *,
                   timeout: float, json=None) -> httpx.Response:
        """Send one request over client; a redirect comes back as it was answered, never followed."""
        request = client.build_request(method, self.check(url), headers=self.headers, json=json, timeout=timeout)
        return await client.send(request, follow_redirects=False)


def moved(r: httpx.Response, url: httpx.URL | None = None) -> str:
    """What a redirect answer to url (default: the request r answers) said, for a message: where it
    pointed, and that it was not followed."""
    location = r.headers.get("location")
    if not location:
        return "a redirect without a Location (redirects are not followed)"
    try:
        target = str((url or r.request.url).join(location))
    except (httpx.InvalidURL, RuntimeError):  # RuntimeError: a response built without its request
        target = location
    return f"a redirect to {target} (redirects are not followed: the key goes to its own origin only)"

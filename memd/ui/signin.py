"""Who may use the page, checked before any route runs.

- The page listens on 127.0.0.1 only, so other machines cannot reach it. Other users of this
  machine can reach the port; what keeps them out is a random token that `memd ui` prints only
  to its own terminal. The first visit carries it in the URL; the answer sets a cookie
  (HttpOnly, SameSite=Strict, named after the port) and moves on to a URL without it: the
  page's own path that was asked for, when it is one of the page's pages, else its start.
- `Host` must be exactly ``127.0.0.1:<port>`` or ``localhost:<port>``: a page on another site
  that rebinds its DNS name to 127.0.0.1 sends its own name and is refused.
- Every POST must carry the CSRF token of this process in its form (and, when the browser
  says where it comes from, come from this origin). Only GET, HEAD and POST are served.
- No CORS headers are ever sent; every answer forbids framing, sniffing and caching, keeps
  referrers on this origin, and its content security policy allows scripts and styles from this origin only.
"""

from __future__ import annotations

import hmac
import html
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_FORM_BYTES = 256 * 1024
SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
        b" connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


@dataclass(frozen=True, slots=True)
class Keys:
    """The secrets of one `memd ui` process: all random, none stored anywhere."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))


def cookie_name(port: int) -> str:
    """Browsers send a host's cookies to every port of it; the name keeps instances apart."""
    return f"memd_ui_{port}"


def allowed_hosts(port: int) -> frozenset[str]:
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


class Guard:
    """ASGI middleware enforcing the rules in the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        keys: Keys,
        port: int,
        *,
        on_login: Callable[[], None] | None = None,
        pages: frozenset[str] = frozenset({"/"}),
    ) -> None:
        self.app = app
        self.pages = pages  # where the sign-in may lead: the page's own paths
        self.keys = keys
        self.port = port
        self.hosts = allowed_hosts(port)
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.cookie = cookie_name(port)
        self.on_login = on_login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        headers = _headers(scope)
        if headers.get("host", "") not in self.hosts:
            await _plain(send, 421, "This page answers only to 127.0.0.1 and localhost.")
            return
        method = scope["method"]
        if method not in ("GET", "HEAD", "POST"):
            await _plain(send, 405, "Method not allowed.")
            return
        if not self._signed_in(headers.get("cookie", "")):
            token = _query(scope).get("token", "")
            if method in ("GET", "HEAD") and token and same(token, self.keys.token):
                await self._welcome(scope, send)
                return
            await _denied(send)
            return
        if method == "POST":
            refusal = self._post_refusal(headers)
            if refusal:
                await _plain(send, 403, refusal)
                return
            body = await _read_body(receive, MAX_FORM_BYTES)
            if body is None:
                await _plain(send, 413, "The form is too large.")
                return
            form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            if not same((form.get("csrf") or [""])[0], self.keys.csrf):
                await _plain(
                    send, 403, "Missing or wrong CSRF token: reload the page and try again."
                )
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    def _signed_in(self, cookie_header: str) -> bool:
        for part in cookie_header.split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.cookie and same(value, self.keys.session):
                return True
        return False

    def _post_refusal(self, headers: dict[str, str]) -> str:
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return "Cross-origin form posts are refused."
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return "Cross-site form posts are refused."
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/x-www-form-urlencoded":
            return "Only this page's own forms can change anything."
        return ""

    async def _welcome(self, scope: Scope, send: Send) -> None:
        """Set the cookie, then leave the token URL through a same-site navigation.

        A redirect would inherit the first navigation's initiator (a terminal, or the local
        launch file): the browser treats that chain as cross-site and would withhold the
        SameSite=Strict cookie it was just given. A refresh from this page is same-site.
        """
        if self.on_login is not None:
            self.on_login()
        path = scope.get("path") or "/"
        # Never the path as sent: it is percent-decoded text of anyone's choosing (markup, or
        # `/\evil.com`, which browsers read as `//evil.com`, another site).
        target = html.escape(path if path in self.pages else "/", quote=True)
        body = (
            '<!doctype html><meta charset="utf-8">'
            f'<meta http-equiv="refresh" content="0; url={target}">'
            "<title>memd</title><p>Signed in. Opening the memory page…</p>"
        ).encode()
        cookie = f"{self.cookie}={self.keys.session}; HttpOnly; SameSite=Strict; Path=/"
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/html; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                    (b"set-cookie", cookie.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in scope.get("headers") or []:
        name = k.decode("latin-1").lower()
        value = v.decode("latin-1")
        # A repeated Host or Origin header is suspicious: keep both so no check matches.
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def _query(scope: Scope) -> dict[str, str]:
    raw = scope.get("query_string", b"").decode("latin-1")
    return {k: v[0] for k, v in parse_qs(raw).items()}


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v)
                for k, v in message.get("headers", [])
                if not k.lower().startswith(b"access-control-")
            ]
            names = {k.lower() for k, _ in headers}
            headers += [(k, v) for k, v in SECURITY_HEADERS if k not in names]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, rest: Receive) -> Receive:
    """The body already read, once; then the connection's own messages (its disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await rest()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _denied(send: Send) -> None:
    body = (
        b'<!doctype html><meta charset="utf-8"><title>memd: link needed</title>'
        b"<h1>This page needs its link</h1>"
        b"<p>Open the address <code>memd ui</code> printed in your terminal: it carries the"
        b" token of that run. Each start of <code>memd ui</code> makes a new one.</p>"
    )
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

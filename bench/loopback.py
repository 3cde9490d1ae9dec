"""A bench's fake network edge: an HTTP server on 127.0.0.1, in a thread of the bench's process.

The model APIs memd talks to cannot be reached from a benchmark (nor should they be: a figure
must not depend on someone else's server); a bench that measures memd's side of such a call
answers it here instead.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """Serves `handler` on 127.0.0.1 (a free port) while entered."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL: `http://127.0.0.1:<port>/v1`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

"""`memd ui`: serve the memory page on 127.0.0.1, print its URL and open the browser.

The page is a separate process and one more client of the daemon's socket; the daemon itself
never speaks HTTP. The URL's token is printed to this terminal only. The browser is not given
the URL on its command line (other users can list command lines): it opens a launch file,
readable only by this user, that forwards to the URL.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable, Iterator
from html import escape
from pathlib import Path
from typing import Any

from memd.core import settings as settings_mod
from memd.core.errors import MemdError
from memd.core.paths import ensure_private_dir

# A stop ends the page within this many seconds, whatever its workers are doing.
STOP_S = 4.0
# How to put back a dependency of the base install (the README's Install section says the same).
REINSTALL_HINT = (
    "install memd again with its dependencies: `pip install .` in the clone"
    " (in the virtualenv memd runs from), or `pipx install --force .`"
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memd ui",
        description="Open the memory page: a local web page over the daemon (127.0.0.1 only).",
    )
    p.add_argument("--config", help="settings file (default: the platform config dir)")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the URL, do not open it")
    p.add_argument("--timeout", type=float, default=30.0, help="socket timeout in seconds")
    return p


def bind_loopback(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1 (port 0: the system picks a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise MemdError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}",
            hint="leave out --port to take a free port",
        ) from exc
    sock.listen(64)
    sock.setblocking(False)
    return sock


def write_launch_file(folder: Path, url: str) -> Path:
    """A page, readable only by this user, that forwards the browser to `url`."""
    ensure_private_dir(folder)
    path = folder / f"ui-{os.getpid()}.html"
    body = (
        '<!doctype html><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0; url={escape(url)}">'
        f'<title>memd</title><p><a href="{escape(url)}">Open the memory page</a></p>\n'
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(body)
    return path


@contextlib.contextmanager
def _stop_on_signals(server: Any, cleanup: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C or SIGTERM stop the server and `serve` returns normally, within `STOP_S`.

    uvicorn's own handling raises the signal again once it has stopped, which would end the
    process before the launch file is removed. A request stuck in a worker thread (waiting on a
    daemon that does not answer) would keep the process alive after the server stopped: past
    `STOP_S`, the launch file is removed and the process ends there.
    """

    def stop(sig: int, frame: Any) -> None:
        server.handle_exit(sig, frame)
        timer = threading.Timer(STOP_S, _end_now, args=(cleanup,))
        timer.daemon = True
        timer.start()

    handled = (signal.SIGINT, signal.SIGTERM)
    original = {sig: signal.signal(sig, stop) for sig in handled}
    try:
        yield
    finally:
        for sig, handler in original.items():
            signal.signal(sig, handler)


def _end_now(cleanup: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):
        cleanup()
    print("memd ui: stopped with requests still running", file=sys.stderr, flush=True)
    os._exit(0)


def _stuck_threads() -> list[threading.Thread]:
    """Threads that would keep the process alive (workers blocked in a request)."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        import jinja2  # noqa: F401  (the templates need it; say so before anything starts)
    except ImportError:
        # Jinja2 is one of memd's own dependencies: only a damaged or partial install lacks it.
        print(
            "memd: the memory page needs Jinja2, which this install of memd lacks", file=sys.stderr
        )
        print(f"hint: {REINSTALL_HINT}", file=sys.stderr)
        return 1
    try:
        s = settings_mod.load(Path(args.config) if args.config else None)
        sock = bind_loopback(args.port)
    except MemdError as exc:
        print(f"memd: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return 1
    return serve(s, sock, open_browser=not args.no_browser, timeout=args.timeout)


def serve(
    s: settings_mod.Settings, sock: socket.socket, *, open_browser: bool, timeout: float
) -> int:
    import uvicorn

    from memd.ui.channel import Channel
    from memd.ui.signin import Keys
    from memd.ui.web import create_app

    port = sock.getsockname()[1]
    keys = Keys()
    launch: list[Path] = []

    def forget_launch_file() -> None:
        while launch:
            launch.pop().unlink(missing_ok=True)

    channel = Channel(s, timeout=timeout)
    app = create_app(s, keys, port, channel=channel, on_login=forget_launch_file)
    url = f"http://127.0.0.1:{port}/?token={keys.token}"
    print(f"memd ui: {url}", flush=True)
    print(
        "The link carries this session's token: anyone with it can read and change your"
        " memory. Ctrl-C stops the page.",
        file=sys.stderr,
        flush=True,
    )
    if open_browser:
        try:
            launch.append(write_launch_file(s.paths.runtime_dir, url))
            if not webbrowser.open(launch[0].as_uri()):
                print("memd: no browser found; open the link above", file=sys.stderr)
        except (OSError, MemdError, webbrowser.Error) as exc:
            print(f"memd: could not open a browser ({exc}); open the link above", file=sys.stderr)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=False,
        server_header=False,
        # Requests still running this long after a stop are cut (a worker thread stuck on a
        # daemon that does not answer ends with the process, below).
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    server.capture_signals = lambda: _stop_on_signals(server, forget_launch_file)  # type: ignore[method-assign]
    try:
        server.run(sockets=[sock])
    finally:
        forget_launch_file()
        channel.close()
        sock.close()
    if _stuck_threads():
        # Python would wait for them at exit; what they wait for is no longer wanted.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0

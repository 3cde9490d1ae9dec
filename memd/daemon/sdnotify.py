"""The sd_notify(3) protocol in plain Python: readiness, status, stopping and watchdog pings.

Every function is a silent no-op outside systemd (``$NOTIFY_SOCKET`` unset) and never raises:
a daemon must not fail because its supervisor cannot be told something.
"""

from __future__ import annotations

import logging
import os
import socket
import time

logger = logging.getLogger(__name__)


def notify(state: str) -> bool:
    """Send one datagram with `state` (``KEY=value`` lines) to ``$NOTIFY_SOCKET``.

    A leading ``@`` in the address names a Linux abstract socket. Returns True when the
    datagram was sent, False when not running under systemd or when sending failed (logged at
    debug level).
    """
    addr = os.environ.get("NOTIFY_SOCKET", "")
    if not addr:
        return False
    if addr[0] == "@":
        addr = "\0" + addr[1:]
    elif addr[0] != "/":
        # systemd >= 253 may hand VMs a vsock: address; this process has nothing to reach it with.
        logger.debug("sd_notify: unsupported NOTIFY_SOCKET %r", addr)
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(addr)
            sock.sendall(state.encode("utf-8"))
    except OSError as exc:
        logger.debug("sd_notify %r failed: %s", state, exc)
        return False
    return True


def _one_line(text: str) -> str:
    # A newline would start a new KEY=value assignment in the datagram.
    return " ".join(text.splitlines())


def ready(status: str = "") -> bool:
    """Tell systemd the daemon is ready to serve (``READY=1``), optionally with a status line."""
    return notify("READY=1" + (f"\nSTATUS={_one_line(status)}" if status else ""))


def status(text: str) -> bool:
    """Set the one-line status shown by ``systemctl --user status memd``."""
    return notify(f"STATUS={_one_line(text)}")


def reloading() -> bool:
    """Tell systemd a settings reload (SIGHUP) started; send `ready` when it is done."""
    # sd_notify(3): MONOTONIC_USEC lets systemd order this message against the reload request.
    usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    return notify(f"RELOADING=1\nMONOTONIC_USEC={usec}")


def stopping() -> bool:
    """Tell systemd the daemon is shutting down (``STOPPING=1``)."""
    return notify("STOPPING=1")


def watchdog_ping() -> bool:
    """Reset the service watchdog timer (``WATCHDOG=1``)."""
    return notify("WATCHDOG=1")


def watchdog_interval() -> float | None:
    """Seconds between watchdog pings: half of ``WatchdogSec=``, or None when no watchdog is set.

    Reads ``WATCHDOG_USEC`` and ``WATCHDOG_PID`` like sd_watchdog_enabled(3): the watchdog
    applies to this process only when ``WATCHDOG_PID`` is unset or equals its pid.
    """
    raw = os.environ.get("WATCHDOG_USEC", "")
    pid = os.environ.get("WATCHDOG_PID", "")
    try:
        usec = int(raw)
        if pid and int(pid) != os.getpid():
            return None
    except ValueError:
        return None
    if usec <= 0:
        return None
    return usec / 1_000_000 / 2

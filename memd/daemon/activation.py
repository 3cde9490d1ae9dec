"""Socket activation per sd_listen_fds(3), without libsystemd.

systemd passes listening sockets as fds 3, 4, … and describes them in ``LISTEN_PID``,
``LISTEN_FDS`` and ``LISTEN_FDNAMES``. Outside systemd every function returns nothing, so the
daemon binds its own socket (always the case on macOS, where memd does not use launchd sockets).
"""

from __future__ import annotations

import logging
import os
import socket

logger = logging.getLogger(__name__)

SD_LISTEN_FDS_START = 3
# The socket unit sets FileDescriptorName=memd.
FD_NAME = "memd"
_VARS = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")


def listen_fds_with_names(unset_env: bool = True) -> list[tuple[str, socket.socket]]:
    """Sockets passed by systemd with their ``FileDescriptorName=`` (``"unknown"`` when unnamed).

    Only honoured when ``LISTEN_PID`` is this process's pid. The fds are made close-on-exec,
    and with `unset_env` the ``LISTEN_*`` variables are removed so children do not see them.
    Passed fds that are not sockets are logged and skipped.
    """
    env = os.environ
    raw_pid, raw_n = env.get("LISTEN_PID", ""), env.get("LISTEN_FDS", "")
    names = env.get("LISTEN_FDNAMES", "").split(":")
    if unset_env:
        for var in _VARS:
            env.pop(var, None)
    try:
        if int(raw_pid) != os.getpid():
            return []
        count = int(raw_n)
    except ValueError:
        return []
    out: list[tuple[str, socket.socket]] = []
    for i in range(max(count, 0)):
        fd = SD_LISTEN_FDS_START + i
        name = names[i] if i < len(names) and names[i] else "unknown"
        try:
            os.set_inheritable(fd, False)
            # family, type and protocol are read from the fd itself.
            sock = socket.socket(fileno=fd)
        except OSError as exc:
            logger.warning(
                "socket activation: fd %d (%s) is not a usable socket: %s", fd, name, exc
            )
            continue
        out.append((name, sock))
    return out


def listen_fds(unset_env: bool = True) -> list[socket.socket]:
    """Sockets passed by systemd (fd 3 onward), or ``[]`` when not socket-activated.

    See `listen_fds_with_names` for the rules; this drops the names.
    """
    return [sock for _, sock in listen_fds_with_names(unset_env)]


def _is_unix_listener(sock: socket.socket) -> bool:
    try:
        listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) != 0
    except OSError:
        return False
    return sock.family == socket.AF_UNIX and sock.type == socket.SOCK_STREAM and listening


def inherited_unix_listener() -> socket.socket | None:
    """The listening AF_UNIX stream socket systemd passed in, or None when there is none.

    Prefers the one named ``memd``, otherwise takes the first one. Other passed sockets are
    closed (systemd keeps its own copies). Consumes the ``LISTEN_*`` variables.
    """
    candidates = listen_fds_with_names(unset_env=True)
    usable = [(name, sock) for name, sock in candidates if _is_unix_listener(sock)]
    chosen: socket.socket | None = None
    if usable:
        named = [sock for name, sock in usable if name == FD_NAME]
        chosen = named[0] if named else usable[0][1]
    for name, sock in candidates:
        if sock is not chosen:
            logger.info("socket activation: ignoring passed socket %s (fd %d)", name, sock.fileno())
            sock.close()
    return chosen

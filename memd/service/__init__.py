"""OS-service integration: systemd/launchd units, socket activation and sd_notify.

- `memd.service.sdnotify`: READY/STATUS/RELOADING/STOPPING/WATCHDOG to systemd, no-ops elsewhere.
- `memd.service.activation`: listening sockets passed by systemd (``LISTEN_FDS``).
- `memd.service.units`: render ``memd.service``, ``memd.socket`` and the launchd plist.
- `memd.service.install`: plan, apply and inspect ``memd service install|uninstall|status``.

A low layer: it imports only `memd.errors`, `memd.paths` and `memd.settings`.
"""

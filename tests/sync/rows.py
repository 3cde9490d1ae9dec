"""Sync rows for the cloud backend tests."""

from __future__ import annotations

import hashlib
import itertools
import time

from memd.sync.backend import SyncRow

_ops = itertools.count(1)


def make_row(
    path: str,
    content: str = "",
    *,
    version: int = 1,
    device: str = "dev-a",
    ns: str = "ns",
    deleted: bool = False,
    op_id: str | None = None,
    synced_at: float = 0.0,
    base: str | None = None,
) -> SyncRow:
    """A row as a device would push it; a unique op id unless one is given."""
    content = content or f"# {path}\n\n- remembered v{version}\n"
    return SyncRow(
        namespace=ns,
        path=path,
        content="" if deleted else content,
        sha256=hashlib.sha256(content.encode()).hexdigest(),
        updated_at=time.time(),
        deleted=deleted,
        device_id=device,
        version=version,
        op_id=op_id or f"op-{next(_ops)}",
        synced_at=synced_at,
        base_sha256=base,
    )

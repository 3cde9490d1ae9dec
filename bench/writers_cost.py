"""The cost of asking who holds a memory file open for writing (`memd.core.writers`).

memd asks before it writes a file someone else changed since memd last wrote it (every write
of a file memd did not write last, the first of each file included). The /proc scan stats
every open descriptor of the user's processes; the kernel's answer (a read lease granted, and
let go at once: nobody writes the file) is a few system calls. Both are timed here, in one
process, in the order A B B A, with other processes holding `--fds` descriptors in all (child
processes holding /dev/null open, 200 per process), on a file nobody writes (the common case).

    python -m bench.writers_cost                    # 200 and 2,000 descriptors
    python -m bench.writers_cost --fds 200 --no-write
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.report import DEFAULT_OUT, machine_line, publish, table
from memd.core.writers import scan, writers

BLOCK = "writers-cost"
PER_CHILD = 200
HOLDER = (
    "import os, sys\n"
    "fds = [os.open('/dev/null', os.O_RDONLY) for _ in range(int(sys.argv[1]))]\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n"
)


def holders(total: int) -> list[subprocess.Popen[str]]:
    """Child processes holding `total` descriptors open between them, until stdin closes."""
    out = []
    left = total
    while left > 0:
        n = min(PER_CHILD, left)
        p = subprocess.Popen([sys.executable, "-c", HOLDER, str(n)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        out.append(p)
        left -= n
    return out


def visible_fds() -> int:
    """The open descriptors of the processes this user may see (what the scan stats)."""
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                n += len(os.listdir(f"/proc/{pid}/fd"))
            except OSError:
                pass
    return n


def per_call_us(fn: Callable[[], object], seconds: float = 1.0) -> float:
    """Microseconds of CPU per call (this process), over about `seconds` of calls."""
    calls, start, cpu0 = 0, time.monotonic(), time.process_time()
    while time.monotonic() - start < seconds:
        fn()
        calls += 1
    return (time.process_time() - cpu0) / calls * 1e6


def measure(fds: int, path: Path) -> dict[str, object]:
    kids = holders(fds)
    try:
        seen = visible_fds()
        runs: dict[str, list[float]] = {"scan": [], "lease": []}
        for name in ("scan", "lease", "lease", "scan"):
            fn = (lambda: scan([path])) if name == "scan" else (lambda: writers(path))
            runs[name].append(per_call_us(fn))
        assert writers(path) == [] and scan([path]) == {}
        return {"fds": fds, "seen": seen, **runs}
    finally:
        for k in kids:
            assert k.stdin is not None
            k.stdin.close()
            k.wait()


def run(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "notes.md"
        path.write_text("# Notes\n- one\n")
        results = [measure(n, path) for n in args.fds]
    for r in results:
        print(r, flush=True)
    rows = [
        [f"{r['fds']:,} (all visible: {r['seen']:,})",
         " / ".join(f"{x:,.0f}" for x in r["scan"]),  # type: ignore[attr-defined]
         " / ".join(f"{x:,.1f}" for x in r["lease"])]  # type: ignore[attr-defined]
        for r in results
    ]  # fmt: skip
    return "\n".join([
        "### Who holds a file open for writing (`bench/writers_cost.py`)",
        "",
        "CPU per call in µs (this process), on a file nobody writes, with other processes"
        " holding this many descriptors (and all the descriptors the scan stats: the machine's"
        " other processes too); each way twice, in the order A B B A. The scan is what"
        " `writers` did on every call before; the lease is what it does now (the scan kept to"
        " name who holds a file, and where leases are refused).",
        "",
        table(["descriptors held by other processes", "/proc scan", "read lease"], rows),
        "",
        machine_line(),
    ])  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fds", type=int, nargs="+", default=[200, 2000])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown file to update")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()

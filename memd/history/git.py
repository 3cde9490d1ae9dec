"""The git command line as the history's object store: one `Git` per history repository.

Every call runs `git --git-dir=… --work-tree=…` with the user's global and system config
switched off (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_NOSYSTEM`) and the caller's `GIT_*` variables
removed, so a signing key, a hook path or an `fsmonitor` in someone's `~/.gitconfig` never runs
inside the daemon, and a daemon started from a git hook does not write into that repository.
Commits are written by `git fast-import` (one process per batch of changes: blobs, trees,
commits and the branch update in one stream), which is why no index or temporary files are
needed to commit redacted text.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from memd.core.errors import HistoryError

BRANCH = "refs/heads/main"
ZERO = "0" * 40
TIMEOUT_S = 60.0
_MODE_FILE = "100644"
_PIECE = 1 << 16  # bytes per write into fast-import's pipe


def blob_sha(data: bytes) -> str:
    """The object id git gives a blob holding `data` (SHA-1 repositories)."""
    h = hashlib.sha1(b"blob %d\x00" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


def find_git() -> str | None:
    """The git executable on PATH, or None."""
    return shutil.which("git")


def _clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
        }
    )
    if extra:
        env.update(extra)
    return env


@dataclass(frozen=True, slots=True)
class CommitSpec:
    """One commit for `Git.fast_import`: file contents by path (None deletes the path)."""

    message: str
    author: str  # "Name <email>"
    at: float  # seconds since the epoch
    files: Mapping[str, bytes | None]


@dataclass(frozen=True, slots=True)
class RawCommit:
    """A commit read back verbatim, enough to write it again on another parent."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    author: str  # the header value: "Name <email> 1700000000 +0000"
    committer: str
    message: bytes


def _ident_line(author: str, at: float) -> str:
    secs = int(at)
    import time

    off = time.localtime(secs).tm_gmtoff // 60
    sign = "+" if off >= 0 else "-"
    off = abs(off)
    return f"{author} {secs} {sign}{off // 60:02d}{off % 60:02d}"


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def _quote_path(path: str) -> bytes:
    # fast-import takes C-style quoted paths; quoting every path keeps spaces, quotes and
    # newlines in file names unambiguous.
    raw = path.encode("utf-8", "surrogateescape")
    out = bytearray(b'"')
    for byte in raw:
        ch = bytes([byte])
        if ch in (b'"', b"\\"):
            out += b"\\" + ch
        elif ch == b"\n":
            out += b"\\n"
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out += ch
    out += b'"'
    return bytes(out)


def _commit_stream(
    commits: Sequence[CommitSpec], parent: str | None, committer: str
) -> Iterator[bytes]:
    """The fast-import commands for `commits`, a commit's header and then each file."""
    for n, spec in enumerate(commits, start=1):
        head = bytearray(b"commit " + BRANCH.encode() + b"\n")
        head += b"mark :%d\n" % n
        head += f"author {_ident_line(spec.author, spec.at)}\n".encode()
        head += f"committer {_ident_line(committer, spec.at)}\n".encode()
        head += _data(spec.message.encode("utf-8", "surrogateescape"))
        if n == 1 and parent:
            head += b"from " + parent.encode() + b"\n"
        yield bytes(head)
        for path in sorted(spec.files):
            content = spec.files[path]  # looked up here: a mapping may read it only now
            if content is None:
                yield b"D " + _quote_path(path) + b"\n"
            else:
                yield f"M {_MODE_FILE} inline ".encode() + _quote_path(path) + b"\n"
                yield b"data %d\n" % len(content)
                yield content
                yield b"\n"
        yield b"\n"


def _write_chunked(fh: IO[bytes], pieces: Iterable[bytes]) -> None:
    buf = bytearray()
    for piece in pieces:
        buf += piece
        if len(buf) >= _PIECE:
            _write_all(fh, buf)
            buf.clear()
    _write_all(fh, buf)


def _write_all(fh: IO[bytes], data: bytes | bytearray) -> None:
    view = memoryview(data)
    while view:
        view = view[fh.write(view) :]


class Git:
    """Run git against one history repository (`git_dir`) whose work tree is `work_tree`."""

    def __init__(self, exe: str, git_dir: Path, work_tree: Path) -> None:
        self.exe = exe
        self.git_dir = git_dir
        self.work_tree = work_tree

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        timeout: float = TIMEOUT_S,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run one git command; a non-zero exit raises `HistoryError` when `check`."""
        try:
            proc = subprocess.run(
                self._cmd(args),
                input=input,
                capture_output=True,
                timeout=timeout,
                env=_clean_env(env),
                cwd=self.git_dir if self.git_dir.is_dir() else None,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise HistoryError(f"git {args[0]} failed: {exc}") from exc
        if check and proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise HistoryError(
                f"git {args[0]} exited with {proc.returncode}: {err[-1] if err else ''}"
            )
        return proc

    def _cmd(self, args: Sequence[str]) -> list[str]:
        return [
            self.exe,
            f"--git-dir={self.git_dir}",
            f"--work-tree={self.work_tree}",
            "--literal-pathspecs",
            "-c",
            "core.hooksPath=" + os.devnull,
            *args,
        ]

    def out(self, *args: str, input: bytes | None = None) -> str:
        """Standard output of a git command as text, stripped."""
        return self.run(*args, input=input).stdout.decode("utf-8", "surrogateescape").strip()

    # -- reading ---------------------------------------------------------------------------
    def head(self) -> str | None:
        """The commit the history branch points at, or None before the first commit."""
        proc = self.run("rev-parse", "--verify", "--quiet", BRANCH + "^{commit}", check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip()

    def entries(
        self, rev: str, paths: Sequence[str] = (), *, recursive: bool = True
    ) -> dict[str, str]:
        """Blob ids by path in `rev`'s tree, for `paths` (all files when empty)."""
        args = ["ls-tree", "-z", "--full-tree"]
        if recursive:
            args.append("-r")
        args.append(rev)
        if paths:
            args += ["--", *paths]
        found: dict[str, str] = {}
        for rec in self.run(*args).stdout.split(b"\x00"):
            if not rec:
                continue
            meta, _, name = rec.partition(b"\t")
            mode, kind, sha = meta.decode().split()
            if kind == "blob":
                found[name.decode("utf-8", "surrogateescape")] = sha
        return found

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Contents of objects by id, in one `cat-file --batch`."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        raw = self.run(
            "cat-file", "--batch", input="".join(s + "\n" for s in wanted).encode()
        ).stdout
        out: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            eol = raw.index(b"\n", pos)
            header = raw[pos:eol].decode().split()
            pos = eol + 1
            if len(header) < 3 or header[1] == "missing":
                raise HistoryError(f"object {sha} is missing from the history repository")
            size = int(header[2])
            out[sha] = raw[pos : pos + size]
            pos += size + 1
        return out

    def raw_commits(self, shas: Sequence[str]) -> list[RawCommit]:
        """Commits read verbatim (headers and message), in the order given."""
        data = self.blobs(shas)
        commits = []
        for sha in shas:
            head, _, message = data[sha].partition(b"\n\n")
            fields: dict[str, list[str]] = {}
            for line in head.decode("utf-8", "surrogateescape").split("\n"):
                key, _, value = line.partition(" ")
                fields.setdefault(key, []).append(value)
            commits.append(
                RawCommit(
                    sha=sha,
                    tree=fields["tree"][0],
                    parents=tuple(fields.get("parent", [])),
                    author=fields["author"][0],
                    committer=fields["committer"][0],
                    message=message,
                )
            )
        return commits

    # -- writing ---------------------------------------------------------------------------
    def fast_import(
        self,
        commits: Sequence[CommitSpec],
        *,
        parent: str | None,
        committer: str,
    ) -> list[str]:
        """Write `commits` on top of `parent` (None: a new root) and move the branch to the last.

        Returns the new commit ids in order. Fails (and changes nothing) when the branch moved
        away from `parent` meanwhile.
        """
        return self._import(_commit_stream(commits, parent, committer), len(commits), force=False)

    def replay(self, root: RawCommit, root_message: bytes, later: Sequence[RawCommit]) -> list[str]:
        """Write a new root commit with `root`'s tree, then `later` on top of it unchanged
        (same trees, authors, dates and messages), and force the branch to the last one."""
        stream = bytearray(b"reset " + BRANCH.encode() + b"\n\n")
        specs = [(root, root_message), *((c, c.message) for c in later)]
        for n, (c, message) in enumerate(specs, start=1):
            stream += b"commit " + BRANCH.encode() + b"\n"
            stream += b"mark :%d\n" % n
            stream += f"author {c.author}\ncommitter {c.committer}\n".encode(
                "utf-8", "surrogateescape"
            )
            stream += _data(message)
            if n == 1:
                stream += b"deleteall\n"
            stream += f'M 040000 {c.tree} ""\n'.encode()
            stream += b"\n"
        # A stream starting with `reset` makes the first commit a root even though the branch
        # exists.
        return self._import([bytes(stream)], len(specs), force=True)

    def _import(self, stream: Iterable[bytes], n: int, *, force: bool) -> list[str]:
        """Feed `stream` to `git fast-import` piece by piece, then read the `n` commit ids.

        Written as it is produced rather than joined first: a history's first commit holds
        every file of the tree, and joining would keep a second (and, for the pipe, a third)
        copy of all of them in memory at once.
        """
        args = ["fast-import", "--quiet", "--done"]
        if force:
            args.append("--force")
        # After the data: the commit ids come back on stdout, read while these are written.
        tail = b"".join(b"get-mark :%d\n" % i for i in range(1, n + 1)) + b"done\n"
        timed_out = threading.Event()
        with tempfile.TemporaryFile() as err:
            # stderr to a file: a git that reports while it still reads cannot fill a pipe and
            # stop reading.
            try:
                proc = subprocess.Popen(
                    self._cmd(args),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    bufsize=0,  # written in `_PIECE` chunks below; nothing left over on an error
                    env=_clean_env(),
                    cwd=self.git_dir if self.git_dir.is_dir() else None,
                )
            except OSError as exc:
                raise HistoryError(f"git fast-import failed: {exc}") from exc

            def kill() -> None:  # the time limit of `run`, for a git that stops reading
                timed_out.set()
                proc.kill()

            timer = threading.Timer(TIMEOUT_S, kill)
            timer.start()
            try:
                assert proc.stdin is not None
                with contextlib.suppress(BrokenPipeError):  # git exited: its error says why
                    _write_chunked(proc.stdin, stream)
                out, _ = proc.communicate(tail)
            finally:
                timer.cancel()
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            if timed_out.is_set():
                raise HistoryError(f"git fast-import failed: timed out after {TIMEOUT_S:g} s")
            if proc.returncode != 0:
                err.seek(0)
                lines = err.read().decode("utf-8", "replace").strip().splitlines()
                raise HistoryError(
                    f"git fast-import failed: {lines[-1] if lines else proc.returncode}"
                )
        shas = out.decode().split()
        if len(shas) != n:
            raise HistoryError(f"git fast-import returned {len(shas)} commits, expected {n}")
        return shas

    def update_index(self, entries: Mapping[str, str | None]) -> None:
        """Point the index at these blobs (None removes the path), so `git status` compares the
        work tree with the history rather than with nothing."""
        if not entries:
            return
        lines = bytearray()
        for path, sha in entries.items():
            mode, obj = (_MODE_FILE, sha) if sha else ("0", ZERO)
            lines += f"{mode} {obj}\t".encode() + path.encode("utf-8", "surrogateescape") + b"\0"
        self.run("update-index", "-z", "--index-info", input=bytes(lines))

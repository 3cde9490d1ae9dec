"""The page's routes: server-rendered views over the socket methods, and the forms that write.

Every view asks `status` first (daemon up or not, memory on or off) and then the methods it
shows. Writes are POSTs (the guard has already checked their CSRF token) that call one socket
method and redirect back with what happened.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from memd.api import messages as msg
from memd.core.errors import InvalidParams, MemdError
from memd.core.models import MEMORY_TYPES, Hit
from memd.core.settings import Settings
from memd.core.text import counted
from memd.ui import charts, present, tree
from memd.ui.changes import ChangePages, memory_root_index
from memd.ui.channel import Channel, method_missing
from memd.ui.signin import Guard, Keys

HERE = Path(__file__).parent
NAV = (
    ("memory", "Memory"),
    ("search", "Search"),
    ("context", "Context preview"),
    ("conversations", "Conversations"),
    ("activity", "Activity"),
    ("history", "History"),
    ("edit", "Edit"),
)
TIMELINE_DAYS = (7, 30, 90, 365)
NOT_AVAILABLE = "not available in this daemon"
P = TypeVar("P", bound=msg.Params)
R = TypeVar("R")
# Where an item can be moved even before anything was remembered there.
CORE_FILES = frozenset({"_core/notes.md", "_core/preferences.md", "_core/profile.md"})


def create_app(
    settings: Settings,
    keys: Keys,
    port: int,
    *,
    channel: Channel | None = None,
    on_login: Callable[[], None] | None = None,
) -> Guard:
    """The whole page behind its guard, ready for uvicorn."""
    pages = Pages(settings, channel or Channel(settings), keys)
    changes = ChangePages(pages)
    routes = [
        Route("/", pages.home),
        Route("/memory", pages.memory),
        Route("/memory/file", pages.file),
        Route("/search", pages.search),
        Route("/context", pages.context),
        Route("/conversations", pages.conversations),
        Route("/conversations/session", pages.session),
        Route("/activity", pages.activity),
        Route("/history", changes.history),
        Route("/history/change", changes.change),
        Route("/edit", pages.edit),
        Route("/remember", pages.remember, methods=["POST"]),
        Route("/forget", pages.forget, methods=["POST"]),
        Route("/edit_item", pages.edit_item, methods=["POST"]),
        Route("/switch", pages.switch, methods=["POST"]),
        Route("/undo", changes.undo, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    # Where signing in may lead: the pages a browser opens (GET), nowhere else.
    views = frozenset(r.path for r in routes if isinstance(r, Route) and "GET" in (r.methods or ()))
    return Guard(Starlette(routes=routes), keys, port, on_login=on_login, pages=views)


class Pages:
    """One method per route."""

    def __init__(self, settings: Settings, channel: Channel, keys: Keys) -> None:
        self.settings = settings
        self.channel = channel
        self.keys = keys
        self.templates = Jinja2Templates(directory=HERE / "templates")
        env = self.templates.env
        env.filters["when"] = present.when
        env.filters["yaml_value"] = present.yaml_value
        env.filters["num"] = present.num
        env.tests["given"] = present.given
        env.globals.update(
            highlight=present.highlight,
            counted=counted,
            off_means=present.OFF_MEANS,
            nav=NAV,
            memory_types=MEMORY_TYPES,
            not_available=NOT_AVAILABLE,
        )

    # -- helpers ---------------------------------------------------------------------------
    def render(self, request: Request, name: str, active: str, **ctx: Any) -> Response:
        """A view with what every page shows: nav, switch, daemon state, messages."""
        status: msg.StatusResult | None = ctx.get("status")
        live = bool(status and status.daemon.running)
        enabled = bool(status and status.enabled)
        ctx.update(
            live=live,
            enabled=enabled,
            # Without a daemon a change is written as the CLI writes it (`Channel.request`).
            writable=bool(status) and enabled,
            history_root=memory_root_index(status, tree.roots_from_status(status)),
            csrf=self.keys.csrf,
            active=active,
            here=_here(request),
            msg=request.query_params.get("msg", ""),
            err=request.query_params.get("err", ""),
        )
        return self.templates.TemplateResponse(request, name, ctx)

    def _status(self) -> tuple[msg.StatusResult | None, str]:
        try:
            return self.channel.request(msg.STATUS, msg.NoParams()), ""
        except MemdError as exc:
            return None, present.error_text(exc)

    def _request(self, sig: msg.Signature[P, R], params: P) -> tuple[R | None, str]:
        """A method's typed answer, or None and why (a daemon without the method says so)."""
        try:
            return self.channel.request(sig, params), ""
        except MemdError as exc:
            if method_missing(exc):
                return None, f"{sig.name}: {NOT_AVAILABLE}"
            return None, present.error_text(exc)

    def _daemon_key(self, status: msg.StatusResult | None) -> str:
        """Names one daemon run, so a restarted (maybe upgraded) daemon is probed again."""
        d = status.daemon if status else msg.DaemonStatus()
        started = round(time.time() - float(d.uptime_s or 0), -1)
        return f"{d.pid}:{started:.0f}"

    def _can_edit(self, status: msg.StatusResult | None) -> bool:
        if not status:
            return False
        if not status.daemon.running:
            return True  # written here, by this memd's own code
        return self.channel.has(msg.EDIT_ITEM, present.EDIT_PROBE, daemon=self._daemon_key(status))

    def _max_bytes(self) -> int:
        return int(self.settings.index_max_file_mb * (1 << 20))

    # -- views -----------------------------------------------------------------------------
    def home(self, request: Request) -> Response:
        return RedirectResponse("/memory", status_code=303)

    def memory(self, request: Request) -> Response:
        status, problem = self._status()
        groups: list[tree.Group] = []
        if status:
            roots = tree.roots_from_status(status)
            groups = tree.scan(roots, status.problems or [], max_bytes=self._max_bytes())
        return self.render(
            request,
            "memory.html",
            "memory",
            status=status,
            problem=problem,
            groups=groups,
            can_edit=self._can_edit(status),
            today=dt.date.today(),
            title="Memory",
        )

    def file(self, request: Request) -> Response:
        status, problem = self._status()
        view = None
        if status:
            roots = tree.roots_from_status(status)
            found = tree.resolve_file(
                roots,
                _int(request.query_params.get("root"), -1),
                request.query_params.get("rel", ""),
            )
            if found is None:
                problem = "no such memory file"
            else:
                view = tree.read_file(*found, max_bytes=self._max_bytes())
                tree.link_replacements([view])
                self._link_elsewhere(view)
        return self.render(
            request,
            "file.html",
            "memory",
            status=status,
            problem=problem,
            file=view,
            can_edit=self._can_edit(status),
            today=dt.date.today(),
            title=view.rel if view else "File",
        )

    def _link_elsewhere(self, view: tree.FileView) -> None:
        """Replacements that live in other files, found through `memories`."""
        wanted = {i.meta.get("by") for i in view.items if i.superseded and not i.replaced_by}
        if not wanted - {None, ""}:
            return
        res = self._request(msg.MEMORIES, msg.MemoriesParams(all=True))[0]
        by_id = {m.id: m for m in (res.items if res else [])}
        for i in view.items:
            heir = by_id.get(i.meta.get("by", ""))
            if i.superseded and not i.replaced_by and heir:
                i.replaced_by = tree.ItemRef(heir.id, heir.text, heir.rel)

    def search(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        wanted = request.query_params.get("scope", "all")
        scope: Literal["all", "memory", "conversations"] = (
            "memory"
            if wanted == "memory"
            else "conversations"
            if wanted == "conversations"
            else "all"
        )
        status, problem = self._status()
        # Each hit (its snippet as a person reads it) with its root's number and its path in it.
        hits: list[tuple[Hit, int, str]] = []
        if q and status:
            asked = msg.SearchParams(query=q, limit=20, scope=scope)
            answer = self._request(msg.SEARCH, asked)
            res, problem = answer
            roots = tree.roots_from_status(status)
            hits = [_hit_view(h, roots) for h in (res.hits if res else [])]
        return self.render(
            request,
            "search.html",
            "search",
            status=status,
            problem=problem,
            q=q,
            scope=scope,
            hits=hits,
            title=f"Search {q}" if q else "Search",
        )

    def context(self, request: Request) -> Response:
        qp = request.query_params
        s = self.settings
        budget = _int(qp.get("budget"), s.context_budget_tokens)
        form: dict[str, str | int] = {"q": qp.get("q", ""), "agent_id": qp.get("agent_id", "").strip(),
                "project": qp.get("project", "").strip(),
                "session_id": qp.get("session_id", "").strip(), "budget": budget}  # fmt: skip
        status, problem = self._status()
        result = None
        bars: list[charts.TierBar] = []
        if "q" in qp and status:
            answer = self._context(form, budget)
            result, problem = answer
            if result and result.enabled:
                bars = charts.tier_bars(result)
        agents, projects = tree.agents_and_projects(tree.roots_from_status(status))
        return self.render(
            request,
            "context.html",
            "context",
            status=status,
            problem=problem,
            form=form,
            result=result,
            bars=bars,
            agents=agents,
            projects=projects,
            title="Context preview",
        )

    def _context(
        self, form: dict[str, str | int], budget: int
    ) -> tuple[msg.ContextResult | None, str]:
        try:
            asked = msg.ContextParams(
                query=str(form["q"]), budget_tokens=budget, agent_id=str(form["agent_id"]),
                project=str(form["project"]), session_id=str(form["session_id"]),
            )  # fmt: skip
        except InvalidParams as exc:  # a project path no file can have: said as the daemon says it
            return None, present.error_text(exc)
        return self._request(msg.CONTEXT, asked)

    def conversations(self, request: Request) -> Response:
        days = _int(request.query_params.get("days"), 30)
        if days not in TIMELINE_DAYS:
            days = 30
        source = request.query_params.get("source", "")
        status, problem = self._status()
        sessions: list[msg.RecalledSession] = []
        if status:
            recalled = self._request(msg.RECALL, msg.RecallParams(mode="sessions", limit=1000))
            sessions = recalled[0].sessions if recalled[0] else []
            problem = recalled[1]
        timeline = charts.session_timeline(sessions, days=days, today=dt.date.today())
        shown = [s for s in sessions if not source or s.source == source]
        by_day: dict[str, list[msg.RecalledSession]] = {}
        for sess in shown[:300]:
            day = charts.session_day(sess)
            by_day.setdefault(day.isoformat() if day else "undated", []).append(sess)
        return self.render(
            request,
            "conversations.html",
            "conversations",
            status=status,
            problem=problem,
            timeline=timeline,
            by_day=by_day,
            total=len(sessions),
            shown=len(shown),
            days=days,
            day_choices=TIMELINE_DAYS,
            source=source,
            title="Conversations",
        )

    def session(self, request: Request) -> Response:
        sid = request.query_params.get("id", "")
        status, problem = self._status()
        sess = None
        # Each item extraction took from the session, with the number of its root (-1: none).
        extracted: list[tuple[msg.MemoryItem, int]] = []
        if sid and status:
            asked = msg.RecallParams(mode="session", session_id=sid, limit=1000)
            recalled = self._request(msg.RECALL, asked)
            res, problem = recalled
            sess = res.sessions[0] if res and res.sessions else None
            mems = self._request(msg.MEMORIES, msg.MemoriesParams(all=True))[0]
            roots = tree.roots_from_status(status)
            extracted = [
                (m, _root_of(m.path, roots))
                for m in (mems.items if mems else [])
                if m.meta.get("src", "").partition("#")[0] == sid
            ]
        return self.render(
            request,
            "session.html",
            "conversations",
            status=status,
            problem=problem,
            sid=sid,
            sess=sess,
            extracted=extracted,
            extraction=self._extraction_note(status, sess, len(extracted)),
            title=(sess.title if sess else "") or sid or "Session",
        )

    def _extraction_note(
        self, status: msg.StatusResult | None, sess: msg.RecalledSession | None, taken: int
    ) -> str:
        """What extraction did for the session shown and when it reads the rest."""
        if not (status and sess):
            return ""
        asked = msg.ExtractionProgressParams(session_id=sess.session_id)
        progress = self._request(msg.EXTRACTION_PROGRESS, asked)[0]
        return present.extraction_note(
            progress, status.jobs.get("extract"), taken=taken, enabled=bool(status.enabled)
        )

    def activity(self, request: Request) -> Response:
        status, problem = self._status()
        runs = None
        runs_note = ""
        sync = None
        changes = ""
        if status:
            runs, runs_note = self._job_runs()
            asked = self._request(msg.SYNC_STATUS, msg.NoParams())
            sync, problem = asked[0], problem or asked[1]
            if status.memory_root:
                root = Path(status.memory_root)
                changes = tree.read_tail(root / "archive" / "CHANGES.md", root, lines=60)
        return self.render(
            request,
            "activity.html",
            "activity",
            status=status,
            problem=problem,
            runs=runs,
            runs_note=runs_note,
            sync=sync,
            changes=changes,
            title="Activity",
        )

    def _job_runs(self) -> tuple[list[tuple[msg.JobRun, str]] | None, str]:
        """The recent runs, each with the id that undoes it ("" for none), or why there are
        none."""
        try:
            res = self.channel.request(msg.JOB_RUNS, msg.JobRunsParams(limit=60))
        except MemdError as exc:
            if method_missing(exc):  # a daemon started before memd was upgraded
                return None, (
                    f"the history of runs is {NOT_AVAILABLE}: only each job's last run is shown"
                )
            return None, present.error_text(exc)
        return [(r, present.undoable_run(r)) for r in res.runs], ""

    def edit(self, request: Request) -> Response:
        qp = request.query_params
        status, problem = self._status()
        item = None
        candidates = None
        fq = qp.get("forget", "").strip()
        item_id = qp.get("id", "").strip()
        files: list[str] = []
        if status:
            if item_id:
                listed = self._request(msg.MEMORIES, msg.MemoriesParams(all=True))
                mems, problem = listed
                items = mems.items if mems else []
                item = next((m for m in items if m.id == item_id), None)
                if item is None and not problem:
                    problem = f"no memory with id {item_id}"
                files = sorted({m.rel for m in items} | CORE_FILES)
            if fq:
                asked = self._request(msg.FORGET, msg.ForgetParams(query=fq))
                found, problem = asked
                candidates = found.candidates if found else []
        agents, projects = tree.agents_and_projects(tree.roots_from_status(status))
        return self.render(
            request,
            "edit.html",
            "edit",
            status=status,
            problem=problem,
            item=item,
            fq=fq,
            candidates=candidates,
            files=files,
            agents=agents,
            projects=projects,
            can_edit=self._can_edit(status),
            title="Edit",
        )

    # -- writes ----------------------------------------------------------------------------
    async def _write(
        self,
        request: Request,
        build: Callable[[dict[str, str]], tuple[msg.Signature[P, R], P]],
        done: Callable[[R], tuple[str, str]],
    ) -> Response:
        from starlette.concurrency import run_in_threadpool

        form = {k: str(v) for k, v in (await request.form()).items()}
        back = form.get("back", "/memory")
        fail = form.get("fail", back)  # where a refusal is shown (default: where success goes)
        try:
            sig, params = build(form)
            result = await run_in_threadpool(self.channel.request, sig, params, write=True)
        except MemdError as exc:
            err = (
                f"{NOT_AVAILABLE}: this daemon cannot do that yet"
                if method_missing(exc)
                else present.error_text(exc)
            )
            return RedirectResponse(present.with_message(fail, err=err), status_code=303)
        said, anchor = done(result)
        return RedirectResponse(
            present.with_message(back, msg=said, anchor=anchor), status_code=303
        )

    async def remember(self, request: Request) -> Response:
        def done(r: msg.RememberResult) -> tuple[str, str]:
            return f"Remembered {r.id} in {r.path} (line {r.line})", f"item-{r.id}"

        return await self._write(
            request, lambda f: (msg.REMEMBER, present.remember_params(f)), done
        )

    async def forget(self, request: Request) -> Response:
        def build(
            f: dict[str, str],
        ) -> tuple[msg.Signature[msg.ForgetParams, msg.ForgetResult], msg.ForgetParams]:
            if not f.get("id", "").strip():
                raise InvalidParams("which item? (no id)")
            return msg.FORGET, msg.ForgetParams(id=f["id"].strip())

        def done(r: msg.ForgetResult) -> tuple[str, str]:
            text = "; ".join(f"{g.id} ({g.text})" for g in r.removed) or "nothing"
            return f"Forgot {text}", ""

        return await self._write(request, build, done)

    async def edit_item(self, request: Request) -> Response:
        def done(r: msg.EditItemResult) -> tuple[str, str]:
            return f"Changed {r.id} in {r.path}", f"item-{r.id}"

        return await self._write(request, lambda f: (msg.EDIT_ITEM, present.edit_params(f)), done)

    async def switch(self, request: Request) -> Response:
        def build(
            f: dict[str, str],
        ) -> tuple[msg.Signature[msg.SetEnabledParams, msg.SetEnabledResult], msg.SetEnabledParams]:
            return msg.SET_ENABLED, msg.SetEnabledParams(enabled=f.get("enabled") == "on")

        def done(r: msg.SetEnabledResult) -> tuple[str, str]:
            return ("Memory is on" if r.enabled else "Memory is off"), ""

        return await self._write(request, build, done)


def _int(raw: str | None, default: int) -> int:
    try:
        return int(raw) if raw is not None and raw.strip() else default
    except ValueError:
        return default


def _here(request: Request) -> str:
    q = request.url.query
    kept = "&".join(p for p in q.split("&") if not p.startswith(("msg=", "err=")))
    return request.url.path + (f"?{kept}" if kept else "")


def _root_of(path: str, roots: list[tree.RootInfo]) -> int:
    """The number of the root holding `path` (the innermost one), or -1."""
    best = -1, -1
    for r in roots:
        if Path(path).is_relative_to(r.path) and len(r.path.parts) > best[1]:
            best = r.index, len(r.path.parts)
    return best[0]


def _hit_view(h: Hit, roots: list[tree.RootInfo]) -> tuple[Hit, int, str]:
    shown = msgspec.structs.replace(h, snippet=present.clean_snippet(h.snippet))
    root = _root_of(h.path, roots) if h.kind != "turn" else -1
    if root < 0:
        return shown, -1, h.path
    return shown, root, Path(h.path).relative_to(roots[root].path).as_posix()

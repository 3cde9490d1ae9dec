"""Who may use the page: the real `memd ui` process, spoken to in raw HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

from tests.ui.uihelp import UiProcess, csrf_of
from tests.utils import DaemonProcess

FORM = {"content-type": "application/x-www-form-urlencoded"}


def test_without_the_token_nothing_is_served(module_ui: UiProcess) -> None:
    for path in ("/", "/memory", "/search?q=x", "/static/style.css", "/?token=wrong"):
        status, headers, body = module_ui.request("GET", path)
        assert status == 403, path
        assert "set-cookie" not in headers
        assert "needs its link" in body
    # A cookie of the right name with another value is no key either.
    status, _, _ = module_ui.request(
        "GET", "/memory", headers={"Cookie": f"memd_ui_{module_ui.port}=guess"}
    )
    assert status == 403


def test_the_token_sets_a_strict_httponly_cookie_for_this_port(module_ui: UiProcess) -> None:
    status, headers, body = module_ui.request("GET", f"/?token={module_ui.token}")
    assert status == 200
    cookie = headers["set-cookie"]
    name, _, rest = cookie.partition("=")
    assert name == f"memd_ui_{module_ui.port}"
    attrs = {a.strip().lower() for a in rest.split(";")[1:]}
    assert attrs == {"httponly", "samesite=strict", "path=/"}
    value = rest.split(";")[0]
    assert value != module_ui.token  # the token is not the session cookie
    assert 'http-equiv="refresh"' in body and "url=/" in body and module_ui.token not in body
    status, _, body = module_ui.request("GET", "/memory", headers={"Cookie": f"{name}={value}"})
    assert status == 200 and "<h1>Memory</h1>" in body


def test_foreign_host_headers_are_refused(module_ui: UiProcess) -> None:
    cookie = module_ui.sign_in()
    for host in (
        "evil.example",
        f"evil.example:{module_ui.port}",
        "127.0.0.1",
        f"127.0.0.1:{module_ui.port + 1}",
        f"localhost.evil.example:{module_ui.port}",
    ):
        status, _, body = module_ui.request("GET", "/memory", headers={"Cookie": cookie}, host=host)
        assert status == 421, host
        assert "127.0.0.1 and localhost" in body
    status, _, _ = module_ui.request(
        "GET", f"/?token={module_ui.token}", host=f"rebound.example:{module_ui.port}"
    )
    assert status == 421  # not even the token works through a rebound name
    status, _, _ = module_ui.request(
        "GET", "/memory", headers={"Cookie": cookie}, host=f"localhost:{module_ui.port}"
    )
    assert status == 200


def test_posts_need_the_csrf_token_and_this_origin(daemon: DaemonProcess, ui: UiProcess) -> None:
    cookie = ui.sign_in()
    _, _, page = ui.request("GET", "/edit", headers={"Cookie": cookie})
    csrf = csrf_of(page)
    notes = daemon.memory / "_core" / "notes.md"
    before = notes.read_text() if notes.exists() else ""

    def post(fields: dict[str, str], **headers: str) -> tuple[int, str]:
        status, _, body = ui.request(
            "POST",
            "/remember",
            headers={"Cookie": cookie, **FORM, **headers},
            body=urlencode(fields),
        )
        return status, body

    assert post({"text": "no token here"})[0] == 403
    assert post({"text": "wrong token", "csrf": csrf[:-2] + "xx"})[0] == 403
    status, body = post({"text": "from elsewhere", "csrf": csrf}, Origin="http://evil.example")
    assert status == 403 and "Cross-origin" in body
    assert post({"text": "cross site", "csrf": csrf}, **{"Sec-Fetch-Site": "cross-site"})[0] == 403
    status, _, _ = ui.request(
        "POST",
        "/remember",
        headers={"Cookie": cookie, "content-type": "application/json"},
        body=json.dumps({"text": "json", "csrf": csrf}),
    )
    assert status == 403
    status, _, _ = ui.request(
        "POST", "/remember", body=urlencode({"text": "no cookie", "csrf": csrf}), headers=FORM
    )
    assert status == 403
    assert (notes.read_text() if notes.exists() else "") == before
    # The same form with the token, from this origin, is accepted.
    status, body = post(
        {"text": "posted with its token", "csrf": csrf, "back": "/memory"},
        Origin=f"http://127.0.0.1:{ui.port}",
    )
    assert status == 303
    assert "posted with its token" in notes.read_text()


def test_other_methods_big_bodies_and_cors(module_ui: UiProcess) -> None:
    cookie = module_ui.sign_in()
    for method in ("PUT", "DELETE", "OPTIONS", "PATCH"):
        status, headers, _ = module_ui.request(
            method,
            "/remember",
            headers={
                "Cookie": cookie,
                "Origin": "http://evil.example",
                "Access-Control-Request-Method": "POST",
            },
        )
        assert status == 405, method
        assert not any(k.startswith("access-control-") for k in headers)
    status, _, _ = module_ui.request(
        "POST", "/remember", headers={"Cookie": cookie, **FORM}, body="text=" + "x" * 300_000
    )
    assert status == 413
    status, headers, _ = module_ui.request(
        "GET", "/memory", headers={"Cookie": cookie, "Origin": "http://evil.example"}
    )
    assert status == 200
    assert not any(k.startswith("access-control-") for k in headers)
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["cache-control"] == "no-store"


def test_it_listens_on_loopback_only(module_ui: UiProcess) -> None:
    import psutil

    assert module_ui.proc is not None
    listening = [
        c.laddr
        for c in psutil.Process(module_ui.proc.pid).net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    ]
    assert listening and all(a.ip == "127.0.0.1" for a in listening)
    assert [a.port for a in listening] == [module_ui.port]


def test_what_memory_holds_is_shown_as_text_never_run(daemon: DaemonProcess, ui: UiProcess) -> None:
    evil = '<img src=x onerror="alert(1)"> & <script>alert(2)</script>'
    (daemon.memory / "topics" / "html.md").write_text(
        f"# <b>Title</b>\n\n## <i>Head</i>\n- {evil}\n"
    )
    r = daemon.call("remember", {"text": evil})
    cookie = ui.sign_in()
    for path in ("/memory", "/memory/file?root=0&rel=topics/html.md", f"/edit?id={r['id']}"):
        status, _, body = ui.request("GET", path, headers={"Cookie": cookie})
        assert status == 200, path
        assert "<script>alert" not in body and "<img src=x" not in body, path
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in body, path
    status, _, body = ui.request("GET", "/search?q=onerror", headers={"Cookie": cookie})
    assert "<img src=x" not in body and "&lt;img src=x <mark>onerror</mark>" in body


def test_undo_needs_the_csrf_token_and_goes_back_only_to_this_page(
    daemon: DaemonProcess, ui: UiProcess
) -> None:
    r = daemon.call("remember", {"text": "Undo me only with the token"})
    notes = Path(r["path"])
    change = daemon.call("history", {"limit": 1})["changes"][0]["id"]
    cookie = ui.sign_in()
    _, _, page = ui.request("GET", "/history", headers={"Cookie": cookie})
    csrf = csrf_of(page)

    def post(fields: dict[str, str]) -> tuple[int, dict[str, str]]:
        status, headers, _ = ui.request(
            "POST", "/undo", headers={"Cookie": cookie, **FORM}, body=urlencode(fields)
        )
        return status, headers

    assert post({"change": change})[0] == 403
    assert post({"change": change, "csrf": "guessed"})[0] == 403
    assert "Undo me only with the token" in notes.read_text()
    status, headers = post(
        {"change": change, "csrf": csrf, "back": "//evil.example/x", "fail": "https://evil.example"}
    )
    assert status == 303 and headers["location"].startswith("/memory?msg=Undid")
    assert not notes.exists()  # the remember made the file: undoing it removes it
    status, headers = post({"change": "0000000000ff", "csrf": csrf, "fail": "//evil.example"})
    assert status == 303 and headers["location"].startswith("/memory?err=")

"""The explorer as two replicas behind nginx (deploy/replicas.sh), in Chromium.

Started with the command a person runs, on free loopback ports. Every page draws through the
proxy; visitors spread over both replicas, each visitor's requests (page, websocket, upload)
kept on one replica by the affinity cookie; an upload on the Check page is judged by the
replica that serves the visitor's session; and when the replica under an open page is killed,
the page connects again through nginx to the live one and draws the same view from its URL.
Which replica served a request is read from nginx's access log. Skipped where nginx is not
installed (``apt-get install -y nginx``; ``./dev.sh test`` installs it).
"""

from __future__ import annotations

import io
import os
import re
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from explorer.frame.navigation import PAGES as NAVIGATION
from explorer.frame.navigation import url_path
from explorer.frame.params import ViewParams
from explorer.stories.check.inputs import page_inputs
from relpos_core.check import KINDS
from scripts.local_app import APP_IDLE
from scripts.replica_proxy import (
    AFFINITY_COOKIE,
    Deployment,
    deployed,
    lose_replica,
    nginx_binary,
    replica_ports_of,
)
from tests.check.examples import shaw

PATHS = tuple(url_path(page) for page in NAVIGATION)  # "/": the default page
TIMEOUT_MS = 120_000  # generous: other work may share the two cores
ERROR_BOXES = '[data-testid="stException"], [data-testid="stAlertContentError"]'


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """nginx in front of two replicas, for this module's tests (the last one kills one)."""
    if nginx_binary() is None:
        pytest.skip("nginx not found: install Debian's package with `apt-get install -y nginx`")
    run_dir = tmp_path_factory.mktemp("replicas") / "run"
    try:
        with deployed(2, run_dir) as deployment:
            yield deployment
    except RuntimeError as error:
        pytest.fail(str(error))


def visitor(browser: Browser, deployment: Deployment, key: str | None) -> BrowserContext:
    """A visitor of its own (a fresh context: its own cookies, its own Streamlit session), with
    the affinity cookie ``key`` set beforehand when given."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    if key is not None:
        url = deployment.base_url
        context.add_cookies([{"name": AFFINITY_COOKIE, "value": key, "url": url}])
    return context


def open_drawn(page: Page, url: str) -> None:
    """Open ``url`` and wait until the run is over with a chart drawn and no error box."""
    page.goto(url)
    page.wait_for_selector(APP_IDLE, timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stPlotlyChart"] .main-svg').first).to_be_visible(
        timeout=TIMEOUT_MS
    )
    expect(page.locator(ERROR_BOXES)).to_have_count(0)


def test_the_configuration_caps_uploads_at_the_apps_limit(proxy: Deployment) -> None:
    conf = "\n".join(line.split("#")[0] for line in proxy.nginx_conf().splitlines())
    # room for the multipart framing around a file of exactly the app's largest upload, no more
    largest = tomllib.loads(
        (Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text()
    )["server"]["maxUploadSize"]
    assert re.search(rf"^\s*client_max_body_size {largest + 1}m;", conf, re.M), conf
    assert re.search(r"^\s*hash \$relpos_affinity consistent;", conf, re.M)
    assert str(proxy.run_dir) in conf and "/var/lib/nginx" not in conf


def test_every_page_draws_through_the_proxy_on_both_replicas(
    proxy: Deployment, browser: Browser
) -> None:
    keys = proxy.keys_by_replica()  # each key's requests all on one replica
    visitors = [(port, key) for port in proxy.ports for key in keys[port]]
    contexts = [visitor(browser, proxy, key) for _, key in visitors]
    pages = [context.new_page() for context in contexts]
    try:
        for page in pages:  # the root first: each replica's first run goes through app.py
            open_drawn(page, proxy.base_url + "/")
        for number, path in enumerate(PATHS[1:]):  # the other pages, shared out in turn
            open_drawn(pages[number % len(pages)], proxy.base_url + path)
    finally:
        for context in contexts:
            context.close()  # closes the websockets: nginx logs each when it ends

    log = proxy.access_log()
    streams = replica_ports_of(log, "/_stcore/stream")
    for port, key in visitors:
        assert streams.get(key) == {port}, f"visitor {key}'s websocket: {streams.get(key)}"
    served = {port for key in keys.values() for k in key for port in streams.get(k, ())}
    assert served == set(proxy.ports)  # both replicas served visitors
    ours = {key for _, key in visitors}
    # 404s are Streamlit's own: on a page's path its frontend first asks for
    # <page>/_stcore/health and /host-config, as it does from a server without a proxy
    failed = [
        line for line in log if line.key in ours and line.status >= 400 and line.status != 404
    ]
    assert not failed, failed


def test_a_first_visit_gets_the_cookie_of_the_replica_that_served_it(
    proxy: Deployment, browser: Browser
) -> None:
    context = visitor(browser, proxy, None)
    try:
        page = context.new_page()
        open_drawn(page, proxy.base_url + "/")
        cookies = [c for c in context.cookies() if c["name"] == AFFINITY_COOKIE]
        assert len(cookies) == 1, context.cookies()
        key = cookies[0]["value"]
    finally:
        context.close()
    # nginx logs a websocket when it closes: wait for the closed page's stream to be logged
    deadline = time.monotonic() + 20
    log = proxy.access_log()
    while key not in replica_ports_of(log, "/_stcore/stream") and time.monotonic() < deadline:
        time.sleep(0.25)
        log = proxy.access_log()
    # nginx hashed the first request (no cookie yet) on the very value it set as the cookie
    first = [line for line in log if line.key == key and line.uri == "/"]
    assert first, f"no request logged with key {key}"
    assert replica_ports_of(log, "/_stcore/stream").get(key) == {first[0].port}


def npy_output(tmp_path: Path) -> Path:
    """The right answer to the Check page's Shaw inputs (n = 8, random weights), as .npy."""
    inputs = page_inputs("shaw", ViewParams(n=8, weights="random"))
    out = shaw.right_gather(*KINDS["shaw"].arguments(inputs.case_dict, inputs.tensors()))
    buffer = io.BytesIO()
    np.save(buffer, out.numpy())
    path = tmp_path / "output.npy"
    path.write_bytes(buffer.getvalue())
    return path


def test_an_upload_is_judged_by_the_replica_of_the_session(
    proxy: Deployment, browser: Browser, tmp_path: Path
) -> None:
    keys = proxy.keys_by_replica()
    port = proxy.ports[1]
    key = keys[port][0]
    context = visitor(browser, proxy, key)
    try:
        page = context.new_page()
        open_drawn(page, f"{proxy.base_url}/check?weights=random&n=8")
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            str(npy_output(tmp_path))
        )
        expect(page.get_by_text("Verdict: equal")).to_be_visible(timeout=TIMEOUT_MS)
        page.wait_for_selector(APP_IDLE, timeout=TIMEOUT_MS)
        expect(page.locator(ERROR_BOXES)).to_have_count(0)
    finally:
        context.close()
    log = proxy.access_log()
    uploads = [line for line in log if line.key == key and "/upload_file/" in line.uri]
    assert uploads, "no upload went through the proxy"
    assert all(line.port == port and line.status < 400 for line in uploads), uploads
    assert replica_ports_of(log, "/_stcore/stream").get(key) == {port}


SECRET_VARIABLE = "STREAMLIT_SERVER_COOKIE_SECRET"


def environment_of(pid: int) -> dict[str, str]:
    """A process's environment as it was when it started (Linux /proc)."""
    entries = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(e.decode(errors="replace").split("=", 1) for e in entries if b"=" in e)


def test_every_replica_holds_the_one_cookie_secret_kept_off_disk_and_command_line(
    proxy: Deployment,
) -> None:
    """Replicas with different secrets would reject each other's signed cookies (Streamlit's
    login cookie): each is handed the same 32 random bytes, in its environment only."""
    secrets = {
        port: environment_of(proxy.replica_pid(port)).get(SECRET_VARIABLE) for port in proxy.ports
    }
    assert all(secrets.values()), f"a replica started without {SECRET_VARIABLE}: {secrets}"
    assert len(set(secrets.values())) == 1, f"the replicas' secrets differ: {secrets}"
    secret = next(iter(secrets.values()))
    assert re.fullmatch(r"[0-9a-f]{64}", secret), "not 32 random bytes in hex"
    assert secret not in os.environ.get(SECRET_VARIABLE, ""), "the test's own, not a new one"
    for port in proxy.ports:
        cmdline = Path(f"/proc/{proxy.replica_pid(port)}/cmdline").read_bytes()
        assert secret.encode() not in cmdline, "the secret is on a command line"
    written = [
        p for p in proxy.run_dir.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()
    ]
    assert not written, f"the secret is written to {written}"


def upload_status(proxy: Deployment, key: str, xsrf_cookie: str, xsrf_header: str) -> int:
    """PUT one byte to Streamlit's upload route through the proxy, on ``key``'s replica, with
    the given XSRF cookie and header, for a session no replica has: 403 is the XSRF check's
    refusal, 400 the session check after it."""
    request = urllib.request.Request(
        f"{proxy.base_url}/_stcore/upload_file/no-such-session/file-0",
        data=b"x",
        method="PUT",
        headers={
            "Cookie": f"{AFFINITY_COOKIE}={key}; _streamlit_xsrf={xsrf_cookie}",
            "X-Xsrftoken": xsrf_header,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def xsrf_token_from(proxy: Deployment, key: str) -> str:
    """The ``_streamlit_xsrf`` cookie that ``key``'s replica sets on a first request."""
    headers = {"Cookie": f"{AFFINITY_COOKIE}={key}"}
    request = urllib.request.Request(proxy.base_url + "/_stcore/health", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        jar: SimpleCookie = SimpleCookie()
        for header in response.headers.get_all("Set-Cookie") or []:
            jar.load(header)
    return jar["_streamlit_xsrf"].value


def test_an_xsrf_token_from_one_replica_passes_the_others_upload_check(
    proxy: Deployment,
) -> None:
    """A visitor moved to the other replica keeps the XSRF cookie the first one set. In this
    Streamlit the token is checked against its own cookie, not signed with the secret, so the
    other replica accepts it; a token that does not match its cookie is refused there."""
    keys = proxy.keys_by_replica()
    first, other = proxy.ports
    token, another = (xsrf_token_from(proxy, keys[first][0]) for _ in range(2))
    assert token != another  # each answer without the cookie sets a new random token
    assert upload_status(proxy, keys[other][0], token, token) == 400  # past the XSRF check
    assert upload_status(proxy, keys[other][0], token, another) == 403


def test_losing_a_replica_redraws_the_same_view_on_the_other(
    proxy: Deployment, browser: Browser
) -> None:
    """Last in this module: it kills a replica."""
    keys = proxy.keys_by_replica()
    lost, live = proxy.ports
    key = keys[lost][0]
    # the live replica serves someone already (and has run the app once)
    other = visitor(browser, proxy, keys[live][0])
    open_drawn(other.new_page(), proxy.base_url + "/")
    other.close()
    context = visitor(browser, proxy, key)
    try:
        page = context.new_page()
        open_drawn(page, f"{proxy.base_url}/lookup?n=24&k=5&weights=random")
        n = page.get_by_role("slider", name="n (sequence length)")
        k = page.get_by_role("slider", name="k (clip distance)")
        view = (n.input_value(), k.input_value())
        assert view == ("24", "5")

        # Connected again, the page still shows the view; the visitor's next key press runs
        # the page on the live replica from the same controls (n = 24 kept, k 5 -> 6).
        def press() -> None:
            k.focus()
            page.keyboard.press("ArrowRight")

        wait = lose_replica(page, proxy, lost, press, TIMEOUT_MS)
        print(
            f"\nreplica killed at 0 s: the page lost its connection at {wait['lost_s']:.2f} s, "
            f"connected again at {wait['reconnected_s']:.2f} s; a key press then redrew "
            f"{wait['charts']} charts in {wait['redraw_after_act_s']:.2f} s"
        )
        assert (n.input_value(), k.input_value()) == ("24", "6")
        expect(page).to_have_url(re.compile(r"/lookup\?(?=.*n=24)(?=.*k=6)(?=.*weights=random)"))
        expect(page.locator(ERROR_BOXES)).to_have_count(0)
        assert wait["charts"] > 0
    finally:
        context.close()
    assert not proxy.replica_alive(lost) and proxy.replica_alive(live)
    # the page's websocket: first on the lost replica, then on the live one (nginx logs a
    # websocket once it has closed)
    for _ in range(50):
        streams = replica_ports_of(proxy.access_log(), "/_stcore/stream").get(key)
        if streams == {lost, live}:
            break
        time.sleep(0.1)
    assert streams == {lost, live}

"""The first visitor of a fresh server waits as the second does: every page's default view and its
view at n = 1024 are run once, in the background, as soon as the server runs its first script.

A shared link is usually opened on a server that has just started (a deploy, a replica brought
up, a host that slept). Its first visitor used to pay for what the caches then keep for everyone:
torch's import, the trained models' loading, every model's pass over Predict's passage (Predict at
n = 1024: 11.8 s to idle for the first visitor, 2-4 s for the next). Here the server runs each of
those views itself, once, as a visitor would: a session of its own with the view's page and query,
the same script, caches and memory admission as any visitor's run; only its messages go nowhere
(Streamlit's own script health check runs the app the same way).

When: the first script run of the process starts it. A deploy runs one before any visitor
arrives: Streamlit Community Cloud runs the app's script health check when it starts an app, and
``deploy/replicas.sh`` asks each replica for it (``/_stcore/script-health-check``) before nginx
sends it visitors. On with ``RELPOS_WARM_AT_START=1`` (set by ``deploy/streamlit_app.py`` and
``deploy/replicas.sh``); off otherwise, so tests and local runs measure what they measure.

A visitor comes first: a warm run starts only when no visitor's run has ended for ``QUIET_S`` and
none is under way, and the runs hold the one view slot every run holds, so a visitor who arrives
mid-warm-up waits for at most the one view being warmed. What the runs compute goes into the one
byte-bounded cache (``explorer.frame.memory``): views are warmed in :data:`ORDER`, the n = 1024
views last, so that what is evicted, if anything, is what is cheapest to compute again.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from streamlit.logger import get_logger

from explorer.frame.memory import COMPUTED, VIEW_SLOT
from explorer.frame.navigation import PAGES, url_path

ENABLE_VARIABLE = "RELPOS_WARM_AT_START"
QUERIES = ("", "n=1024")  # each page's default view, then its view at n = 1024
QUIET_S = 2.0  # a visitor's run ended this recently: wait
VIEW_TIMEOUT_S = 120.0  # a warm run not finished by then is left (its session shut down)
POLL_S = 0.1
LOG = get_logger("explorer.warm")  # on the server's log, as Streamlit's own lines


@dataclass(frozen=True)
class View:
    page: str  # the page's URL path without its slash ("" for the landing page)
    query: str  # the query string without its "?"

    @property
    def label(self) -> str:
        return f"/{self.page}" + (f"?{self.query}" if self.query else "")


def views() -> Iterator[View]:
    """Every page at its default view, then every page at n = 1024, in the navigation's order."""
    for query in QUERIES:
        for page in PAGES:
            yield View(url_path(page).lstrip("/"), query)


_state_lock = threading.Lock()
_started = False
_warm_sessions: set[str] = set()  # the ids of the sessions this module opened
_last_visitor_run = 0.0  # time.monotonic() at the end of a visitor's last run
FINISHED = threading.Event()  # set when every view has been warmed (or warming gave up)


def enabled() -> bool:
    return os.environ.get(ENABLE_VARIABLE, "") == "1"


def start_warming() -> None:
    """Start the warm-up once per process, from a script run of a real server (not AppTest,
    which has no runtime), when :data:`ENABLE_VARIABLE` is 1."""
    global _started
    if not enabled():
        return
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return
    with _state_lock:
        if _started:
            return
        _started = True
    runtime = Runtime.instance()
    thread = threading.Thread(target=_warm_all, args=(runtime,), name="warm-views", daemon=True)
    thread.start()


def computed_so_far() -> Counter[str]:
    """What the process's caches have computed, by function: the frame reads it as a run starts."""
    return COMPUTED.copy()


def computed_since(before: Counter[str]) -> str:
    """'3 values (views.a, views.b x2)': what was computed since ``before``."""
    new = COMPUTED - before
    names = ", ".join(f"{name} x{count}" if count > 1 else name for name, count in new.items())
    return f"{sum(new.values())} values" + (f" ({names})" if names else "")


def note_run_ended(computed_before: Counter[str]) -> None:
    """The frame calls this at the end of every run. A visitor's run delays the next warm run and,
    with warming on, says on the server's log what it computed: nothing, for a warmed view."""
    global _last_visitor_run
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or ctx.session_id in _warm_sessions:
        return
    _last_visitor_run = time.monotonic()
    if enabled():
        page = ctx.pages_manager.get_pages().get(ctx.page_script_hash, {})
        query = f"?{ctx.query_string}" if ctx.query_string else ""
        LOG.info(
            "a visitor's run of /%s%s computed %s", page.get("url_pathname", ""), query,
            computed_since(computed_before),
        )  # fmt: skip


def _wait_for_quiet() -> None:
    while True:
        if time.monotonic() - _last_visitor_run >= QUIET_S and VIEW_SLOT.acquire(blocking=False):
            VIEW_SLOT.release()
            return
        time.sleep(POLL_S * 5)


def _warm_all(runtime) -> None:  # noqa: ANN001 (streamlit's Runtime, imported lazily)
    started = time.monotonic()
    computed_before = computed_so_far()
    count = 0
    try:
        for view in views():
            _wait_for_quiet()
            t0, c0 = time.monotonic(), computed_so_far()
            ok = _run_view(runtime, view)
            count += ok
            LOG.info(
                "warmed %s: %s, computed %s in %.1f s", view.label,
                "ok" if ok else "not finished", computed_since(c0),
                time.monotonic() - t0,
            )  # fmt: skip
    except Exception:  # a warm-up that fails leaves the server as it would be without one
        LOG.exception("warming stopped")
    finally:
        LOG.info(
            "warm-up finished: %d views, computed %d values in %.1f s", count,
            sum((COMPUTED - computed_before).values()), time.monotonic() - started,
        )  # fmt: skip
        FINISHED.set()


def _run_view(runtime, view: View) -> bool:  # noqa: ANN001
    """Run the app once for ``view`` in a session of its own and wait for the run to end."""
    from streamlit.runtime.state import SCRIPT_RUN_WITHOUT_ERRORS_KEY

    loop = runtime._get_async_objs().eventloop  # AppSession must be made on the server's loop
    session = asyncio.run_coroutine_threadsafe(_open_session(runtime, view), loop).result(30)
    try:
        # The run may rerun itself (a URL corrected to the view's own form): the view is done
        # when the session's script runner has ended, which it does after its last run.
        deadline = time.monotonic() + VIEW_TIMEOUT_S
        while time.monotonic() < deadline:
            if session._scriptrunner is None:
                return bool(session.session_state[SCRIPT_RUN_WITHOUT_ERRORS_KEY])
            time.sleep(POLL_S)
        return False
    finally:
        loop.call_soon_threadsafe(session.shutdown)
        _warm_sessions.discard(session.id)


async def _open_session(runtime, view: View):  # noqa: ANN001, ANN202
    """A session as Streamlit's script health check makes one, asked to run ``view``."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.script_data import ScriptData

    session = AppSession(
        script_data=ScriptData(runtime._main_script_path, False),
        uploaded_file_manager=runtime._uploaded_file_mgr,
        script_cache=runtime._script_cache,
        message_enqueued_callback=None,  # its messages are dropped with the session
        user_info={},
    )
    _warm_sessions.add(session.id)
    state = ClientState(query_string=view.query, page_name=view.page)
    session.request_rerun(state)
    return session

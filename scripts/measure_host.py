"""Measure the app on a host like the one a shared link runs on: little memory, a busy CPU.

    python scripts/measure_host.py memory [--limit-mb 690 | --no-limit] [--sessions 1 4 8]
                                          [--queries "" "?n=1024"] [--pages overview lookup]
                                          [--view-timeout 120] [--drop-caches] [--json PATH]
                                          [--replicas 1 2] [--press-page lookup]
    python scripts/measure_host.py keypress [--threads 1 2] [--busy 0 2] [--repeats 5]
                                            [--pages overview lookup] [--json PATH]
    python scripts/measure_host.py failover [--repeats 3] [--url /lookup?n=24] [--json PATH]
    python scripts/measure_host.py coldstart [--repeats 3] [--limit-mb 690] [--drop-caches]
                                             [--server-cpus 0.25] [--entry E] [--json PATH]

Streamlit Community Cloud gives an app 690 MB to 2.7 GB of memory and 0.078 to 2 shared CPU
cores. Each subcommand prints the machine (CPU, cores, torch version, load average at the start
and the end: other work on the machine moves every number here) and a markdown table.

memory: for each ``--sessions`` count, a fresh ``streamlit run app.py`` inside a cgroup-v1
memory cgroup limited to ``--limit-mb`` MiB (``/sys/fs/cgroup/memory/<name>``, needs root; the
server joins it before it starts, the browsers stay outside), and that many browser sessions
at once, each its own Chromium and context (its own Streamlit session), each opening every page
(``explorer.frame.navigation.PAGES``) at every query in turn: page 1 at each query, then page 2, ...
A view is drawn when the app is idle with every chart drawn (scripts/measure_browser.py's
watcher) within ``--view-timeout`` s. Counted per view: error boxes (exception boxes and error
alerts), and whether the server still runs and answers /_stcore/health; a session stops once
the server is gone. Recorded: the cgroup's peak (memory.max_usage_in_bytes, page cache
included, as the host counts it), its usage at the end, its OOM kills (memory.oom_control),
and the server's resident set (VmRSS of its process tree) sampled every 0.5 s. File pages that
another cgroup already holds in the page cache are not charged to a new one: ``--drop-caches``
empties the machine's page cache before each server starts, as on a host that starts the app
from a cold disk. ``--no-limit`` runs without a cgroup (resident set only). Exits 1 if a view
showed an error box, did not draw, or the server died.

memory --replicas R...: the same tours through nginx (deploy/replicas.sh R, on free loopback
ports), each replica in its own cgroup of ``--limit-mb``; the sessions are spread evenly over
the replicas by their affinity cookies, and one more visitor presses k on ``--press-page`` about
once a second meanwhile. Reported per replica: visitors, cgroup peak, resident-set peak, OOM
kills; and the key press's time to a redrawn chart. For each session count, R runs in turn.

failover: ``--repeats`` times, two replicas behind nginx, a visitor on one at ``--url``; that
replica is killed; seconds until the page lost its connection, connected again and drew the
same view (scripts/replica_proxy.lose_replica, which the browser test also uses).

keypress: for each ``--threads`` t and ``--busy`` b, a fresh server with RELPOS_TORCH_THREADS=t
in its environment and b processes spinning on a CPU each beside it and the browser (a shared
host's other tenants). On every page at its default view, ``--repeats`` presses of an arrow key
on the k slider (alternating right and left, as scripts/measure_browser.py does: after the
first press of each direction the app's caches may answer), each timed from the key event to
the first chart drawn with new data and to idle. Tables: per page, median (min-max) ms for each
(t, b); a last row gives, per thread count, the median over pages of busy / quiet.

coldstart: ``--repeats`` times, a fresh server process (and with ``--limit-mb``, in a fresh
cgroup; with ``--server-cpus``, in a cgroup-v1 cpu cgroup whose quota gives it that share of the
cores, as Cloud does, the browser free to use the rest), timed from its spawn to /_stcore/health
answering ok, and to the landing page idle with its charts drawn in a fresh browser context
opened right then (Chromium starts beforehand).

A quick check while changing the app: ``memory --sessions 1 --pages overview lookup --queries
""``, ``keypress --threads 1 --busy 0 2 --pages lookup --repeats 2``, ``coldstart --repeats 1``.
Each server's output goes to /tmp/measure_host_<subcommand>_<pid>_<n>.log (named in the JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import itertools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright
from playwright.sync_api import Error as PlaywrightError

# load_test imports local_app by its bare name: put this folder on the path, and import every
# sibling the same way so each is loaded once
SCRIPTS = Path(__file__).resolve().parent
for folder in (SCRIPTS, SCRIPTS.parent):  # the scripts, and the repository for relpos_lab
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from load_test import RssSampler  # noqa: E402
from local_app import CHROMIUM, CHROMIUM_ARGS, health, served_app  # noqa: E402
from measure_browser import (  # noqa: E402
    SLIDERS,
    Tab,
    discover_pages,
    measure_keypresses,
    measure_load,
    open_tab,
    spread,
    wait_until_idle,
)
from measure_browser import machine as browser_machine  # noqa: E402
from replica_proxy import (  # noqa: E402
    AFFINITY_COOKIE,
    Deployment,
    deployed,
    lose_replica,
    replica_ports_of,
)

from relpos_lab.busy import busy_cpu  # noqa: E402

MIB = 2**20
CGROUP_MEMORY_ROOT = Path("/sys/fs/cgroup/memory")
CGROUP_CPU_ROOT = Path("/sys/fs/cgroup/cpu")
CPU_PERIOD_US = 100_000  # the scheduler's accounting period for a CPU quota
# the exception box of an uncaught error, and st.error (the app's own error message)
ERROR_BOXES = '[data-testid="stException"], [data-testid="stAlertContentError"]'
# with "needs about": a view refused in words (explorer.frame.memory.admit's message, shown as
# an error box by explorer.frame.failures, or as a warning where a page steps around it)
REFUSAL = '[data-testid="stAlertContentError"], [data-testid="stAlertContentWarning"]'
QUIET_MS = 300.0  # no websocket frame, request or chart draw for this long: idle
SERVER_CHECK_S = 5.0  # how often a view that is still loading asks whether the server lives
SAMPLE_S = 0.5
HEALTH_TRIES = 3  # of /_stcore/health, 2 s each, before a running server counts as gone
SERVER_NUMBERS = itertools.count(1)


# ---------------------------------------------------------------- the machine and the table


def machine() -> dict:
    """CPU, cores, load average at the start (measure_browser's) and torch's version."""
    return {**browser_machine(), "torch": importlib.metadata.version("torch")}


def finish_machine(report: dict) -> None:
    report["machine"]["load_avg_end"] = os.getloadavg()


def machine_line(m: dict) -> str:
    def load(values: Sequence[float]) -> str:
        return ", ".join(f"{v:.2f}" for v in values)

    return (
        f"Machine: {m['cpu']}, {m['cores']} cores, torch {m['torch']}; load average "
        f"(1, 5, 15 min) {load(m['load_avg_start'])} at the start, "
        f"{load(m['load_avg_end'])} at the end."
    )


def table(header: Sequence[str], rows: Sequence[Sequence[object]], left: int = 1) -> str:
    """A markdown table; the first ``left`` columns are text, the rest right-aligned."""
    align = ["---"] * left + ["---:"] * (len(header) - left)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def stat_cell(stat: dict | None, digits: int = 0) -> str:
    """``median (min-max)`` of a :func:`measure_browser.spread`, or a dash."""
    if stat is None:
        return "–"
    text = f"{stat['median']:.{digits}f}"
    if stat["n"] > 1:
        text += f" ({stat['min']:.{digits}f}–{stat['max']:.{digits}f})"
    return text


def mib(value: float | None) -> str:
    return "–" if value is None else f"{value / MIB:.0f}"


def sessions_label(count: int) -> str:
    return f"{count} session" + ("" if count == 1 else "s")


def short(error: BaseException) -> str:
    return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:160]}"


def select_pages(names: Sequence[str] | None) -> dict[str, str]:
    """Page stem -> URL path, in the navigation's order, restricted to ``names``."""
    pages = discover_pages()
    if names:
        unknown = set(names) - set(pages)
        if unknown:
            sys.exit(f"unknown page(s) {sorted(unknown)}; app.py has {sorted(pages)}")
        pages = {stem: path for stem, path in pages.items() if stem in names}
    return pages


def normal_query(query: str) -> str:
    """``n=1024`` and ``?n=1024`` alike become ``?n=1024``; the empty string stays empty."""
    return query if not query or query.startswith("?") else f"?{query}"


def launch(pw) -> Browser:
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def server_log(kind: str) -> Path:
    """A new log file for each server started (kept, to read what a failed run printed)."""
    return Path(f"/tmp/measure_host_{kind}_{os.getpid()}_{next(SERVER_NUMBERS)}.log")


# ---------------------------------------------------------------- a memory limit like the host's


def oom_kills(oom_control: str) -> int:
    """The ``oom_kill`` count of a cgroup-v1 memory.oom_control (0 on kernels without it)."""
    for line in oom_control.splitlines():
        name, _, value = line.partition(" ")
        if name == "oom_kill":
            return int(value)
    return 0


def parse_memory_stat(text: str) -> dict[str, int]:
    """memory.stat's ``name value`` lines as a dict."""
    return {name: int(value) for name, value in (line.split() for line in text.splitlines())}


def join_cgroup_prefix(procs_file: Path) -> list[str]:
    """A command prefix that writes its shell's PID into ``procs_file``, then execs the rest of
    the command line: the server is in the cgroup from its first allocation on, with its PID."""
    return ["bash", "-c", 'echo $$ > "$0" && exec "$@"', str(procs_file)]


@dataclass
class MemoryCgroup:
    """One cgroup-v1 memory cgroup: its limit, and what its processes used."""

    path: Path

    def read(self, name: str) -> str:
        return (self.path / name).read_text()

    @property
    def prefix(self) -> list[str]:
        return join_cgroup_prefix(self.path / "cgroup.procs")

    def usage(self) -> int:
        return int(self.read("memory.usage_in_bytes"))

    def peak(self) -> int:
        return int(self.read("memory.max_usage_in_bytes"))

    def oom_kills(self) -> int:
        return oom_kills(self.read("memory.oom_control"))

    def failcnt(self) -> int:  # how often usage hit the limit (reclaim, then maybe a kill)
        return int(self.read("memory.failcnt"))

    def stat(self) -> dict[str, int]:
        return parse_memory_stat(self.read("memory.stat"))

    def pids(self) -> list[int]:
        return [int(pid) for pid in self.read("cgroup.procs").split()]

    def summary(self) -> dict:
        stat = self.stat()
        return {
            "limit_bytes": int(self.read("memory.limit_in_bytes")),
            "peak_bytes": self.peak(),
            "usage_bytes": self.usage(),
            "oom_kills": self.oom_kills(),
            "failcnt": self.failcnt(),
            "rss_bytes": stat.get("total_rss", stat.get("rss")),
            "cache_bytes": stat.get("total_cache", stat.get("cache")),
        }


@contextlib.contextmanager
def memory_cgroup(limit_mib: float) -> Iterator[MemoryCgroup]:
    """A new memory cgroup limited to ``limit_mib`` MiB (swap included where the kernel counts
    it); removed on exit, once the processes started in it have ended."""
    if not os.access(CGROUP_MEMORY_ROOT, os.W_OK):
        sys.exit(
            f"{CGROUP_MEMORY_ROOT} is not a writable cgroup-v1 memory hierarchy: run as "
            "root on a cgroup-v1 host, or use --no-limit"
        )
    path = CGROUP_MEMORY_ROOT / f"relpos-host-{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir()
    cgroup = MemoryCgroup(path)
    try:
        limit = str(int(limit_mib * MIB))
        (path / "memory.limit_in_bytes").write_text(limit)
        swap_limit = path / "memory.memsw.limit_in_bytes"
        if swap_limit.exists():  # memory + swap: no escape into swap, as on a host without it
            swap_limit.write_text(limit)
        yield cgroup
    finally:
        deadline = time.monotonic() + 10
        while cgroup.pids() and time.monotonic() < deadline:
            time.sleep(0.1)  # the server's children end after it
        while True:
            try:
                path.rmdir()
                break
            except OSError:  # busy for a moment after the last process left
                if time.monotonic() > deadline:
                    print(f"could not remove {path} (processes {cgroup.pids()})", file=sys.stderr)
                    break
                time.sleep(0.2)


@contextlib.contextmanager
def cpu_cgroup(cpus: float) -> Iterator[list[str]]:
    """A new cgroup-v1 cpu cgroup whose processes together get ``cpus`` cores' time (CFS quota:
    ``cpus`` x 100 ms in every 100 ms), as Community Cloud gives an app 0.078 to 2 cores; yields
    the command prefix that starts a process in it. Removed on exit."""
    if not os.access(CGROUP_CPU_ROOT, os.W_OK):
        sys.exit(f"{CGROUP_CPU_ROOT} is not a writable cgroup-v1 cpu hierarchy: run as root")
    path = CGROUP_CPU_ROOT / f"relpos-host-{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir()
    try:
        (path / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
        (path / "cpu.cfs_quota_us").write_text(str(max(1000, round(cpus * CPU_PERIOD_US))))
        yield join_cgroup_prefix(path / "cgroup.procs")
    finally:
        deadline = time.monotonic() + 10
        while (path / "cgroup.procs").read_text().split() and time.monotonic() < deadline:
            time.sleep(0.1)
        with contextlib.suppress(OSError):
            path.rmdir()


def drop_page_cache() -> None:
    """Write back dirty pages, then drop the machine's clean page cache (needs root)."""
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("1")


@contextlib.contextmanager
def sampling(pid: int) -> Iterator[RssSampler]:
    """load_test's sampler of the server's resident set (its process tree), every 0.5 s."""
    sampler = RssSampler(pid, every=SAMPLE_S)
    sampler.start()
    try:
        yield sampler
    finally:
        sampler.stop.set()
        sampler.join()


@dataclass
class Served:
    """A server started for one measurement."""

    base_url: str
    process: subprocess.Popen
    cgroup: MemoryCgroup | None
    log: Path


@contextlib.contextmanager
def fresh_server(
    kind: str,
    limit_mib: float | None = None,
    env: dict[str, str] | None = None,
    entry: str = "app.py",
    cores: set[int] | None = None,
    cpus: float | None = None,
) -> Iterator[Served]:
    """A fresh server of ``entry``, inside a fresh memory cgroup when ``limit_mib`` is given,
    on ``cores`` only when given, with ``cpus`` cores' time (a CPU quota) when given."""
    log = server_log(kind)
    with contextlib.ExitStack() as stack:
        cgroup = stack.enter_context(memory_cgroup(limit_mib)) if limit_mib else None
        prefix = cgroup.prefix if cgroup else ()
        if cpus:
            prefix = (*prefix, *stack.enter_context(cpu_cgroup(cpus)))
        if cores:
            prefix = (*prefix, "taskset", "-c", ",".join(map(str, sorted(cores))))
        served = served_app(log, env=env, command_prefix=prefix, entry=entry)
        base_url, process = stack.enter_context(served)
        yield Served(base_url, process, cgroup, log)


# ---------------------------------------------------------------- memory: sessions under a limit


class ServerGone(Exception):
    """The server process ended or stopped answering its health check."""


@dataclass
class ServerWatch:
    base_url: str
    process: subprocess.Popen

    def alive(self) -> bool:
        for _ in range(HEALTH_TRIES):  # a server deep in a long rerun may answer late
            if self.process.poll() is not None:
                return False
            if health(self.base_url) == "ok":
                return True
        return False


def wait_idle_while_served(tab: Tab, since: float, server: ServerWatch, timeout_s: float) -> None:
    """measure_browser's idle wait, in slices, giving up early once the server is gone: a page
    whose server died never goes idle."""
    deadline = since + timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            wait_until_idle(tab, since, QUIET_MS, max(0.1, min(SERVER_CHECK_S, left)))
            return
        except TimeoutError:
            if not server.alive():
                raise ServerGone("the server is gone") from None
            if time.monotonic() >= deadline:
                raise


def open_view(tab: Tab, url: str, server: ServerWatch, timeout_s: float) -> dict:
    """Go to ``url`` in the session's tab and wait for idle; what the view showed."""
    start = time.monotonic()
    row: dict = {"url": url, "drew": False, "failure": None}
    try:
        tab.page.goto(url, timeout=timeout_s * 1000)
        wait_idle_while_served(tab, start, server, timeout_s - (time.monotonic() - start))
        row["drew"] = True
    except (ServerGone, TimeoutError, PlaywrightError) as error:
        row["failure"] = short(error)
    row["seconds"] = round(time.monotonic() - start, 2)
    try:
        boxes = tab.page.locator(ERROR_BOXES)
        row["error_boxes"] = boxes.count()
        row["error_texts"] = [text[:300] for text in boxes.all_inner_texts()]
        row["charts"] = tab.page.locator('[data-testid="stPlotlyChart"]').count()
        refusals = tab.page.locator(REFUSAL, has_text="needs about")
        row["refusals"] = [text[:300] for text in refusals.all_inner_texts()]
    except PlaywrightError as error:
        row.update(error_boxes=0, error_texts=[], charts=0, failure=row["failure"] or short(error))
    row["server_alive"] = server.alive()
    return row


def not_opened(view: str) -> dict:
    """The row of a view a session skipped because the server was gone."""
    return {
        "url": view,
        "drew": False,
        "failure": "not opened: the server is gone",
        "error_boxes": 0,
        "error_texts": [],
        "refusals": [],
        "charts": 0,
        "server_alive": False,
        "seconds": 0.0,
    }


def browse(
    index: int,
    views: Sequence[str],
    server: ServerWatch,
    start: threading.Barrier,
    timeout_s: float,
    progress: Callable[[str], None],
    cookie: str | None = None,
) -> list[dict]:
    """One session: its own Playwright, Chromium and context (Playwright's sync API is bound to
    its thread), opening ``views`` (paths with queries) one after the other. ``cookie``: the
    proxy's affinity key for this visitor (``--replicas``), set before the first view."""
    rows: list[dict] = []
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            with open_tab(browser) as tab:
                if cookie:
                    set_affinity(tab, server.base_url, cookie)
                start.wait()
                for number, view in enumerate(views, 1):
                    if not server.alive():
                        rows.append(not_opened(view))
                        continue
                    row = open_view(tab, server.base_url + view, server, timeout_s)
                    rows.append(row)
                    progress(
                        f"session {index} view {number}/{len(views)} {view}: "
                        f"{'drawn' if row['drew'] else row['failure']} in {row['seconds']} s, "
                        f"{row['error_boxes']} error boxes, server "
                        f"{'alive' if row['server_alive'] else 'GONE'}"
                    )
        except threading.BrokenBarrierError:
            pass  # another session could not start: the run is reported as failed
        finally:
            browser.close()
    return rows


def memory_run(sessions: int, views: Sequence[str], args: argparse.Namespace) -> dict:
    """A fresh server (in a fresh cgroup unless --no-limit) and ``sessions`` concurrent
    sessions over ``views``; a server that does not start is a failed run."""
    limit = None if args.no_limit else args.limit_mb
    if args.drop_caches:
        drop_page_cache()
    result: dict = {"sessions": sessions, "limit_mib": limit}
    try:
        return sessions_run(result, views, args)
    except RuntimeError as error:  # served_app: not healthy in time, or ended while starting
        print(error, file=sys.stderr)
        result.update(
            wall_s=0.0,
            server_alive_end=False,
            server_exit_code=None,
            cgroup=None,
            rss_peak_bytes=None,
            rss_samples=0,
            views=[],
            session_errors=[f"the server did not start: {short(error)}"],
        )
        return result


def sessions_run(result: dict, views: Sequence[str], args: argparse.Namespace) -> dict:
    sessions, limit = result["sessions"], result["limit_mib"]
    lock = threading.Lock()

    def progress(message: str) -> None:
        with lock:
            cgroup_now = f" (cgroup {cgroup.usage() / MIB:.0f} MiB)" if cgroup else ""
            print(
                f"[{sessions_label(sessions)}] {message}{cgroup_now}", file=sys.stderr, flush=True
            )

    with fresh_server("memory", limit) as served:
        base_url, process, cgroup = served.base_url, served.process, served.cgroup
        server = ServerWatch(base_url, process)
        if views[0].split("?")[0] != "/":
            # until one run of app.py has called st.navigation, a deep link is served from
            # pages/ without app.py (see load_test): open the root once first
            with sync_playwright() as pw:
                browser = launch(pw)
                with open_tab(browser) as tab:
                    open_view(tab, base_url + "/", server, args.view_timeout)
                browser.close()
        with sampling(process.pid) as sampler:
            outcomes, result["wall_s"] = tour(sessions, views, server, args, progress)
        result["server_alive_end"] = server.alive()
        result["server_exit_code"] = process.poll()
        result["rss_peak_bytes"] = max((rss for _, rss in sampler.samples), default=None)
        result["rss_samples"] = len(sampler.samples)
        result["cgroup"] = cgroup.summary() if cgroup else None
    result["session_errors"] = [short(o) for o in outcomes if isinstance(o, BaseException)]
    result["views"] = [o if isinstance(o, list) else [] for o in outcomes]
    result["server_log"] = str(served.log)
    result["log_tail"] = served.log.read_text(errors="replace")[-4000:]
    return result


def tour(
    sessions: int,
    views: Sequence[str],
    server,
    args: argparse.Namespace,
    progress: Callable[[str], None],
    cookies: Sequence[str | None] | None = None,
) -> tuple[list[list[dict] | BaseException | None], float]:
    """``sessions`` visitors at once, each opening ``views`` in turn (:func:`browse`); their
    rows (or the error that stopped one) and the wall time from their common start."""
    start = threading.Barrier(sessions + 1, timeout=120)
    outcomes: list[list[dict] | BaseException | None] = [None] * sessions
    cookies = cookies or [None] * sessions

    def session(index: int) -> None:
        try:
            outcomes[index] = browse(
                index, views, server, start, args.view_timeout, progress, cookies[index]
            )
        except BaseException as error:  # noqa: BLE001  reported in the table
            start.abort()
            outcomes[index] = error

    threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
    for thread in threads:
        thread.start()
    try:
        start.wait()
    except threading.BrokenBarrierError:
        pass
    began = time.monotonic()
    for thread in threads:
        thread.join()
    return outcomes, round(time.monotonic() - began, 1)


def memory_totals(result: dict, views_per_session: int) -> dict:
    """What the table shows of one run."""
    rows = [row for session in result["views"] for row in session]
    cgroup = result["cgroup"]
    drawn = sum(row["drew"] for row in rows)
    total = result["sessions"] * views_per_session
    boxes = sum(row["error_boxes"] for row in rows)
    refused = [row for row in rows if row.get("refusals")]
    alive = result["server_alive_end"] and all(row["server_alive"] for row in rows)
    failed = [row for row in rows if not row["drew"] or row["error_boxes"]]
    return {
        "drawn": drawn,
        "total": total,
        "error_boxes": boxes,
        "refused": len(refused),
        "first_refusal": refused[0] if refused else None,
        "server_alive": alive,
        "ok": drawn == total and not boxes and alive and not result["session_errors"],
        "first_failure": failed[0] if failed else None,
        "peak": cgroup["peak_bytes"] if cgroup else None,
        "end": cgroup["usage_bytes"] if cgroup else None,
        "oom_kills": cgroup["oom_kills"] if cgroup else None,
    }


def memory_markdown(report: dict) -> str:
    s = report["settings"]
    limit = "no limit" if s["no_limit"] else f"a {s['limit_mb']:g} MiB cgroup-v1 memory limit"
    dropped = ", page cache dropped before each start" if s["drop_caches"] else ""
    lines = [
        machine_line(report["machine"]),
        f"Server under {limit}{dropped}; "
        f"each session opens {len(s['views'])} views ({len(s['pages'])} pages x queries "
        f"{', '.join(repr(q) for q in s['queries'])}) in turn; a view that is not idle with its "
        f"charts drawn within {s['view_timeout']:g} s is not drawn. MiB = 2^20 bytes; peak and "
        "end: the cgroup's (page cache included); RSS: the server's, sampled every 0.5 s.",
        "",
    ]
    rows = []
    notes = []
    for result in report["results"]:
        t = memory_totals(result, len(s["views"]))
        rows.append(
            [
                result["sessions"],
                f"{t['drawn']} / {t['total']}",
                t["error_boxes"],
                t["refused"],
                "yes" if t["server_alive"] else f"no (exit {result['server_exit_code']})",
                mib(t["peak"]),
                mib(t["end"]),
                "–" if t["oom_kills"] is None else t["oom_kills"],
                mib(result["rss_peak_bytes"]),
                result["wall_s"],
            ]
        )
        if t["first_failure"]:
            row = t["first_failure"]
            what = row["failure"] or "; ".join(row["error_texts"])[:200]
            notes.append(
                f"- {sessions_label(result['sessions'])}: first failing view {row['url']}: {what}"
            )
        if t["first_refusal"]:
            row = t["first_refusal"]
            notes.append(
                f"- {sessions_label(result['sessions'])}: {t['refused']} views refused, the first "
                f"{row['url']}: {row['refusals'][0][:200]}"
            )
        notes += [f"- {sessions_label(result['sessions'])}: {e}" for e in result["session_errors"]]
    header = [
        "sessions",
        "views drawn / total",
        "error boxes",
        "views refused in words",
        "server alive",
        "peak MiB (cgroup)",
        "end MiB",
        "OOM kills",
        "RSS peak MiB",
        "wall s",
    ]
    lines.append(table(header, rows))
    return "\n".join(lines + ([""] + notes if notes else []))


# ---------------------------------------------------------------- memory: replicas behind nginx


def set_affinity(tab: Tab, base_url: str, key: str) -> None:
    """Give the visitor in ``tab`` the proxy's affinity cookie ``key`` (which replica serves it)."""
    tab.context.add_cookies([{"name": AFFINITY_COOKIE, "value": key, "url": base_url}])


@dataclass
class ProxyWatch:
    """A deployment as a tour sees it: alive while every replica runs and nginx answers."""

    deployment: Deployment

    @property
    def base_url(self) -> str:
        return self.deployment.base_url

    def alive(self) -> bool:
        for _ in range(HEALTH_TRIES):
            if not all(self.deployment.replica_alive(p) for p in self.deployment.ports):
                return False
            if health(self.base_url) == "ok":
                return True
        return False


class Presser(threading.Thread):
    """One more visitor, on one page, pressing an arrow key on k (right, then left) about once a
    second while the others tour: key press to the first chart redrawn with new data."""

    def __init__(self, url: str, base_url: str, key: str, timeout_s: float) -> None:
        super().__init__(daemon=True)
        self.url, self.base_url, self.key, self.timeout_s = url, base_url, key, timeout_s
        self.presses: list[dict] = []
        self.errors: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        with sync_playwright() as pw:
            browser = launch(pw)
            try:
                with open_tab(browser) as tab:
                    set_affinity(tab, self.base_url, self.key)
                    measure_load(tab, self.url, QUIET_MS, self.timeout_s)
                    while not self.stop.is_set() and len(self.errors) < 5:
                        try:
                            self.presses += measure_keypresses(
                                tab, SLIDERS["k"], 2, QUIET_MS, self.timeout_s
                            )
                        except Exception as error:  # a slow press: note it, go on
                            self.errors.append(short(error))
                        self.stop.wait(1.0)
            except Exception as error:  # the page did not load: no presses
                self.errors.append(short(error))
            finally:
                browser.close()


def replicas_run(replicas: int, sessions: int, views: Sequence[str], args) -> dict:
    """``deploy/replicas.sh replicas`` (each replica in its own cgroup unless --no-limit),
    ``sessions`` visitors touring through nginx, spread evenly over the replicas by their
    affinity cookies, and one visitor pressing k on ``--press-page`` meanwhile."""
    limit = None if args.no_limit else args.limit_mb
    if args.drop_caches:
        drop_page_cache()
    label = f"{replicas} replica{'s' if replicas > 1 else ''}, {sessions_label(sessions)}"
    result: dict = {"sessions": sessions, "replicas": replicas, "limit_mib": limit}
    result.update(cgroup=None, server_exit_code=None, session_errors=[], views=[], wall_s=0.0)
    run_dir = Path(f"/tmp/measure_host_replicas_{os.getpid()}_{next(SERVER_NUMBERS)}")
    lock = threading.Lock()

    def progress(message: str) -> None:
        with lock:
            print(f"[{label}] {message}", file=sys.stderr, flush=True)

    try:
        with deployed(replicas, run_dir, memory_mb=limit) as deployment:
            ports = deployment.ports
            server = ProxyWatch(deployment)
            per_replica = -(-sessions // replicas) + 1  # the touring visitors and the presser
            keys = deployment.keys_by_replica(per_replica)
            # Each replica's first run (see memory_run): the root, once, on every replica.
            with sync_playwright() as pw:
                browser = launch(pw)
                for port in ports:
                    with open_tab(browser) as tab:
                        set_affinity(tab, server.base_url, keys[port][-1])
                        open_view(tab, server.base_url + "/", server, args.view_timeout)
                browser.close()
            cookies = [keys[ports[i % replicas]][i // replicas] for i in range(sessions)]
            press_path = select_pages([args.press_page])[args.press_page]
            presser = Presser(
                server.base_url + press_path, server.base_url, keys[ports[0]][-1], args.timeout
            )
            samplers = {port: RssSampler(deployment.replica_pid(port), SAMPLE_S) for port in ports}
            for sampler in samplers.values():
                sampler.start()
            presser.start()
            try:
                outcomes, result["wall_s"] = tour(sessions, views, server, args, progress, cookies)
            finally:
                presser.stop.set()
                presser.join()
                for sampler in samplers.values():
                    sampler.stop.set()
                    sampler.join()
            result["server_alive_end"] = server.alive()
            streams = replica_ports_of(deployment.access_log(), "/_stcore/stream")
            result["replica"] = {}
            for port in ports:
                cgroup = deployment.cgroup(port)
                result["replica"][port] = {
                    "visitors": sum(cookie in keys[port] for cookie in cookies),
                    "served_streams_of": sorted(k for k, p in streams.items() if port in p),
                    "rss_peak_bytes": max((v for _, v in samplers[port].samples), default=None),
                    "cgroup": MemoryCgroup(cgroup).summary() if cgroup else None,
                    "alive": deployment.replica_alive(port),
                }
            result["presses"], result["press_errors"] = presser.presses, presser.errors
            result["press_url"] = press_path
            result["misrouted"] = [  # a visitor whose websocket reached another replica
                cookie
                for port in ports
                for cookie in cookies
                if cookie in keys[port] and streams.get(cookie, {port}) != {port}
            ]
    except RuntimeError as error:  # deploy/replicas.sh did not come up
        print(error, file=sys.stderr)
        result.update(server_alive_end=False, replica={}, presses=[], press_errors=[])
        result["session_errors"] = [f"the replicas did not start: {short(error)}"]
        return result
    result["session_errors"] = [short(o) for o in outcomes if isinstance(o, BaseException)]
    result["views"] = [o if isinstance(o, list) else [] for o in outcomes]
    return result


def replicas_markdown(report: dict) -> str:
    s = report["settings"]
    limit = "no limit" if s["no_limit"] else f"its own {s['limit_mb']:g} MiB cgroup-v1 memory limit"
    lines = [
        machine_line(report["machine"]),
        f"nginx (deploy/replicas.sh) in front of the replicas, each in {limit}; every session "
        f"opens {len(s['views'])} views ({len(s['pages'])} pages x queries "
        f"{', '.join(repr(q) for q in s['queries'])}) in turn through the proxy, the sessions "
        "spread evenly over the replicas by their affinity cookies; meanwhile one more visitor "
        f"presses an arrow key on k on {s['press_page']} about once a second (key press to the "
        "first chart redrawn, ms, median (min–max), presses). Per replica, in port order: "
        "visitors, cgroup peak MiB (page cache included), RSS peak MiB, OOM kills.",
        "",
    ]
    rows, notes = [], []
    for result in report["results"]:
        t = memory_totals(result, len(s["views"]))
        replica = result.get("replica", {}).values()

        def each(key: Callable[[dict], object], replica=replica) -> str:
            return ", ".join(str(key(r)) for r in replica) or "–"

        redraw = spread([p["redraw_ms"] for p in result["presses"]])
        press_boxes = sum(p["error_boxes"] for p in result["presses"])
        rows.append(
            [
                result["replicas"],
                result["sessions"],
                f"{t['drawn']} / {t['total']}",
                t["error_boxes"] + press_boxes,
                t["refused"],
                "yes" if t["server_alive"] else "no",
                each(lambda r: r["visitors"]),
                each(lambda r: mib(r["cgroup"]["peak_bytes"]) if r["cgroup"] else "–"),
                each(lambda r: mib(r["rss_peak_bytes"])),
                each(lambda r: r["cgroup"]["oom_kills"] if r["cgroup"] else "–"),
                f"{stat_cell(redraw)}, {redraw['n'] if redraw else 0}",
                result["wall_s"],
            ]
        )
        plural = "s" if result["replicas"] > 1 else ""
        where = f"{result['replicas']} replica{plural}, {sessions_label(result['sessions'])}"
        if t["first_failure"]:
            row = t["first_failure"]
            what = row["failure"] or "; ".join(row["error_texts"])[:200]
            notes.append(f"- {where}: first failing view {row['url']}: {what}")
        notes += [f"- {where}: {e}" for e in result["session_errors"]]
        notes += [f"- {where}: key press: {e}" for e in result["press_errors"][:2]]
        if result.get("misrouted"):
            notes.append(f"- {where}: websockets on another replica: {result['misrouted']}")
    header = [
        "replicas",
        "sessions",
        "views drawn / total",
        "error boxes",
        "refused in words",
        "all alive",
        "visitors per replica",
        "peak MiB (cgroup) per replica",
        "RSS peak MiB per replica",
        "OOM kills",
        "key press to redraw ms, presses",
        "wall s",
    ]
    lines.append(table(header, rows, left=0))
    return "\n".join(lines + ([""] + notes if notes else []))


def memory_command(args: argparse.Namespace) -> int:
    pages = select_pages(args.pages)
    queries = [normal_query(q) for q in args.queries]
    views = [path + query for path in pages.values() for query in queries]
    settings = {**vars(args), "pages": list(pages), "queries": queries, "views": views}
    report: dict = {"machine": machine(), "settings": settings, "results": []}
    for sessions in args.sessions:
        if args.replicas:  # one replica and two side by side for each count, in turn
            for replicas in args.replicas:
                report["results"].append(replicas_run(replicas, sessions, views, args))
                write_json(args.json, report)  # what is done so far, should a later run stall
        else:
            report["results"].append(memory_run(sessions, views, args))
    finish_machine(report)
    print(replicas_markdown(report) if args.replicas else memory_markdown(report))
    write_json(args.json, report)
    ok = all(memory_totals(r, len(views))["ok"] for r in report["results"])
    return 0 if ok else 1


# ---------------------------------------------------------------- keypress: threads, busy CPU


FLOOR_APP = "scripts/floor_app.py"  # one slider, one heatmap: what no page can beat
FLOOR_ROW = "bare Streamlit (scripts/floor_app.py)"


def keypress_page(browser: Browser, url: str, args: argparse.Namespace) -> dict:
    label = SLIDERS["k"]
    with open_tab(browser) as tab:
        load = measure_load(tab, url, QUIET_MS, args.timeout)
        if load["error_boxes"]:
            texts = tab.page.locator(ERROR_BOXES).all_inner_texts()
            note = f"error box: {' | '.join(texts)[:120]}"
            return {"url": url, "load": load, "presses": [], "note": note}
        if not tab.page.get_by_role("slider", name=label).count():
            return {"url": url, "load": load, "presses": [], "note": "no k slider"}
        presses = measure_keypresses(tab, label, args.repeats, QUIET_MS, args.timeout)
    return {"url": url, "load": load, "presses": presses}


def summarized(row: dict) -> dict:
    """``row`` (one page's presses) with their redraw and idle spreads and error boxes."""
    presses = row["presses"]
    row["redraw_ms"] = spread([p["redraw_ms"] for p in presses])
    row["idle_ms"] = spread([p["idle_ms"] for p in presses])
    row["error_boxes"] = sum(p["error_boxes"] for p in presses)
    return row


def keypress_run(threads: int, busy: int, pages: dict[str, str], args) -> dict:
    result: dict = {"threads": threads, "busy": busy, "pages": {}}
    env = {"RELPOS_TORCH_THREADS": str(threads)}
    with busy_cpu(busy), fresh_server("keypress", env=env) as served:
        base_url = served.base_url
        result["server_log"] = str(served.log)
        with sync_playwright() as pw:
            browser = launch(pw)
            with open_tab(browser) as tab:  # registers the pages (st.navigation), unmeasured
                measure_load(tab, base_url + "/", QUIET_MS, args.timeout)
            for stem, path in pages.items():
                print(f"[threads {threads}, busy {busy}] {path} ...", file=sys.stderr, flush=True)
                try:
                    row = keypress_page(browser, base_url + path, args)
                except Exception as error:  # a timeout on one page: say so, measure the rest
                    row = {"url": base_url + path, "presses": [], "note": short(error)}
                result["pages"][stem] = summarized(row)
            browser.close()
    if args.floor:  # the same presses on a bare Streamlit page, under the same load
        with fresh_server("keypress-floor", env=env, entry=FLOOR_APP) as served:
            with sync_playwright() as pw:
                browser = launch(pw)
                row = keypress_page(browser, served.base_url + "/", args)
                browser.close()
        result["pages"][FLOOR_ROW] = summarized(row)
    return result


def busy_ratio(runs: Sequence[dict], threads: int, busy: int, measure: str) -> float | None:
    """Median over pages of (median at ``busy``) / (median at busy 0), for ``threads``."""
    by_busy = {run["busy"]: run for run in runs if run["threads"] == threads}
    if busy not in by_busy or 0 not in by_busy:
        return None
    ratios = []
    for stem, row in by_busy[busy]["pages"].items():
        if stem == FLOOR_ROW:  # not a page of the explorer
            continue
        quiet = by_busy[0]["pages"].get(stem, {}).get(measure)
        if row.get(measure) and quiet and quiet["median"] > 0:
            ratios.append(row[measure]["median"] / quiet["median"])
    return statistics.median(ratios) if ratios else None


def keypress_markdown(report: dict) -> str:
    runs = report["results"]
    s = report["settings"]
    lines = [
        machine_line(report["machine"]),
        f"{s['repeats']} key presses on the k slider per page (default view), alternating "
        "right and left; ms from the key event, median (min–max). Threads: RELPOS_TORCH_THREADS "
        "of the server; busy: processes spinning beside the server and the browser.",
    ]
    header = ["page"] + [f"threads {r['threads']}, busy {r['busy']}" for r in runs]
    for measure, title in (
        ("redraw_ms", "Key press to a chart redrawn with new data (ms)"),
        ("idle_ms", "Key press to idle (ms)"),
    ):
        rows = []
        for stem in [*s["pages"], *([FLOOR_ROW] if s.get("floor") else [])]:
            cells = []
            for run in runs:
                row = run["pages"].get(stem, {})
                note = row.get("note") or ("no chart changed" if row.get("presses") else "–")
                cell = stat_cell(row[measure]) if row.get(measure) else note
                if row.get("error_boxes"):
                    cell += f" ({row['error_boxes']} error boxes)"
                cells.append(cell)
            rows.append([stem, *cells])
        ratios = []
        for run in runs:
            ratio = busy_ratio(runs, run["threads"], run["busy"], measure)
            ratios.append("–" if ratio is None else f"{ratio:.2f}x")
        rows.append(["busy / quiet (median over pages)", *ratios])
        lines += ["", f"{title}:", "", table(header, rows)]
    return "\n".join(lines)


def keypress_command(args: argparse.Namespace) -> int:
    pages = select_pages(args.pages)
    report: dict = {"machine": machine(), "settings": {**vars(args), "pages": list(pages)}}
    report["results"] = [
        keypress_run(threads, busy, pages, args)
        for threads, busy in itertools.product(args.threads, args.busy)
    ]
    finish_machine(report)
    print(keypress_markdown(report))
    write_json(args.json, report)
    return 0


# ---------------------------------------------------------------- coldstart


def coldstart_once(browser: Browser, args: argparse.Namespace) -> dict:
    if args.drop_caches:
        drop_page_cache()
    spawned = time.monotonic()
    server_cores = {0} if args.split_cores else None
    with fresh_server(
        "coldstart", args.limit_mb, entry=args.entry, cores=server_cores, cpus=args.server_cpus
    ) as served:
        base_url, cgroup = served.base_url, served.cgroup
        healthy_s = time.monotonic() - spawned
        with open_tab(browser) as tab:
            opened = time.monotonic() - spawned
            load = measure_load(tab, base_url + "/", QUIET_MS, args.timeout)
        result = {
            "healthy_s": healthy_s,
            "page_opened_s": opened,
            "first_chart_s": None
            if load["first_chart_s"] is None
            else opened + load["first_chart_s"],
            "idle_s": opened + load["idle_s"],
            "charts": load["charts"],
            "error_boxes": load["error_boxes"],
            "cgroup": cgroup.summary() if cgroup else None,
            "server_log": str(served.log),
        }
    return result


def coldstart_markdown(report: dict) -> str:
    s = report["settings"]
    runs = report["results"]
    where = f"in a {s['limit_mb']:g} MiB memory cgroup" if s["limit_mb"] else "without a limit"
    dropped = ", page cache dropped before each" if s["drop_caches"] else ""
    split = "; the server on core 0, the browser on the others" if s.get("split_cores") else ""
    quota = s.get("server_cpus")
    cpus = f"; the server given {quota:g} cores' time (a CPU quota)" if quota else ""
    lines = [
        machine_line(report["machine"]),
        f"Cold starts: {len(runs)}, {where}{dropped}{split}{cpus}; "
        f"s from spawning `streamlit run {s.get('entry', 'app.py')}`; the landing page is "
        "opened in a fresh browser context once the server is healthy. Median (min–max), then "
        "each start.",
        "",
    ]
    measures = [
        ("server healthy", "healthy_s"),
        ("landing page: first chart", "first_chart_s"),
        ("landing page: idle, charts drawn", "idle_s"),
    ]
    rows = []
    for title, key in measures:
        values = [run[key] for run in runs]
        each = ", ".join("–" if v is None else f"{v:.2f}" for v in values)
        rows.append([title, stat_cell(spread(values), 2), each])
    if s["limit_mb"]:
        peaks = [run["cgroup"]["peak_bytes"] for run in runs]
        rows.append(
            [
                "cgroup peak MiB",
                stat_cell(spread(peaks, 1 / MIB), 0),
                ", ".join(mib(p) for p in peaks),
            ]
        )
    lines.append(table(["measure", "median (min–max)", "each"], rows))
    charts = {run["charts"] for run in runs}
    boxes = sum(run["error_boxes"] for run in runs)
    lines.append(f"\nCharts on the landing page: {sorted(charts)}; error boxes: {boxes}.")
    return "\n".join(lines)


def coldstart_command(args: argparse.Namespace) -> int:
    report: dict = {"machine": machine(), "settings": vars(args), "results": []}
    if args.split_cores:  # the browser (launched from here) on every core but the server's 0
        os.sched_setaffinity(0, set(range(1, os.cpu_count() or 2)))
    with sync_playwright() as pw:
        browser = launch(pw)
        for repeat in range(args.repeats):
            print(f"cold start {repeat + 1}/{args.repeats} ...", file=sys.stderr, flush=True)
            report["results"].append(coldstart_once(browser, args))
        browser.close()
    finish_machine(report)
    print(coldstart_markdown(report))
    write_json(args.json, report)
    return 0 if not any(run["error_boxes"] for run in report["results"]) else 1


# ---------------------------------------------------------------- failover: a replica lost


def failover_once(browser: Browser, args: argparse.Namespace, number: int) -> dict:
    """Two replicas behind nginx; a visitor on the first opens ``--url``; that replica is
    killed; seconds from the kill until the page lost its connection, connected again and drew
    its charts once more, and whether it shows the same view with no error box."""
    run_dir = Path(f"/tmp/measure_host_failover_{os.getpid()}_{number}")
    with deployed(2, run_dir) as deployment:
        lost = deployment.ports[0]
        key = deployment.keys_by_replica()[lost][0]
        with open_tab(browser) as tab:
            set_affinity(tab, deployment.base_url, key)
            measure_load(tab, deployment.base_url + args.url, QUIET_MS, args.timeout)
            slider = tab.page.get_by_role("slider", name=SLIDERS["k"])
            before = slider.input_value()

            def press() -> None:  # Streamlit does not run the page again until the visitor acts
                slider.focus()
                tab.page.keyboard.press("ArrowRight")

            wait = lose_replica(tab.page, deployment, lost, press, args.timeout * 1000)
            wait.pop("states")
            wait["same_url"] = int(slider.input_value()) == int(before) + 1
            wait["error_boxes"] = tab.page.locator(ERROR_BOXES).count()
    return wait


def failover_command(args: argparse.Namespace) -> int:
    report: dict = {"machine": machine(), "settings": vars(args), "results": []}
    with sync_playwright() as pw:
        browser = launch(pw)
        for number in range(args.repeats):
            print(f"failover {number + 1}/{args.repeats} ...", file=sys.stderr, flush=True)
            report["results"].append(failover_once(browser, args, number))
        browser.close()
    finish_machine(report)
    runs = report["results"]
    rows = []
    for title, key in (
        ("the page shows it lost its connection", "lost_s"),
        ("connected again (through nginx, to the live replica)", "reconnected_s"),
        ("a key press then: its charts drawn (from the press)", "redraw_after_act_s"),
    ):
        values = [run[key] for run in runs]
        each = ", ".join("–" if v is None else f"{v:.2f}" for v in values)
        rows.append([title, stat_cell(spread(values), 2), each])
    print(machine_line(report["machine"]))
    print(
        f"{len(runs)} times: two replicas behind nginx, a visitor on one at {args.url}, that "
        "replica killed (SIGKILL); s from the kill; once connected again, a key press on k. "
        "Median (min–max), then each.\n"
    )
    print(table(["moment", "median (min–max)", "each"], rows))
    same = sum(run["same_url"] for run in runs)
    boxes = sum(run["error_boxes"] for run in runs)
    print(f"\nk moved on from the view's value: {same} / {len(runs)}; error boxes: {boxes}.")
    write_json(args.json, report)
    return 0 if same == len(runs) and not boxes else 1


# ---------------------------------------------------------------- command line


def write_json(path: Path | None, report: dict) -> None:
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1, default=str))
        print(f"\nwrote {path}", file=sys.stderr)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[2:]),
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--json", type=Path, help="also write the report here")

    def pages(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--pages",
            nargs="+",
            metavar="STEM",
            help="page file stems (default: every page of the navigation)",
        )

    memory = commands.add_parser("memory", help="sessions under a memory limit")
    limit = memory.add_mutually_exclusive_group()
    limit.add_argument("--limit-mb", type=float, default=690.0, help="cgroup limit, MiB")
    limit.add_argument("--no-limit", action="store_true", help="no cgroup: resident set only")
    memory.add_argument(
        "--sessions",
        type=int,
        nargs="+",
        default=[1, 4, 8],
        help="concurrent browser sessions; one fresh server per count",
    )
    memory.add_argument(
        "--queries",
        nargs="+",
        default=["", "?n=1024"],
        metavar="Q",
        help='query strings, "" is the default view',
    )
    memory.add_argument(
        "--view-timeout", type=float, default=120.0, help="seconds a view may take to draw"
    )
    memory.add_argument(
        "--drop-caches",
        action="store_true",
        help="drop the page cache before each server starts (root)",
    )
    memory.add_argument(
        "--replicas",
        type=int,
        nargs="+",
        metavar="R",
        help="through nginx (deploy/replicas.sh) with R replicas, each in its own memory limit; "
        "one more visitor presses k meanwhile",
    )
    memory.add_argument(
        "--press-page", default="lookup", help="the page whose k the pressing visitor moves"
    )
    memory.add_argument(
        "--timeout", type=float, default=120.0, help="seconds one key press may take"
    )
    pages(memory)
    common(memory)

    keypress = commands.add_parser("keypress", help="key presses with torch threads, busy CPU")
    keypress.add_argument(
        "--threads", type=int, nargs="+", default=[1, 2], help="RELPOS_TORCH_THREADS values"
    )
    keypress.add_argument(
        "--busy", type=int, nargs="+", default=[0, 2], help="spinning processes beside the server"
    )
    keypress.add_argument("--repeats", type=int, default=5, help="key presses per page")
    keypress.add_argument(
        "--floor",
        action="store_true",
        help=f"also press k on {FLOOR_APP}, a bare page: the floor of this machine and browser",
    )
    keypress.add_argument(
        "--timeout", type=float, default=300.0, help="seconds one load or key press may take"
    )
    pages(keypress)
    common(keypress)

    failover = commands.add_parser("failover", help="a replica killed under an open page")
    failover.add_argument("--repeats", type=int, default=3)
    failover.add_argument("--url", default="/lookup?n=24&k=5&weights=random")
    failover.add_argument("--timeout", type=float, default=120.0, help="seconds for each wait")
    common(failover)

    coldstart = commands.add_parser("coldstart", help="spawn to healthy and to the page idle")
    coldstart.add_argument("--repeats", type=int, default=3)
    coldstart.add_argument(
        "--entry",
        default="app.py",
        help="main script, from the repository root (deploy/streamlit_app.py: Cloud's)",
    )
    coldstart.add_argument(
        "--split-cores",
        action="store_true",
        help="the server on core 0, the browser on the others, as when a visitor's browser "
        "runs on their own machine",
    )
    coldstart.add_argument("--limit-mb", type=float, help="also run in a memory cgroup, MiB")
    coldstart.add_argument(
        "--server-cpus",
        type=float,
        help="the server's share of the cores (a cgroup CPU quota, e.g. 0.5; Cloud gives 0.078 "
        "to 2), the browser free to use the rest",
    )
    coldstart.add_argument(
        "--drop-caches", action="store_true", help="drop the page cache before each start (root)"
    )
    coldstart.add_argument(
        "--timeout", type=float, default=300.0, help="seconds the landing page may take"
    )
    common(coldstart)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run = {
        "memory": memory_command,
        "keypress": keypress_command,
        "coldstart": coldstart_command,
        "failover": failover_command,
    }
    return run[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

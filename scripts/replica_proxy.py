"""deploy/replicas.sh on free loopback ports, and which replica nginx sent each request to.

What the browser test of the replicas (tests/browser/test_replicas_proxy.py) and
``scripts/measure_host.py memory --replicas`` share: start nginx in front of N replicas with the
one command a person uses, wait for the proxy's health, read the replicas' pids and memory
cgroups from the run directory, and parse nginx's access log (the format ``replicas`` in
deploy/nginx.conf.template: the affinity key and the replica of every request).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.local_app import REPO, free_port, health

REPLICAS_SH = REPO / "deploy" / "replicas.sh"
AFFINITY_COOKIE = "relpos_replica"  # the cookie nginx hashes on (deploy/nginx.conf.template)
LOG_LINE = re.compile(
    r'^(?P<at>[\d.]+) "(?P<method>\S+) (?P<uri>\S+)" (?P<status>\d+) key=(?P<key>\S*) '
    r'upstream="(?P<upstream>[^"]*)" upstream_status="(?P<upstream_status>[^"]*)"$'
)


def nginx_binary() -> Path | None:
    """Debian's nginx (``apt-get install nginx``), or None when it is not installed."""
    found = shutil.which("nginx") or "/usr/sbin/nginx"
    return Path(found) if os.access(found, os.X_OK) else None


@dataclass(frozen=True)
class Logged:
    """One line of nginx's access log: a request and the replica(s) it went to."""

    at: float
    method: str
    uri: str
    status: int
    key: str
    upstreams: tuple[str, ...]  # every replica tried, in order ("127.0.0.1:port")

    @property
    def port(self) -> int | None:
        """The port of the replica that answered (the last one tried), None if none did."""
        last = self.upstreams[-1] if self.upstreams else ""
        return int(last.rsplit(":", 1)[1]) if ":" in last else None


def parse_access_log(text: str) -> list[Logged]:
    lines = []
    for raw in text.splitlines():
        match = LOG_LINE.match(raw.strip())
        if not match:
            continue
        upstreams = tuple(u.strip() for u in re.split(r"[,:] (?=\d)", match["upstream"]) if u)
        lines.append(
            Logged(
                float(match["at"]),
                match["method"],
                match["uri"],
                int(match["status"]),
                match["key"],
                upstreams if match["upstream"] != "-" else (),
            )
        )
    return lines


@dataclass
class Deployment:
    """nginx on ``base_url`` in front of replicas on ``ports``, started by deploy/replicas.sh."""

    base_url: str
    ports: list[int]
    run_dir: Path
    process: subprocess.Popen  # deploy/replicas.sh itself, in the foreground

    def replica_pid(self, port: int) -> int:
        return int((self.run_dir / f"replica-{port}.pid").read_text())

    def pids(self) -> list[int]:
        """nginx's master and every replica, as their pid files name them."""
        files = [self.run_dir / "nginx" / "nginx.pid"]
        files += [self.run_dir / f"replica-{port}.pid" for port in self.ports]
        texts = [f.read_text().strip() for f in files if f.exists()]
        return [int(text) for text in texts if text]

    def cgroup(self, port: int) -> Path | None:
        """The replica's memory cgroup (with ``memory_mb``), else None."""
        path = self.run_dir / f"replica-{port}.cgroup"
        return Path(path.read_text().strip()) if path.exists() else None

    def replica_alive(self, port: int) -> bool:
        try:
            os.kill(self.replica_pid(port), 0)
        except (OSError, ValueError):
            return False
        return True

    def access_log(self) -> list[Logged]:
        return parse_access_log((self.run_dir / "nginx" / "access.log").read_text())

    def nginx_conf(self) -> str:
        return (self.run_dir / "nginx" / "nginx.conf").read_text()

    def request(self, path: str, key: str | None = None, timeout_s: float = 5.0) -> int:
        """GET ``path`` through the proxy, with the affinity cookie ``key`` when given."""
        headers = {"Cookie": f"{AFFINITY_COOKIE}={key}"} if key else {}
        request = urllib.request.Request(self.base_url + path, headers=headers)
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status

    def keys_by_replica(self, per_replica: int = 1, tries: int = 64) -> dict[int, list[str]]:
        """Affinity keys (``visitor-0``, ``visitor-1``, ...) that nginx sends to each replica,
        ``per_replica`` for each, found by asking /_stcore/health with each key twice and
        reading the access log; a key whose two requests went to different replicas is left
        out. Raises AssertionError when some replica gets fewer."""
        seen: dict[str, set[int]] = {}
        found: dict[int, list[str]] = {port: [] for port in self.ports}
        for number in range(tries):
            key = f"visitor-{number}"
            for _ in range(2):
                self.request("/_stcore/health", key)
            time.sleep(0.05)  # nginx writes the line when the request ends
            for line in self.access_log():
                if line.key == key and line.port is not None:
                    seen.setdefault(key, set()).add(line.port)
            ports = seen.get(key, set())
            if len(ports) == 1:
                port = next(iter(ports))
                if len(found[port]) < per_replica:
                    found[port].append(key)
            if all(len(keys) >= per_replica for keys in found.values()):
                return found
        raise AssertionError(
            f"after {tries} keys some replica got fewer than {per_replica}: {found}; "
            f"replicas per key: { {k: sorted(v) for k, v in seen.items()} }"
        )


@contextlib.contextmanager
def deployed(
    count: int,
    run_dir: Path,
    *,
    memory_mb: float | None = None,
    timeout_s: float = 120.0,
    log_path: Path | None = None,
) -> Iterator[Deployment]:
    """``deploy/replicas.sh count`` on free loopback ports with ``run_dir``; yields the
    deployment once nginx answers /_stcore/health; stops it (as Ctrl-C does) on exit."""
    port = free_port()
    ports: list[int] = []
    while len(ports) < count:
        candidate = free_port()
        if candidate != port and candidate not in ports:
            ports.append(candidate)
    command: list[str] = [str(REPLICAS_SH), str(count), "--port", str(port)]
    command += ["--replica-ports", ",".join(map(str, ports)), "--run-dir", str(run_dir)]
    if memory_mb:
        command += ["--memory-mb", str(int(memory_mb))]
    log_path = log_path or run_dir.with_name(run_dir.name + ".log")
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}"
    started: tuple[list[int], list[Path | None]] | None = None  # what to stop if it outlives
    try:
        deadline = time.monotonic() + timeout_s
        while health(base_url) != "ok":
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(
                    f"deploy/replicas.sh {count} not serving {base_url} within {timeout_s:.0f} s "
                    f"(exit code {process.poll()}):\n{tail}"
                )
            time.sleep(0.25)
        deployment = Deployment(base_url, ports, run_dir, process)
        started = deployment.pids(), [deployment.cgroup(port) for port in ports]
        yield deployment
    finally:
        stop(process)
        if started is not None:
            stop_left(*started, run_dir)


def stop(process: subprocess.Popen, timeout_s: float = 60.0) -> None:
    """Stop deploy/replicas.sh as Ctrl-C would: it stops nginx and the replicas, then exits."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def stop_left(
    pids: Sequence[int], cgroups: Sequence[Path | None], run_dir: Path, timeout_s: float = 10.0
) -> None:
    """Whatever of the deployment outlived deploy/replicas.sh's own stop (it was killed before
    its trap finished, or never ran it): TERM, then KILL; then the replicas' cgroups and the
    run directory removed."""
    left = [pid for pid in pids if alive(pid)]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + timeout_s
        while (left := [pid for pid in left if alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.1)
    for cgroup in cgroups:
        if cgroup is not None:
            with contextlib.suppress(OSError):
                cgroup.rmdir()
    shutil.rmtree(run_dir, ignore_errors=True)


def alive(pid: int) -> bool:
    """Running, not a zombie left for its parent to reap."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def replica_ports_of(lines: Sequence[Logged], uri_prefix: str) -> dict[str, set[int]]:
    """Affinity key -> the replicas that answered requests whose path starts with
    ``uri_prefix`` (e.g. ``/_stcore/stream``, the websocket)."""
    ports: dict[str, set[int]] = {}
    for line in lines:
        if line.uri.startswith(uri_prefix) and line.port is not None:
            ports.setdefault(line.key, set()).add(line.port)
    return ports


# The page's connection and script states as they change (Streamlit marks both on stApp), each
# with the page's clock: the proof that a page lost its replica, reconnected and ran again.
WATCH_STATES_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const log = (window.__states = []);
  const note = () => log.push([performance.now(), app.dataset.testConnectionState,
                               app.dataset.testScriptState]);
  new MutationObserver(note).observe(app, {attributes: true});
  note();
}"""


def lose_replica(
    page, deployment: Deployment, port: int, act: Callable[[], None], timeout_ms: float = 90_000
) -> dict:
    """Kill the replica on ``port`` (SIGKILL, as a crash or a lost host) under ``page``, a settled
    page that replica serves; wait for the page to lose its connection and connect again
    (through nginx, to a live replica); then ``act()`` (a key press: Streamlit 1.67 does not run
    the script again on reconnecting, the page keeps showing the view it had until the visitor
    does something) and wait for that run to end with every chart drawn. Returns the seconds
    from the kill to each of those moments (the page's clock) and the states seen."""
    page.evaluate(WATCH_STATES_JS)
    # a settled page: connected, no run, and no change of state for a second (a deep link into
    # a fresh replica runs twice; a kill between the runs would leave the second one pending)
    page.wait_for_function(
        """() => {
          const [t, c, r] = window.__states[window.__states.length - 1];
          return c === 'CONNECTED' && r === 'notRunning' && performance.now() - t > 1000;
        }""",
        timeout=timeout_ms,
        polling=100,
    )
    killed_at = page.evaluate("performance.now()")
    os.kill(deployment.replica_pid(port), signal.SIGKILL)
    reconnected_at = page.wait_for_function(
        """(since) => {
          const s = window.__states.filter(([t]) => t >= since);
          const lost = s.findIndex(([, c]) => c !== 'CONNECTED');
          const back = s.findIndex(([, c], i) => lost >= 0 && i > lost && c === 'CONNECTED');
          return back >= 0 ? s[back][0] : false;
        }""",
        arg=killed_at,
        timeout=timeout_ms,
        polling=50,
    ).json_value()
    acted_at = page.evaluate("performance.now()")
    act()
    page.wait_for_function(  # a run began after the act, and ended
        """(since) => {
          const s = window.__states.filter(([t]) => t >= since);
          const ran = s.findIndex(([, , r]) => r === 'running');
          return ran >= 0 && s.some(([, c, r], i) => i > ran && c === 'CONNECTED'
                                     && r === 'notRunning');
        }""",
        arg=acted_at,
        timeout=timeout_ms,
        polling=50,
    )
    charts = page.locator('[data-testid="stPlotlyChart"]')
    count = charts.count()
    for index in range(count):
        charts.nth(index).locator(".main-svg").first.wait_for(timeout=timeout_ms)
    drawn_at = page.evaluate("performance.now()")
    states = page.evaluate("window.__states")
    lost_at = next(t for t, c, _ in states if t >= killed_at and c != "CONNECTED")
    return {
        "lost_s": (lost_at - killed_at) / 1000,
        "reconnected_s": (reconnected_at - killed_at) / 1000,
        "acted_s": (acted_at - killed_at) / 1000,
        "drawn_s": (drawn_at - killed_at) / 1000,
        "redraw_after_act_s": (drawn_at - acted_at) / 1000,
        "charts": count,
        "states": states,
    }

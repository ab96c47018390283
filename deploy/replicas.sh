#!/usr/bin/env bash
# The explorer as several replicas behind nginx, on this machine.
#
#   deploy/replicas.sh N [options]   start N `streamlit run app.py` replicas and nginx in front;
#                                    print the URL; Ctrl-C stops everything
#   deploy/replicas.sh stop [--run-dir DIR]   stop the deployment started with that run directory
#
# Options:
#   --port P              nginx's port on 127.0.0.1 (default 8080)
#   --replica-ports A,B   the replicas' ports on 127.0.0.1 (default P+1, P+2, ...)
#   --memory-mb M         each replica in its own cgroup-v1 memory cgroup of M MiB (needs root)
#   --run-dir DIR         where nginx's config, pid, logs and temporary files and the replicas'
#                         logs and pids live (default ${TMPDIR:-/tmp}/relpos-replicas-$UID);
#                         emptied at start, removed at stop
#
# One random cookie secret is made per start and handed to every replica in its environment
# (STREAMLIT_SERVER_COOKIE_SECRET): it is never written to disk or shown on a command line. The
# start waits for each replica's /_stcore/health before nginx starts. nginx is Debian's package
# (`apt-get install nginx`), run as a process of its own with deploy/nginx.conf.template as its
# whole configuration, never as the system service. See docs/deploy.md, "Several replicas".
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEMPLATE="$REPO/deploy/nginx.conf.template"
UPLOAD_SOURCE="$REPO/.streamlit/config.toml"
NGINX="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
HEALTH_TIMEOUT_S=90

say() { printf '==> %s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

usage() { sed -n '2,15s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

python_bin() {
    if [[ -x "$REPO/.venv/bin/python" ]]; then
        echo "$REPO/.venv/bin/python"
    else
        command -v python3 || die "no .venv/bin/python and no python3 (./dev.sh run makes .venv)"
    fi
}

# The largest upload the app takes (server.maxUploadSize in .streamlit/config.toml), in MB.
upload_mb() {
    local mb
    mb="$(sed -n 's/^maxUploadSize = \([0-9][0-9]*\).*/\1/p' "$UPLOAD_SOURCE")"
    [[ -n "$mb" ]] || die "no 'maxUploadSize = <number>' in $UPLOAD_SOURCE"
    echo "$mb"
}

healthy() { # healthy PORT: the replica answers /_stcore/health with ok
    [[ "$(curl -s --max-time 2 "http://127.0.0.1:$1/_stcore/health" 2>/dev/null)" == ok ]]
}

# --- stop --------------------------------------------------------------------------------------

stop_pid() { # stop_pid PID: TERM, then KILL after 10 s
    local pid="$1" i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

# Stop nginx and every replica recorded in RUN_DIR, remove their cgroups and the directory.
stop_all() {
    local run="$1" file pid cgroup
    [[ -d "$run" ]] || return 0
    [[ -f "$run/nginx/nginx.pid" ]] && stop_pid "$(<"$run/nginx/nginx.pid")"
    [[ -f "$run/nginx.launcher.pid" ]] && stop_pid "$(<"$run/nginx.launcher.pid")"
    for file in "$run"/replica-*.pid; do
        [[ -f "$file" ]] || continue
        pid="$(<"$file")"
        stop_pid "$pid"
    done
    for file in "$run"/replica-*.cgroup; do
        [[ -f "$file" ]] || continue
        cgroup="$(<"$file")"
        for ((i = 0; i < 50; i++)); do
            rmdir "$cgroup" 2>/dev/null && break
            sleep 0.1
        done
    done
    rm -rf "$run"
}

cmd_stop() {
    local run="${RUN_DIR}"
    [[ -d "$run" ]] || die "no deployment in $run"
    if [[ -f "$run/replicas.pid" ]] && kill -0 "$(<"$run/replicas.pid")" 2>/dev/null; then
        # the foreground script stops everything on TERM, as on Ctrl-C
        local pid
        pid="$(<"$run/replicas.pid")"
        kill -TERM "$pid"
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
    stop_all "$run"
    say "stopped ($run)"
}

# --- start -------------------------------------------------------------------------------------

# A new cgroup-v1 memory cgroup of $2 MiB for the replica on port $1; prints its path.
make_cgroup() {
    local root=/sys/fs/cgroup/memory path
    [[ -w "$root" ]] || die "--memory-mb needs a writable cgroup-v1 memory hierarchy at $root (root)"
    path="$root/relpos-replica-$1-$$"
    mkdir "$path"
    echo $(($2 * 1024 * 1024)) >"$path/memory.limit_in_bytes"
    if [[ -e "$path/memory.memsw.limit_in_bytes" ]]; then # no escape into swap
        echo $(($2 * 1024 * 1024)) >"$path/memory.memsw.limit_in_bytes"
    fi
    echo "$path"
}

start_replica() { # start_replica PORT
    local port="$1" python prefix=()
    python="$(python_bin)"
    if [[ -n "$MEMORY_MB" ]]; then
        local cgroup
        cgroup="$(make_cgroup "$port" "$MEMORY_MB")"
        echo "$cgroup" >"$RUN_DIR/replica-$port.cgroup"
        # the shell joins the cgroup, then becomes the server: in it from its first allocation
        prefix=(bash -c 'echo $$ > "$0" && exec "$@"' "$cgroup/cgroup.procs")
    fi
    # RELPOS_WARM_AT_START: the replica runs every page's default and n = 1024 views once, in the
    # background, from its first script run (explorer/frame/warm.py); 0 in the environment: not
    (cd "$REPO" && RELPOS_WARM_AT_START="${RELPOS_WARM_AT_START:-1}" exec "${prefix[@]}" \
        "$python" -m streamlit run app.py \
        --server.headless true \
        --server.scriptHealthCheckEnabled true \
        --server.port "$port" \
        --server.address 127.0.0.1 \
        --browser.gatherUsageStats false \
        --server.fileWatcherType none \
        >"$RUN_DIR/replica-$port.log" 2>&1) &
    echo $! >"$RUN_DIR/replica-$port.pid"
}

write_nginx_conf() {
    local servers="" port mb
    for port in "${REPLICA_PORTS[@]}"; do
        servers+="        server 127.0.0.1:$port max_fails=1 fail_timeout=10s;"$'\n'
    done
    mb="$(upload_mb)"
    mkdir -p "$RUN_DIR/nginx"
    RUN_DIR="$RUN_DIR" PROXY_PORT="$PORT" UPSTREAM_SERVERS="$servers" UPLOAD_MB="$mb" \
        BODY_MB="$((mb + 1))" envsubst '${RUN_DIR} ${PROXY_PORT} ${UPSTREAM_SERVERS} ${UPLOAD_MB} ${BODY_MB}' \
        <"$TEMPLATE" >"$RUN_DIR/nginx/nginx.conf"
}

cmd_start() {
    local count="$1" port i
    [[ "$count" =~ ^[1-9][0-9]*$ ]] || die "N must be a number of replicas >= 1, got '$count'"
    [[ -x "$NGINX" ]] || die "nginx not found: install it with \`apt-get install -y nginx\` (Debian)"
    command -v curl >/dev/null || die "curl not found (used to wait for each replica's health)"
    if [[ ${#REPLICA_PORTS[@]} -eq 0 ]]; then
        for ((i = 1; i <= count; i++)); do REPLICA_PORTS+=($((PORT + i))); done
    fi
    [[ ${#REPLICA_PORTS[@]} -eq "$count" ]] ||
        die "--replica-ports gives ${#REPLICA_PORTS[@]} ports for $count replicas"

    if [[ -f "$RUN_DIR/replicas.pid" ]] && kill -0 "$(<"$RUN_DIR/replicas.pid")" 2>/dev/null; then
        die "a deployment is already running from $RUN_DIR (deploy/replicas.sh stop --run-dir $RUN_DIR)"
    fi
    stop_all "$RUN_DIR" # leftovers of a run that was killed
    mkdir -p "$RUN_DIR"
    echo $$ >"$RUN_DIR/replicas.pid"
    trap 'stop_all "$RUN_DIR"; say "stopped"; exit 0' INT TERM
    trap 'stop_all "$RUN_DIR"' EXIT

    # One secret for every replica: a cookie one replica signed, another accepts.
    STREAMLIT_SERVER_COOKIE_SECRET="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    export STREAMLIT_SERVER_COOKIE_SECRET

    for port in "${REPLICA_PORTS[@]}"; do
        start_replica "$port"
    done
    unset STREAMLIT_SERVER_COOKIE_SECRET
    local deadline=$((SECONDS + HEALTH_TIMEOUT_S))
    for port in "${REPLICA_PORTS[@]}"; do
        until healthy "$port"; do
            if ! kill -0 "$(<"$RUN_DIR/replica-$port.pid")" 2>/dev/null || ((SECONDS > deadline)); then
                tail -n 20 "$RUN_DIR/replica-$port.log" >&2 || true
                die "replica on port $port did not answer /_stcore/health"
            fi
            sleep 0.25
        done
        # its first script run, before any visitor's: it starts the replica's warm-up
        curl -s --max-time 60 -o /dev/null "http://127.0.0.1:$port/_stcore/script-health-check" || true
        say "replica healthy: http://127.0.0.1:$port"
    done

    write_nginx_conf
    "$NGINX" -t -q -p "$RUN_DIR/nginx/" -c "$RUN_DIR/nginx/nginx.conf" -e "$RUN_DIR/nginx/error.log" ||
        die "nginx refused its configuration ($RUN_DIR/nginx/nginx.conf)"
    "$NGINX" -p "$RUN_DIR/nginx/" -c "$RUN_DIR/nginx/nginx.conf" -e "$RUN_DIR/nginx/error.log" \
        -g 'daemon off;' &
    echo $! >"$RUN_DIR/nginx.launcher.pid"
    until [[ -f "$RUN_DIR/nginx/nginx.pid" ]] && healthy "$PORT"; do
        kill -0 "$(<"$RUN_DIR/nginx.launcher.pid")" 2>/dev/null ||
            die "nginx stopped: $(tail -n 5 "$RUN_DIR/nginx/error.log" 2>/dev/null)"
        sleep 0.1
    done
    echo "http://127.0.0.1:$PORT"
    say "$count replicas behind nginx; Ctrl-C or \`deploy/replicas.sh stop --run-dir $RUN_DIR\` stops them"
    wait "$(<"$RUN_DIR/nginx.launcher.pid")" || true
    die "nginx exited: $(tail -n 5 "$RUN_DIR/nginx/error.log" 2>/dev/null)"
}

# --- command line ------------------------------------------------------------------------------

PORT=8080
REPLICA_PORTS=()
MEMORY_MB=""
RUN_DIR="${TMPDIR:-/tmp}/relpos-replicas-$(id -u)"
COMMAND="${1:-}"
[[ -n "$COMMAND" ]] || {
    usage >&2
    exit 2
}
shift
while [[ $# -gt 0 ]]; do
    case "$1" in
        --port) PORT="$2" && shift 2 ;;
        --replica-ports) IFS=, read -r -a REPLICA_PORTS <<<"$2" && shift 2 ;;
        --memory-mb) MEMORY_MB="$2" && shift 2 ;;
        --run-dir) RUN_DIR="$2" && shift 2 ;;
        *) die "unknown option $1 (deploy/replicas.sh --help)" ;;
    esac
done

RUN_DIR="$(realpath -m "$RUN_DIR")"

case "$COMMAND" in
    stop) cmd_stop ;;
    -h | --help | help) usage ;;
    *) cmd_start "$COMMAND" ;;
esac

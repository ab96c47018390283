#!/usr/bin/env bash
# Set up what is missing, then serve the explorer or run the tests.
#
#   ./dev.sh run [streamlit options]   .venv + requirements.txt, then the app on port 8501
#   ./dev.sh test [pytest options]     .venv + requirements-dev.txt + Debian's Chromium, then pytest
#
# Needs only bash and Python >= 3.11 (PYTHON=python3.12 ./dev.sh ... picks another interpreter).
# The virtual environment is .venv in the repository root. A stamp file in .venv records the
# requirements it was installed from: pip runs again only when a requirements file or the
# interpreter changed. System packages (python3-venv, chromium, nginx) come from apt-get, as root
# or through sudo, and only when missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

PYTHON="${PYTHON:-python3}"
VENV=".venv"
PORT=8501
CHROMIUM="/usr/bin/chromium"

say() { printf '==> %s\n' "$*"; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

# apt-get install PACKAGE...: as root, or through sudo when we are not root.
apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    local root=() how="as root"
    if [[ "$(id -u)" -ne 0 ]]; then
        if ! command -v sudo >/dev/null 2>&1; then
            printf 'not root and no sudo: cannot apt-get install %s\n' "$*" >&2
            return 1
        fi
        root=(sudo) how="via sudo"
    fi
    say "apt-get install $* ($how)"
    "${root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        "${root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

check_python() {
    command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found: install Python >= 3.11"
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        die "$("$PYTHON" --version 2>&1) is too old: Python >= 3.11 is needed (PYTHON=python3.11 ./dev.sh ...)"
}

# A venv that runs and has pip (a failed `python3 -m venv` on Debian leaves one without pip).
venv_works() {
    [[ -x "$VENV/bin/python" && -x "$VENV/bin/pip" ]] && "$VENV/bin/python" -c '' 2>/dev/null
}

ensure_venv() {
    venv_works && return 0
    check_python
    rm -rf "$VENV"
    # Debian and Ubuntu ship venv's pip bootstrap (ensurepip) in a separate package.
    if ! "$PYTHON" -c 'import ensurepip' >/dev/null 2>&1; then
        local version
        version="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
        apt_install "python${version}-venv" ||
            die "$PYTHON cannot create a virtual environment: install python${version}-venv"
    fi
    say "creating $VENV with $("$PYTHON" --version 2>&1)"
    "$PYTHON" -m venv "$VENV"
    venv_works || die "$VENV was created but has no working pip"
}

# What a stamp records: the interpreter and the requirements files it was installed from.
stamp_text() {
    "$VENV/bin/python" --version 2>&1
    local file
    for file in "$@"; do
        printf -- '--- %s\n' "$file"
        cat "$file"
    done
}

stamp_current() { # stamp_current STAMP FILE...
    local stamp="$1"
    shift
    [[ -f "$stamp" && "$(<"$stamp")" == "$(stamp_text "$@")" ]]
}

pip_install() { # pip_install REQUIREMENTS_FILE
    say "installing $1 into $VENV (first run, or a requirements file changed)"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -r "$1"
}

RUNTIME_STAMP="$VENV/.requirements.stamp"
DEV_STAMP="$VENV/.requirements-dev.stamp"
RUNTIME_FILES=(requirements.txt)
DEV_FILES=(requirements.txt requirements-dev.txt)

ensure_runtime() {
    ensure_venv
    if stamp_current "$RUNTIME_STAMP" "${RUNTIME_FILES[@]}" ||
        stamp_current "$DEV_STAMP" "${DEV_FILES[@]}"; then
        return 0
    fi
    pip_install requirements.txt
    stamp_text "${RUNTIME_FILES[@]}" >"$RUNTIME_STAMP"
}

ensure_dev() {
    ensure_venv
    stamp_current "$DEV_STAMP" "${DEV_FILES[@]}" && return 0
    pip_install requirements-dev.txt # it includes requirements.txt
    stamp_text "${DEV_FILES[@]}" >"$DEV_STAMP"
    stamp_text "${RUNTIME_FILES[@]}" >"$RUNTIME_STAMP"
}

# The browser tests drive Debian's Chromium, never a Playwright-downloaded browser.
ensure_chromium() {
    [[ -x "$CHROMIUM" ]] && return 0
    if ! apt_install chromium || [[ ! -x "$CHROMIUM" ]]; then
        printf 'warning: could not install %s; the browser tests will be skipped (or fail under CI)\n' \
            "$CHROMIUM" >&2
    fi
}

# The replicas' browser test (tests/browser/test_replicas_proxy.py) runs Debian's nginx as a
# process of its own (deploy/replicas.sh), never the system service.
ensure_nginx() {
    if command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]]; then
        return 0
    fi
    if ! apt_install nginx || [[ ! -x /usr/sbin/nginx ]]; then
        printf 'warning: could not install nginx; the replicas test will be skipped\n' >&2
    fi
}

cmd_run() {
    ensure_runtime
    # Headless (no browser, no prompt) on a server, in CI or over ssh; on a desktop session in
    # a terminal, open a browser tab too. Options given after `run` come last and win.
    local headless=true
    if [[ -t 1 && (-n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" || "$(uname)" == Darwin) ]]; then
        headless=false
    fi
    say "starting the explorer; Streamlit prints its URL below (Ctrl+C stops it)"
    exec "$VENV/bin/python" -m streamlit run app.py --server.port "$PORT" \
        --server.headless "$headless" --server.showEmailPrompt false "$@"
}

cmd_test() {
    ensure_chromium
    ensure_nginx
    ensure_dev
    say "$("$VENV/bin/python" --version 2>&1), $("$CHROMIUM" --version 2>/dev/null || echo 'no chromium')"
    exec "$VENV/bin/python" -m pytest "$@"
}

usage() {
    sed -n '2,6s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

case "${1:-}" in
    run)
        shift
        cmd_run "$@"
        ;;
    test)
        shift
        cmd_test "$@"
        ;;
    -h | --help | help)
        usage
        ;;
    *)
        usage >&2
        exit 2
        ;;
esac

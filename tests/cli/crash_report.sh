#!/usr/bin/env bash
# A crash says what and where: SIGSEGV delivered to a running sdpa-prof (tracing a sleeping child)
# prints the crash line and the stack, leaves no record folder, and ends by the signal (139).
set -u
tool=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TMPDIR=$work "$tool" trace -- sleep 5 >/dev/null 2>"$work/err" &
pid=$!
# Once the trace's record folder is in TMPDIR, the handlers are in place (a loaded CI machine may
# take seconds to get there).
for _ in $(seq 100); do
  [ -n "$(find "$work" -mindepth 1 -maxdepth 1 -type d)" ] && break
  sleep 0.1
done
kill -SEGV "$pid"
wait "$pid"
rc=$?
fail() { echo "FAIL: $*"; cat "$work/err"; exit 1; }
[ "$rc" = 139 ] || fail "exit code $rc, want 139 (SIGSEGV's default action)"
grep -q "^sdpa-prof: crashed with SIGSEGV (invalid memory access)" "$work/err" || fail "no crash line"
grep -q "please report it with the stack below" "$work/err" || fail "no stack"
left=$(find "$work" -mindepth 1 -not -name err)
[ -z "$left" ] || fail "left behind: $left"
echo "ok: $(grep -c . "$work/err") lines on stderr, exit 139"

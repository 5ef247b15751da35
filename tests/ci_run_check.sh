#!/usr/bin/env bash
# .ci/run must fail when any of its steps fails, and must run every step when none does. It runs
# here on a copy of itself, beside stand-ins for the tools it calls (cmake, ctest, the scripts) that
# log each call and fail where the case says; also checks that .ci/run holds the README's test
# command verbatim.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

readme_command=$(awk '/^Run the tests/ {found = 1} found && /^scripts\/install-deps.sh/ {print; exit}' "$root/README.md")
[ -n "$readme_command" ] || fail "README has no test command under 'Run the tests'"
grep -qxF -- "$readme_command || exit" "$root/.ci/run" || fail ".ci/run does not run the README's test command verbatim, ending in '|| exit'"

# A copy of the tree's shape: .ci/run, and stand-ins it reaches by relative path or on PATH.
mkdir -p "$work/tree/.ci" "$work/tree/scripts" "$work/tree/tests/fuzz" "$work/bin"
cp "$root/.ci/run" "$work/tree/.ci/run"
stand_in() {  # NAME PATH: logs "NAME ARGS", exits 1 when $FAIL_AT matches "NAME ARGS"
  cat >"$2" <<STUB
#!/usr/bin/env bash
call="$1 \$*"
echo "\$call" >>"$work/calls"
case "\$call" in \$FAIL_AT) exit 1;; esac
exit 0
STUB
  chmod +x "$2"
}
stand_in install-deps "$work/tree/scripts/install-deps.sh"
stand_in fuzzers "$work/tree/tests/fuzz/run_fuzzers.sh"
stand_in cmake "$work/bin/cmake"
stand_in ctest "$work/bin/ctest"

run_ci() {  # FAIL_AT pattern; prints the exit code
  rm -f "$work/calls"
  FAIL_AT=$1 PATH="$work/bin:$PATH" "$work/tree/.ci/run" >/dev/null 2>&1
  echo $?
}

code=$(run_ci "no step fails")
[ "$code" = 0 ] || fail "every step passing: .ci/run exited $code"
steps=$(wc -l <"$work/calls")
grep -q "^fuzzers" "$work/calls" || fail "every step passing: the fuzzers did not run"
# The second build is the sanitized one and the one without cuDNN, and its unit and CLI tests run.
asan_dir=$(awk '$1 == "cmake" && / -DSDPA_SANITIZE=ON / && / -DSDPA_WITH_CUDNN=OFF( |$)/ {for (i = 1; i < NF; i++) if ($i == "-B") print $(i + 1)}' "$work/calls")
[ -n "$asan_dir" ] || fail "no build configured with -DSDPA_SANITIZE=ON and -DSDPA_WITH_CUDNN=OFF"
grep -qxF "ctest --test-dir $asan_dir -L unit|cli --output-on-failure" "$work/calls" ||
  fail "the unit and CLI tests do not run in $asan_dir"

# Each step in turn fails: .ci/run must exit non-zero and run nothing after it.
n=0
while IFS= read -r call; do
  n=$((n + 1))
  pattern=$(printf '%s' "$call" | sed 's/[][*?]/\\&/g')
  code=$(run_ci "$pattern")
  [ "$code" != 0 ] || fail "step $n ('$call') failed and .ci/run exited 0"
  ran=$(wc -l <"$work/calls")
  [ "$ran" = "$n" ] || fail "step $n ('$call') failed and .ci/run went on ($ran calls)"
  echo "ok: step $n fails the run: $call"
done < <(FAIL_AT="no step fails" PATH="$work/bin:$PATH" bash -c "rm -f '$work/calls'; '$work/tree/.ci/run' >/dev/null 2>&1; cat '$work/calls'")
[ "$n" = "$steps" ] || fail "checked $n of $steps steps"
echo "ci_run_check: $steps steps, each one's failure fails .ci/run"

#!/usr/bin/env bash
# Usage: colour.sh SDPA_PROF RESULT.json
# Colour on a terminal (a pseudo-terminal from script(1)), none with NO_COLOR set, none when piped.
set -euo pipefail
tool=$1
result=$2
esc=$'\e['
on_a_terminal() { script -qec "$1" /dev/null; }
command -v script >/dev/null || { echo "colour.sh: no script(1) (util-linux); skipped"; exit 77; }

out=$(on_a_terminal "env TERM=xterm COLUMNS=100 $tool report $result")
[[ $out == *"${esc}1;32mcudnn${esc}0m"* ]] || { echo "FAIL: no colour on a terminal"; echo "$out" | head -5; exit 1; }
out=$(on_a_terminal "env TERM=xterm COLUMNS=100 NO_COLOR=1 $tool report $result")
[[ $out != *"$esc"* ]] || { echo "FAIL: colour with NO_COLOR=1"; exit 1; }
out=$(env TERM=xterm COLUMNS=100 "$tool" report "$result" | cat)
[[ $out != *"$esc"* ]] || { echo "FAIL: colour when piped"; exit 1; }
echo "colour on a terminal, none with NO_COLOR, none when piped"

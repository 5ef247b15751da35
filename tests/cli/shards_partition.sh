#!/usr/bin/env bash
# --shard K/N's dry runs, for N = 1..5, hold every case of the whole sweep's dry run exactly once.
set -euo pipefail
tool=$1
sweep=(--backend all --seq 1,17,1000,4097,16384 --dtype bf16,fp16 --head-dim 64,128 --dry-run)
cases() { "$tool" "${sweep[@]}" "$@" | tail -n +2 | sort; }
whole=$(cases)
# A build without cuDNN or flash3 runs 5 backends: 100 cases.
[ "$(wc -l <<<"$whole")" -ge 100 ] || { echo "the sweep has too few cases to test shards: $(wc -l <<<"$whole")"; exit 1; }
for n in 1 2 3 5; do
  parts=$(for k in $(seq 1 $n); do cases --shard "$k/$n"; done | sort)
  if [ "$parts" != "$whole" ]; then
    echo "--shard K/$n: the shards' cases differ from the whole sweep's:"
    diff <(echo "$whole") <(echo "$parts") | head
    exit 1
  fi
  echo "--shard K/$n: $(wc -l <<<"$whole") cases, each in exactly one shard"
done

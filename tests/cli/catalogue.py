#!/usr/bin/env python3
"""The catalogue of hostile and edge inputs: each case runs sdpa-prof and asserts its exit code
and message. No GPU needed (cases that would reach the GPU run with none visible).

Usage: catalogue.py SDPA_PROF DATA_DIR. Prints one line per case and the counts by outcome;
exits 1 if any case ends otherwise than catalogued (a signal, a sanitizer report, a wrong code).
"""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

TOOL, DATA = sys.argv[1], sys.argv[2]
WORK = tempfile.mkdtemp(prefix="sdpa-catalogue-")
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


def path(name):
    return os.path.join(WORK, name)


def write(name, text):
    with open(path(name), "w") as f:
        f.write(text)
    return path(name)


def result_variant(name, mutate):
    """A copy of the committed H200 result with one thing changed."""
    with open(os.path.join(DATA, "result-h200.json")) as f:
        doc = json.load(f)
    mutate(doc)
    return write(name, json.dumps(doc))


def first_case(field, value):
    def mutate(doc):
        target = doc["cases"][0]
        *parents, last = field.split(".")
        for p in parents:
            target = target[p]
        target[last] = value
    return mutate


RESULT = os.path.join(DATA, "result-h200.json")
deep = "[" * 100000 + "]" * 100000
huge_value = '{"seq": "' + "x" * 50_000_000 + '"}'

# (name, class, expected exit code, regex the output must match, argv after the tool, env)
CASES = [
    # Numbers on the command line.
    ("seq-octal-looking", "cli numbers", 0, r"S1024 D64", ["--backend", "naive", "--seq", "01024", "--dry-run"]),
    ("seq-past-int64", "cli numbers", 2, r"--seq: expected a positive integer, got '99999999999999999999'",
     ["--seq", "99999999999999999999", "--dry-run"]),
    ("seq-hex", "cli numbers", 2, r"--seq: expected a positive integer, got '0x10'", ["--seq", "0x10", "--dry-run"]),
    ("seq-trailing-comma", "cli numbers", 0, r"S1024 D64", ["--backend", "naive", "--seq", "1024,", "--dry-run"]),
    ("seq-empty", "cli numbers", 2, r"--seq: expected a positive integer, got", ["--seq=", "--dry-run"]),
    ("seed-negative", "cli numbers", 2, r"--seed: expected an integer from 0 to", ["--seed", "-1", "--dry-run"]),
    ("seed-past-uint64", "cli numbers", 2, r"--seed: expected", ["--seed", "18446744073709551616", "--dry-run"]),
    ("timeout-nan", "cli numbers", 2, r"--timeout: expected a number >= 0, got 'nan'", ["--timeout", "nan", "--dry-run"]),
    ("timeout-inf", "cli numbers", 2, r"--timeout: expected a number >= 0, got 'inf'", ["--timeout", "inf", "--dry-run"]),
    ("max-noise-zero", "cli numbers", 2, r"--max-noise: expected a number > 0", ["--max-noise", "0", "--dry-run"]),
    ("warmup-huge", "cli numbers", 2, r"--warmup: expected an integer from 0 to 1000000", ["--warmup", "2147483648", "--dry-run"]),
    ("threshold-nan", "cli numbers", 2, r"--threshold: expected a number > 0, got 'nan'",
     ["compare", RESULT, RESULT, "--threshold", "nan"]),
    ("threshold-word", "cli numbers", 2, r"--threshold: expected a number > 0, got 'abc'",
     ["compare", RESULT, RESULT, "--threshold", "abc"]),
    ("scale-negative", "cli numbers", 2, r"--scale: expected a number > 0", ["--scale=-1", "--dry-run"]),
    ("long-value-echo", "cli numbers", 2, r"got '1{40}\.\.\.' \(5000 characters\)", ["--seq", "1" * 5000, "--dry-run"]),
    # Sizes whose arithmetic would overflow.
    ("sizes-overflow", "size arithmetic", 2, r"more than 2\^40 elements",
     ["--batch", "65536", "--heads", "65536", "--seq", "4194304", "--head-dim", "256", "--dry-run"]),
    ("scores-overflow", "size arithmetic", 2, r"score matrix would hold more than 2\^56",
     ["--batch", "1", "--heads", "1", "--seq", "1073741824", "--head-dim", "1", "--dry-run"]),
    # Duplicate axis values.
    ("seq-duplicates", "duplicates", 0, r"^(?![\s\S]*S1024[\s\S]*S1024)[\s\S]*naive +B8 H16 S1024 D64", ["--backend", "naive", "--seq", "1024,1024", "--dry-run"]),
    # Hostile presets.
    ("preset-1e400", "json numbers", 2, r"number overflow|expected a positive integer",
     ["--config", write("big.json", '{"seq": 1e400}'), "--dry-run"]),
    ("preset-float-seq", "json types", 2, r'"seq": expected a positive integer, got \'1.5\'',
     ["--config", write("float.json", '{"seq": 1.5}'), "--dry-run"]),
    ("preset-warmup-past-int", "json types", 2, r'"warmup": expected an integer from 0 to 1000000',
     ["--config", write("warm.json", '{"warmup": 4294967296}'), "--dry-run"]),
    ("preset-deep", "json depth", 2, r"nested deeper than 64 levels", ["--config", write("deep.json", deep), "--dry-run"]),
    ("preset-huge-value", "json size", 2, r"huge.json is larger than 1048576 bytes",
     ["--config", write("huge.json", huge_value), "--dry-run"]),
    ("preset-directory", "files", 2, r"--config: cannot read .*: it is a directory", ["--config", WORK, "--dry-run"]),
    ("preset-missing", "files", 2, r"--config: cannot read .*nope\.json: no such file", ["--config", path("nope.json"), "--dry-run"]),
    ("preset-not-object", "json types", 2, r"expected a JSON object", ["--config", write("list.json", "[1]"), "--dry-run"]),
    # Hostile result files.
    ("result-1e999", "json numbers", 2, r"number overflow", ["report", write("r1e999.json", '{"schema": "sdpa-prof/result", "x": 1e999}')]),
    ("result-deep", "json depth", 2, r"nested deeper than 64 levels", ["report", write("rdeep.json", deep)]),
    ("result-negative-time", "result sense", 2, r"median_ms: expected a number from",
     ["report", result_variant("neg.json", first_case("timing.median_ms", -1.0))]),
    ("result-zero-time", "result sense", 2, r"median_ms: expected a number from",
     ["compare", RESULT, result_variant("zero.json", first_case("timing.median_ms", 0))]),
    ("result-batch-zero", "result sense", 2, r'"batch": expected a positive integer',
     ["report", result_variant("b0.json", first_case("problem.batch", 0))]),
    ("result-batch-float", "result sense", 2, r'"batch": expected a positive integer',
     ["report", result_variant("bf.json", first_case("problem.batch", 8.5))]),
    ("result-schema-zero", "result sense", 2, r"schema_version: expected an integer from 1",
     ["report", result_variant("s0.json", lambda d: d.update(schema_version=0))]),
    ("result-skipped-with-timing", "result sense", 2, r"a skipped case carries a timing",
     ["report", result_variant("skt.json", first_case("status", "skipped"))]),
    ("result-duplicate-case", "result sense", 2, r"appears twice",
     ["compare", RESULT, result_variant("dup.json", lambda d: d["cases"].append(copy.deepcopy(d["cases"][0])))]),
    ("result-min-above-median", "result sense", 2, r"need min_ms <= median_ms <= max_ms",
     ["report", result_variant("order.json", first_case("timing.min_ms", 5.0))]),
    ("result-kv-heads-not-dividing", "result sense", 2, r"kv-heads 3 must divide heads 16",
     ["report", result_variant("kv.json", first_case("problem.kv_heads", 3))]),
    ("result-directory", "files", 2, r"it is a directory", ["report", WORK]),
    # compare that compares nothing.
    ("compare-nothing-in-common", "compare", 2, r"nothing to compare",
     ["compare", RESULT, result_variant("other.json", lambda d: [c.update(backend=c["backend"] + "-other") for c in d["cases"]])]),
    ("compare-empty-new", "compare", 2, r"nothing to compare",
     ["compare", RESULT, result_variant("empty.json", lambda d: d.update(cases=[]))]),
    ("compare-allow-empty", "compare", 0, r"0 regressions",
     ["compare", RESULT, result_variant("empty2.json", lambda d: d.update(cases=[])), "--allow-empty"]),
    # Output paths.
    ("json-empty-name", "output paths", 2, r"--json: expected a file name, got ''", ["--json", "", "--dry-run"]),
    ("same-file-twice", "output paths", 2, r"--json and --csv name the same file",
     ["--json", path("x"), "--csv", path("x"), "--seq", "64", "--backend", "naive"]),
    ("json-over-compare-input", "output paths", 2, r"--json .* would overwrite an input",
     ["compare", RESULT, result_variant("in.json", lambda d: None), "--json", path("in.json")]),
    ("json-over-config", "output paths", 2, r"--json .* would overwrite an input",
     ["--config", write("cfg.json", '{"seq": 64}'), "--json", path("cfg.json"), "--seq", "64"]),
    ("json-long-name", "output paths", 2, r"cannot write .*(too long|Invalid)", ["--json", path("n" * 300), "--seq", "64"]),
    ("json-symlink-loop", "output paths", 2, r"cannot write",
     ["--json", path("loop-a"), "--seq", "64"]),
    ("dry-run-with-json", "output paths", 2, r"--dry-run measures nothing", ["--dry-run", "--json", path("d.json")]),
    # Backends.
    ("backend-unknown", "backends", 2, r"unknown backend 'nope'", ["--backend", "nope", "--dry-run"]),
    ("backend-variant-unknown", "backends", 2, r"only \"all\" is known", ["--backend", "cudnn:eng9", "--dry-run"]),
    ("no-gpu", "gpu", 3, r"no CUDA GPU is present", ["--backend", "naive", "--seq", "64"], NO_GPU),
]


def main():
    os.symlink(path("loop-b"), path("loop-a"))
    os.symlink(path("loop-a"), path("loop-b"))
    counts = {}
    failures = 0
    for case in CASES:
        name, kind, want_code, regex, argv = case[:5]
        env = dict(os.environ)
        env.update(NO_GPU)
        env.update(case[5] if len(case) > 5 else {})
        proc = subprocess.run([TOOL, *argv], capture_output=True, text=True, env=env, timeout=120)
        output = proc.stdout + proc.stderr
        problems = []
        if proc.returncode < 0:
            problems.append(f"ended by signal {-proc.returncode}")
        elif proc.returncode != want_code:
            problems.append(f"exit {proc.returncode}, expected {want_code}")
        if re.search(r"runtime error:|AddressSanitizer|terminate called", output):
            problems.append("sanitizer report or terminate")
        if not re.search(regex, output):
            problems.append(f"output does not match /{regex}/")
        if len(output) > 100_000:
            problems.append(f"{len(output)} characters of output")
        outcome = "ok" if want_code == 0 else f"exit {want_code}"
        if problems:
            failures += 1
            outcome = "WRONG"
            print(f"FAIL {name} ({kind}): {'; '.join(problems)}\n  {output[:400]}")
        else:
            print(f"ok   {name} ({kind}): exit {proc.returncode}: {output.strip().splitlines()[-1][:120] if output.strip() else ''}")
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"catalogue: {len(CASES)} cases, by outcome: {counts}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The catalogue of hostile and edge inputs: each case runs sdpa-prof and asserts its exit code
and message. No GPU needed (cases that would reach the GPU run with none visible).

Usage: catalogue.py SDPA_PROF DATA_DIR. Prints one line per case and the counts by outcome;
exits 1 if any case ends otherwise than catalogued (a signal, a sanitizer report, a wrong code, a
hang, a control character in the output, a trace folder or temporary left behind, a file the case
says must survive changed).

A case is (name, class, exit code, output regex, argv after the tool[, env[, options]]); argv that
starts with "sh" runs as it is, with $TOOL naming the tool. Options: "check", a function of the
output returning what is wrong or None; "seconds", the most the case may take; "max_output", the
most characters it may print (100,000 unless said).
"""
import hashlib
import signal
import stat
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

TOOL, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
WORK = tempfile.mkdtemp(prefix="sdpa-catalogue-")
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


def path(name):
    return os.path.join(WORK, name)


def write(name, text):
    with open(path(name), "w") as f:
        f.write(text)
    return path(name)


def result_variant(name, mutate, base="result-h200.json"):
    """A copy of a committed H200 result with one thing changed."""
    with open(os.path.join(DATA, base)) as f:
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
TMP = os.path.join(WORK, "tmp")  # TMPDIR of every case: trace's record folders land here
os.mkdir(TMP)


def fifo(name):
    os.mkfifo(path(name))
    return path(name)


def digest(file):
    with open(file, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def unchanged(file):
    """A check that `file` is as it was when the catalogue was built."""
    before = digest(file)
    return lambda output: None if os.path.exists(file) and digest(file) == before else f"{file} was changed"


def records_with_kernel_name(name, pid):
    """The synthetic record file of a traced process, every kernel renamed, as the pid's file."""
    lines = []
    with open(os.path.join(DATA, "trace-synthetic.records")) as f:
        for line in f:
            doc = json.loads(line)
            if "schema" in doc:
                doc["pid"] = pid
            if "kernel" in doc:
                doc["kernel"]["name"] = name
            lines.append(json.dumps(doc))
    return write(f"{pid}.records", "\n".join(lines) + "\n")


def copy_into_trace_dir(source, name, *flags):
    return ["trace", *flags, "--", "sh", "-c", f'cp {source} "$SDPA_PROF_TRACE_DIR/{name}"']


def no_control_characters(output):
    found = re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", output)
    return f"control character {found.group()!r} in the output" if found else None


def file_lacks(file, pattern):
    def check(output):
        with open(file, encoding="utf-8", errors="replace") as f:
            text = f.read()
        return f"{file} matches /{pattern}/" if re.search(pattern, text, re.M) else None
    return check


def file_matches(file, pattern):
    def check(output):
        if not os.path.exists(file):
            return f"{file} was not written"
        with open(file, encoding="utf-8", errors="replace") as f:
            text = f.read()
        return None if re.search(pattern, text, re.M) else f"{file} does not match /{pattern}/"
    return check


def is_char_device(file):
    return lambda output: None if stat.S_ISCHR(os.stat(file).st_mode) else f"{file} is no longer a device"


def null_device():
    """A null device of our own where this user may make one (root), else /dev/null itself."""
    try:
        os.mknod(path("null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return path("null")
    except OSError:
        return "/dev/null"


NULL_DEVICE = null_device()
HOSTILE_TEXT = "\x1b]0;owned\x07\x1b[2J\rforged row\n### 0 regressions <img src=x onerror=alert(1)> | x"
LONG_KERNEL = "void ns::" + "k" * 27_000 + "<int>(float const*)"  # the regex recursed once per character
MEGABYTE_KERNEL = "k" * 1_000_000
TORCH_NAIVE = "sdpa-prof/torch:naive/B8_H16_S1024_D64_bf16_causal"
TIMED_AND_SKIPPED = {"schema": "sdpa-prof/program-results", "schema_version": 1, "source": "t", "cases": [
    {"range": TORCH_NAIVE, "status": "ok", "samples_ms": [1.0, 1.1, 1.2]},
    {"range": TORCH_NAIVE, "status": "skipped", "reason": "refused"}]}
VICTIM = write("victim.txt", "precious")
VICTIM_UNCHANGED = unchanged(VICTIM)
HUGE_SWEEP = ",".join(str(64 * (i + 1)) for i in range(1000))


def hostile_strings(doc):
    doc["cases"][0]["backend"] = HOSTILE_TEXT
    doc["cases"][1]["backend"] = "=HYPERLINK(\"http://x\",\"y\")"
    doc["cases"][2]["backend"] = "-2+3+cmd|' /C calc'!A0"
    doc["cases"][0]["reason"] = "@SUM(1)\rnext"
    doc["environment"]["device"]["name"] = HOSTILE_TEXT
    doc["environment"]["command_line"] = HOSTILE_TEXT
deep = "[" * 100000 + "]" * 100000
huge_value = '{"seq": "' + "x" * 50_000_000 + '"}'

# (name, class, expected exit code, regex the output must match, argv after the tool, env)
CASES = [
    # Numbers on the command line.
    ("seq-octal-looking", "cli numbers", 0, r"S1024 D64", ["--backend", "naive", "--seq", "01024", "--dry-run"]),
    ("seq-past-int64", "cli numbers", 2, r"--seq: expected a positive integer, got '99999999999999999999'",
     ["--seq", "99999999999999999999", "--dry-run"]),
    ("seq-hex", "cli numbers", 2, r"--seq: expected a positive integer, got '0x10'", ["--seq", "0x10", "--dry-run"]),
    ("seq-trailing-comma", "cli numbers", 2, r"--seq: expected a comma-separated list of values with no empty item, got '1024,'",
     ["--backend", "naive", "--seq", "1024,", "--dry-run"]),
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

    # Issue 28, class 1: long names are shortened in linear time, without recursion.
    ("trace-kernel-name-27k", "long names", 0, r"process 4243: 22 kernels",
     copy_into_trace_dir(records_with_kernel_name(LONG_KERNEL, 4243), "4243.records", "--kernels", "--timeline", path("long.trace.json")),
     {}, {"seconds": 20, "check": file_matches(path("long.trace.json"), r"kkkk")}),
    ("trace-kernel-name-1mb", "long names", 0, r"process 4244: 22 kernels",
     copy_into_trace_dir(records_with_kernel_name(MEGABYTE_KERNEL, 4244), "4244.records", "--kernels"),
     {}, {"seconds": 30}),
    # The summary's sentences name the backend whole, wrapped: a megabyte of output, by design.
    ("report-backend-1mb", "long names", 0, r"median",
     ["report", result_variant("long-backend.json", first_case("backend", "b" * 1_000_000))], {},
     {"seconds": 20, "max_output": 3_000_000}),
    # Class 2: FIFOs and devices are refused at once, never opened for a blocking read.
    ("preset-fifo", "fifo", 2, r"cannot read .*: it is a FIFO, not a regular file", ["--config", fifo("preset.fifo"), "--dry-run"],
     {}, {"seconds": 10}),
    ("report-fifo", "fifo", 2, r"it is a FIFO, not a regular file", ["report", fifo("report.fifo")], {}, {"seconds": 10}),
    ("report-device", "fifo", 2, r"it is a device, not a regular file", ["report", "/dev/zero"], {}, {"seconds": 10}),
    ("compare-fifo", "fifo", 2, r"it is a FIFO", ["compare", RESULT, fifo("compare.fifo")], {}, {"seconds": 10}),
    ("trace-fifo-records", "fifo", 0, r"partial: .*5\.records: it is a FIFO",
     ["trace", "--", "sh", "-c", 'mkfifo "$SDPA_PROF_TRACE_DIR/5.records"'], {}, {"seconds": 10}),
    ("trace-fifo-results", "fifo", 0, r"results the command handed over are left out: .*it is a FIFO",
     ["trace", "--", "sh", "-c", 'mkfifo "$SDPA_PROF_RESULTS"'], {}, {"seconds": 10}),
    ("html-to-fifo", "fifo", 2, r"cannot write .*: it is a FIFO that no process reads",
     ["report", RESULT, "--html", fifo("out.fifo")], {}, {"seconds": 10}),
    ("html-to-stdout-pipe", "fifo", 0, r"<!DOCTYPE html>", ["report", RESULT, "--quiet", "--html", "/dev/stdout"], {},
     {"seconds": 10, "max_output": 1_000_000}),
    # Class 3: the old predictable temporary (NAME.tmp-PID) planted as a link to a victim: the
    # victim survives, and the output is written.
    ("planted-temporary-link", "temporaries", 0, r"wrote ",
     ["sh", "-c", f'cd {WORK} && ln -s {VICTIM} planted.html.tmp-$$ && exec "$TOOL" report {RESULT} --html planted.html'],
     {}, {"check": lambda out: VICTIM_UNCHANGED(out) or file_matches(path("planted.html"), "<html")(out)}),
    ("long-legal-name", "temporaries", 0, r"wrote ", ["report", RESULT, "--html", path("n" * 250)]),
    # Class 4: no file destroyed, whatever the spelling.
    ("html-over-report-input", "destroyed files", 2, r"--html .* would overwrite an input",
     ["report", result_variant("own.json", lambda d: None), "--html", path("own.json")], {}, {"check": unchanged(path("own.json"))}),
    ("json-and-dot-slash-same-file", "destroyed files", 2, r"--json and --csv name the same file",
     ["sh", "-c", f'cd {WORK} && exec "$TOOL" --json same.out --csv ./same.out --seq 64 --backend naive']),
    ("json-and-absolute-same-file", "destroyed files", 2, r"--json and --md name the same file",
     ["sh", "-c", f'cd {WORK} && exec "$TOOL" --json abs.out --md "$PWD/abs.out" --seq 64 --backend naive']),
    ("md-through-link-to-input", "destroyed files", 2, r"--md .* would overwrite an input",
     ["sh", "-c", f'cd {WORK} && cp {RESULT} linked-in.json && ln -sf linked-in.json link-to-in.json && exec "$TOOL" compare {RESULT} linked-in.json --md link-to-in.json']),
    ("stdout-full", "destroyed files", 2, r"cannot write the standard output: No space left on device",
     ["sh", "-c", f'exec "$TOOL" report {RESULT} > /dev/full']),
    ("json-to-device", "destroyed files", 0, r"wrote .*null",
     ["trace", "--json", NULL_DEVICE, "--", "true"], {}, {"check": is_char_device(NULL_DEVICE)}),
    # Class 5: what a result file says reaches the terminal, Markdown and CSV escaped.
    ("hostile-strings-table", "injection", 0, r"\\x1b\]0;owned\\x07", ["report", result_variant("hostile.json", hostile_strings)]),
    ("hostile-strings-markdown", "injection", 0, r"\\x1b\]0;owned\\x07.*&lt;img",
     ["report", path("hostile.json"), "--format", "md"], {}, {"check": lambda out: "forged" if re.search(r"^### 0|<img", out, re.M) else None}),
    ("hostile-strings-csv", "injection", 0, r"(?m)^\"'=HYPERLINK\(\"\"http://x\"\",\"\"y\"\"\)\",[\s\S]*^\"'-2\+3\+cmd",
     ["report", path("hostile.json"), "--format", "csv"]),
    ("hostile-strings-compare-md", "injection", 0, r"0 regressions",
     ["compare", path("hostile.json"), path("hostile.json"), "--md", path("hostile.md")], {},
     {"check": file_lacks(path("hostile.md"), r"^### 0 regressions|<img|\x1b")}),
    ("hostile-strings-kernels", "injection", 0, r"\\x1b",
     ["report", result_variant("hostile-kernels.json", lambda d: (hostile_strings(d), [
         k.update(name=HOSTILE_TEXT, full_name=HOSTILE_TEXT) for c in d["cases"] for k in (c.get("profile") or {}).get("kernels", [])]),
                               "result-h200-profile.json"),
      "--kernels"]),
    # Class 6: silent acceptance and wrong codes.
    ("seq-double-comma", "inputs", 2, r"--seq: expected a comma-separated list of values with no empty item, got '1024,,2048'",
     ["--seq", "1024,,2048", "--dry-run"]),
    ("backend-double-comma", "inputs", 2, r"--backend: expected a comma-separated list of backends with no empty item",
     ["--backend", "naive,,flash", "--dry-run"]),
    ("config-empty-name", "inputs", 2, r"--config: expected a file name, got ''", ["--config", "", "--dry-run"]),
    ("html-empty-name-run", "inputs", 2, r"--html: expected a file name, got ''", ["--html", "", "--seq", "64"]),
    ("html-empty-name-report", "inputs", 2, r"--html: expected a file name, got ''", ["report", RESULT, "--html", ""]),
    ("html-empty-name-compare", "inputs", 2, r"--html: expected a file name, got ''", ["compare", RESULT, RESULT, "--html", ""]),
    ("preset-duplicate-key", "inputs", 2, r'dup-key.json: the key \'seq\' is given twice',
     ["--config", write("dup-key.json", '{"seq": 1024, "seq": 2048}'), "--dry-run"]),
    ("result-config-unknown-key", "inputs", 0, r"naive-inplace",
     ["report", result_variant("future-config.json", lambda d: d["config"].update(future_setting=[1, 2]))]),
    ("sweep-too-large", "inputs", 2, r"the sweep has [0-9]+ cases, more than the 100000 run at once",
     ["--seq", HUGE_SWEEP, "--batch", HUGE_SWEEP, "--dry-run"], {}, {"seconds": 20}),
    ("memcpy-per-forward-zero", "inputs", 0, r"0\.0 MiB per copy",
     ["report", result_variant("zero-copies.json", lambda d: [m.update(per_forward=0) for c in d["cases"]
                                                               for m in (c.get("profile") or {}).get("memcpys", [])],
                                       "result-h200-profile.json"), "--kernels"],
     {}, {"check": lambda out: "inf printed" if re.search(r"\binf MiB", out) else None}),
    ("trace-sighup-forwarded", "trace", 129, r"exit 129", ["trace", "--", "sh", "-c", "kill -HUP $PPID; sleep 5"], {}, {"seconds": 10}),
    ("trace-bad-name-in-folder", "trace", 0, r"x\.records' in the record folder is not a record file",
     ["trace", "--", "sh", "-c", 'echo junk > "$SDPA_PROF_TRACE_DIR/x.records"']),
    # A program's results with a case both timed and skipped: trace writes nothing report refuses.
    ("trace-writes-what-report-reads", "trace", 0, r"torch:naive",
     ["sh", "-c", f'"$TOOL" trace --json {path("traced.json")} -- sh -c \'cp {DATA}/trace-synthetic.records "$SDPA_PROF_TRACE_DIR/4242.records"; '
                  f'cp {write("timed-and-skipped.json", json.dumps(TIMED_AND_SKIPPED))} "$SDPA_PROF_RESULTS"\' '
                  f'&& exec "$TOOL" report {path("traced.json")}']),
]


def run_case(argv, env, seconds):
    """The case's exit code (negative: a signal, None: a hang) and its output."""
    command = argv if argv[0] == "sh" else [TOOL, *argv]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            cwd=WORK, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=seconds)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        code = None
    return code, output.decode("utf-8", errors="replace")


def main():
    os.symlink(path("loop-b"), path("loop-a"))
    os.symlink(path("loop-a"), path("loop-b"))
    counts = {}
    failures = 0
    for case in CASES:
        name, kind, want_code, regex, argv = case[:5]
        env = dict(os.environ)
        env.update(NO_GPU)
        env.update({"TOOL": TOOL, "TMPDIR": TMP})
        env.update(case[5] if len(case) > 5 else {})
        options = case[6] if len(case) > 6 else {}
        code, output = run_case(argv, env, options.get("seconds", 120))
        problems = []
        if code is None:
            problems.append(f"still running after {options.get('seconds', 120)} s")
        elif code < 0:
            problems.append(f"ended by signal {-code}")
        elif code != want_code:
            problems.append(f"exit {code}, expected {want_code}")
        if re.search(r"runtime error:|AddressSanitizer|terminate called", output):
            problems.append("sanitizer report or terminate")
        if not re.search(regex, output):
            problems.append(f"output does not match /{regex}/")
        if len(output) > options.get("max_output", 100_000):
            problems.append(f"{len(output)} characters of output")
        if (why := no_control_characters(output)) is not None:
            problems.append(why)
        if "check" in options and (why := options["check"](output)) is not None:
            problems.append(why)
        if left := os.listdir(TMP):
            problems.append(f"left behind in TMPDIR: {left}")
            for entry in left:
                subprocess.run(["rm", "-rf", os.path.join(TMP, entry)])
        if left := [e for e in os.listdir(WORK) if e.startswith(".sdpa-prof-")]:
            problems.append(f"temporaries left behind: {left}")
        outcome = "ok" if want_code == 0 else f"exit {want_code}"
        if problems:
            failures += 1
            outcome = "WRONG"
            print(f"FAIL {name} ({kind}): {'; '.join(problems)}\n  {output[:400]!r}")
        else:
            print(f"ok   {name} ({kind}): exit {code}: {output.strip().splitlines()[-1][:120] if output.strip() else ''}")
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"catalogue: {len(CASES)} cases, by outcome: {counts}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks a timeline (Chrome trace-event JSON, as `sdpa-prof run --timeline` writes it) against
the trace-event format, with the standard library only.

Usage: timeline_check.py FILE [--kernels N | --report RUN.json] [--truncated | --complete]

Checks: the document is UTF-8 JSON with a `traceEvents` list and `otherData.truncated`; every
event has the fields its phase requires (X: name, ts, dur, pid, tid; i: name, ts, pid, tid, s;
M: a known name and its args; s/f: id, cat, name, ts, pid, tid), numeric ts and dur >= 0 and
integer pid/tid; slices on one track nest (Perfetto drops ones that overlap partly); every
track with events is named by metadata; every flow id has one start and one end, the start
inside a slice of its track and the end ("bp":"e") inside one of its own, no earlier than the
start. With --report (the --json of the same run), the kernel slices must number what the
profile passes of its cases attributed to their forwards (at least that, where the run traced
PyTorch's rows, whose processes' every record is in the timeline). Prints a one-line summary; exits 1
with the problems found."""
import argparse
import collections
import json
import sys

METADATA = {"process_name": "name", "thread_name": "name", "process_sort_index": "sort_index",
            "thread_sort_index": "sort_index"}


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class Checker:
    def __init__(self):
        self.problems = []
        self.slices = collections.defaultdict(list)  # (pid, tid) -> [(start, end, name)]
        self.flows = collections.defaultdict(dict)  # id -> {"s": event, "f": event}
        self.named_processes, self.named_threads = set(), set()
        self.used_tracks = set()
        self.counts = collections.Counter()

    def problem(self, index, text):
        if len(self.problems) < 50:
            self.problems.append(f"event {index}: {text}")

    def require(self, index, event, fields):
        missing = [f for f in fields if f not in event]
        if missing:
            self.problem(index, f"ph {event.get('ph')!r} lacks {', '.join(missing)}")
        return not missing

    def track(self, index, event):
        if not (is_int(event["pid"]) and is_int(event["tid"])):
            self.problem(index, "pid and tid must be integers")
            return None
        return (event["pid"], event["tid"])

    def time(self, index, event, field):
        v = event[field]
        if not is_number(v) or v < 0:
            self.problem(index, f"{field} must be a number >= 0, not {v!r}")
            return None
        return v

    def check_event(self, index, e):
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            self.problem(index, "not an object with a string ph")
            return
        ph = e["ph"]
        self.counts[ph] += 1
        if ph == "M":
            if not self.require(index, e, ["name", "pid", "args"]):
                return
            key = METADATA.get(e["name"])
            if key is None:
                self.problem(index, f"unknown metadata {e['name']!r}")
                return
            value = e["args"].get(key) if isinstance(e["args"], dict) else None
            if (key == "name" and not isinstance(value, str)) or (key == "sort_index" and not is_int(value)):
                self.problem(index, f"{e['name']} needs args.{key}")
            if e["name"].startswith("thread_"):
                if self.require(index, e, ["tid"]):
                    self.named_threads.add((e["pid"], e["tid"]))
            elif e["name"] == "process_name":
                self.named_processes.add(e["pid"])
            return
        if ph == "X":
            if not self.require(index, e, ["name", "ts", "dur", "pid", "tid"]):
                return
            track, ts, dur = self.track(index, e), self.time(index, e, "ts"), self.time(index, e, "dur")
            if not isinstance(e["name"], str):
                self.problem(index, "name must be a string")
            if track is not None and ts is not None and dur is not None:
                self.slices[track].append((ts, ts + dur, e["name"]))
                self.used_tracks.add(track)
            if e.get("cat") == "kernel":
                self.counts["kernel"] += 1
            return
        if ph == "i":
            if self.require(index, e, ["name", "ts", "pid", "tid", "s"]):
                if e["s"] not in ("g", "p", "t"):
                    self.problem(index, f"instant scope {e['s']!r}")
                self.time(index, e, "ts")
                if (track := self.track(index, e)) is not None:
                    self.used_tracks.add(track)
            return
        if ph in ("s", "f"):
            if not self.require(index, e, ["id", "cat", "name", "ts", "pid", "tid"]):
                return
            self.time(index, e, "ts")
            self.track(index, e)
            if ph == "f" and e.get("bp") != "e":
                self.problem(index, "a flow end must bind to its enclosing slice (\"bp\":\"e\")")
            if ph in self.flows[e["id"]]:
                self.problem(index, f"flow id {e['id']} has two {ph!r} events")
            self.flows[e["id"]][ph] = (index, e)
            return
        self.problem(index, f"unexpected ph {ph!r}")

    def enclosed(self, e):
        track = (e["pid"], e["tid"])
        return any(start <= e["ts"] <= end for start, end, _ in self.slices.get(track, []))

    def finish(self):
        for track, slices in self.slices.items():
            open_ends = []
            for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
                while open_ends and open_ends[-1] <= start:
                    open_ends.pop()
                if open_ends and end > open_ends[-1] + 5e-4:  # half a nanosecond: the decimals of ts + dur
                    self.problems.append(f"track {track}: slice {name!r} at {start} overlaps its parent partly")
                    break
                open_ends.append(end)
        for pid, tid in sorted(self.used_tracks):
            if pid not in self.named_processes:
                self.problems.append(f"pid {pid} has events but no process_name")
            if (pid, tid) not in self.named_threads:
                self.problems.append(f"track ({pid}, {tid}) has events but no thread_name")
        for flow_id, ends in self.flows.items():
            if set(ends) != {"s", "f"}:
                self.problems.append(f"flow id {flow_id} has only {''.join(sorted(ends))!r}")
                continue
            (_, s), (_, f) = ends["s"], ends["f"]
            if (s["cat"], s["name"]) != (f["cat"], f["name"]):
                self.problems.append(f"flow id {flow_id}: start and end differ in cat or name")
            if f["ts"] < s["ts"]:
                self.problems.append(f"flow id {flow_id} ends before it starts")
            if not self.enclosed(s):
                self.problems.append(f"flow id {flow_id} starts outside any slice of its track")
            if not self.enclosed(f):
                self.problems.append(f"flow id {flow_id} ends outside any slice of its track")


def report_kernels(path):
    """Kernels in the profile passes of a run's JSON (for `trace`, all its processes recorded), the
    records left unattributed, and whether PyTorch's rows were traced (`run --with-torch`)."""
    with open(path, "rb") as f:
        report = json.loads(f.read().decode("utf-8"))
    trace = report.get("trace")
    if isinstance(trace, dict):  # `trace`: every kernel each traced process recorded
        return sum(p.get("kernels", 0) for p in trace.get("processes", [])), 0, False
    total, unattributed, traced_rows = 0, 0, False
    for case in report.get("cases", []):
        profile = case.get("profile") or {}
        total += sum(f.get("kernels", 0) for f in profile.get("forwards", []))
        unattributed += profile.get("unattributed_records", 0)
        # `run --with-torch`: the timeline holds every record of the traced script (its warm-ups
        # and timed samples too), the report only the forwards of its case ranges.
        traced_rows |= case.get("source", "sdpa-prof") != "sdpa-prof"
    return total, unattributed, traced_rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    expected = parser.add_mutually_exclusive_group()
    expected.add_argument("--kernels", type=int, help="the number of kernel slices expected")
    expected.add_argument("--report", help="a run's JSON: as many kernel slices as its profile passes attributed (trace: as its processes recorded)")
    state = parser.add_mutually_exclusive_group()
    state.add_argument("--truncated", action="store_true", help="expect otherData.truncated to be true")
    state.add_argument("--complete", action="store_true", help="expect otherData.truncated to be false")
    args = parser.parse_args()
    try:
        with open(args.file, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        print(f"timeline_check: {args.file}: {e}")
        return 1
    problems = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print(f"timeline_check: {args.file}: no traceEvents list")
        return 1
    truncated = doc.get("otherData", {}).get("truncated") if isinstance(doc.get("otherData"), dict) else None
    if not isinstance(truncated, bool):
        problems.append("otherData.truncated is missing or not a boolean")
    elif args.truncated and not truncated:
        problems.append("expected a truncated document")
    elif args.complete and truncated:
        problems.append("expected a complete document, it says truncated")
    checker = Checker()
    for index, event in enumerate(doc["traceEvents"]):
        checker.check_event(index, event)
    checker.finish()
    problems += checker.problems
    if args.kernels is not None and checker.counts["kernel"] != args.kernels:
        problems.append(f"{checker.counts['kernel']} kernel slices, expected {args.kernels}")
    if args.report is not None:
        try:
            want, unattributed, traced_rows = report_kernels(args.report)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError, TypeError) as e:
            problems.append(f"--report {args.report}: {e}")
        else:
            got = checker.counts["kernel"]
            if got < want or (unattributed == 0 and not traced_rows and got != want):
                problems.append(f"{got} kernel slices, the report's profile passes have {want}"
                                f" (+{unattributed} unattributed records)")
    for p in problems:
        print(f"timeline_check: {args.file}: {p}")
    c = checker.counts
    print(f"timeline_check: {args.file}: {len(doc['traceEvents'])} events ({c['X']} slices, {c['kernel']} kernels, "
          f"{c['s']} flows, {c['M']} metadata), truncated {truncated}: {'ok' if not problems else 'FAILED'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Compare two runs of CPython's regression tests (python3 -m test --junit-xml), one outside the
sandbox and one inside, test id by test id and module by module.

  regrtest-compare.py OUT_XML OUT_LOG IN_XML IN_LOG KNOWN [--unexpected FILE] [--json FILE]

OUT_LOG/IN_LOG are regrtest's own output (module lines "[ 3/20] test_os passed"). KNOWN lists the
known differences: one "TEST_ID  reason" a line ('#' comments; TEST_ID may be an fnmatch pattern;
module-level differences are named "module:test_x"). Prints the totals of each side and every
difference; exits 1 if a test that passes outside does not pass inside (or a module that passes
outside does not inside, with no test-level difference to explain it: a crash, a skipped module)
and that is not a known difference, 0 otherwise. --unexpected writes those test ids, one
a line, to FILE (for a re-run that tells flaky tests from real differences).
"""
import fnmatch
import json
import re
import sys
import xml.etree.ElementTree as ET


def load_xml(path):
    """test id -> (status, message); status is pass, skip, fail or error."""
    res = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"cannot read {path}: {e}")
        return None
    for tc in root.iter("testcase"):
        name = tc.get("name", "?")
        status, msg = "pass", ""
        for child in tc:
            if child.tag in ("skipped", "failure", "error"):
                status = {"skipped": "skip", "failure": "fail", "error": "error"}[child.tag]
                msg = (child.get("message") or child.text or "").strip()
                break
        # a test id seen twice (re-run): the last result counts
        res[name] = (status, msg.splitlines()[0][:300] if msg else "")
    return res


PROGRESS = re.compile(r"\[\s*\d+/\d+(?:/\d+)?\]\s+(test_\w+)")
HEADER = re.compile(r"^(?:All )?(\d+) tests? (.*?)[:.]$")
# regrtest's closing summary: "N tests failed:" followed by indented module names, and so on
CATEGORIES = [
    ("skipped (resource denied)", "resource-denied"),
    ("altered the execution environment", "env-changed"),
    ("failed again", "failed"),
    ("failed", "failed"),
    ("skipped", "skipped"),
    ("run no tests", "no-tests"),
    ("crashed", "crashed"),
    ("timed out", "timed-out"),
    ("omitted", "omitted"),
    ("interrupted", "interrupted"),
]


def load_log(path):
    """module -> result (passed, failed, skipped, env-changed, resource-denied, no-tests, ...), from
    the progress lines ("[ 3/20] test_os") and regrtest's closing summary; works with and without -j."""
    mods = {}
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        print(f"cannot read {path}: {e}")
        return {}
    lines = text.splitlines()
    for line in lines:
        m = PROGRESS.search(line)
        if m:
            mods.setdefault(m.group(1), "passed")
    # the summary starts after the last "== Tests result" line
    start = max((n for n, line in enumerate(lines) if line.startswith("== Tests result")), default=None)
    if start is None:
        # no summary: the run did not finish; nothing is known to have passed
        return {m: "unfinished" for m in mods}
    category = None
    for line in lines[start + 1:]:
        h = HEADER.match(line)
        if h:
            what = h.group(2)
            category = None
            if not what.startswith("OK"):
                for text_, cat in CATEGORIES:
                    if what.startswith(text_):
                        category = cat
                        break
                else:
                    category = what.split()[0]
            continue
        if category and line.startswith("    "):
            for mod in line.split():
                if mod.startswith("test_"):
                    mods[mod] = category
        elif not line.strip():
            continue
        else:
            category = None
    return mods


def load_known(path):
    known = []
    try:
        for line in open(path):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 1)
            if parts[0].startswith("task:"):  # the tasks' own differences, checked by the caller
                continue
            known.append((parts[0], parts[1] if len(parts) > 1 else ""))
    except OSError as e:
        print(f"cannot read {path}: {e}")
    return known


def known_reason(known, tid):
    for pat, reason in known:
        if tid == pat or fnmatch.fnmatchcase(tid, pat):
            return pat, reason or "(no reason given)"
    return None, None


def totals(res):
    t = {"pass": 0, "skip": 0, "fail": 0, "error": 0}
    for st, _ in res.values():
        t[st] += 1
    t["total"] = len(res)
    return t


def main(argv):
    args, opts = [], {}
    it = iter(argv)
    for a in it:
        if a in ("--unexpected", "--json"):
            opts[a] = next(it)
        else:
            args.append(a)
    if len(args) != 5:
        print(__doc__)
        return 2
    out_xml, out_log, in_xml, in_log, known_path = args
    out, inn = load_xml(out_xml), load_xml(in_xml)
    if out is None or inn is None:
        return 1
    out_mods, in_mods = load_log(out_log), load_log(in_log)
    known = load_known(known_path)
    to, ti = totals(out), totals(inn)
    print("outside: {total} tests: {pass} passed, {skip} skipped, {fail} failed, {error} errors".format(**to))
    print("inside:  {total} tests: {pass} passed, {skip} skipped, {fail} failed, {error} errors".format(**ti))
    for side, mods in (("outside", out_mods), ("inside", in_mods)):
        c = {}
        for st in mods.values():
            c[st] = c.get(st, 0) + 1
        print(f"{side} modules: " + ", ".join(f"{n} {st}" for st, n in sorted(c.items())))

    unexpected, known_seen, other = [], set(), []
    diffs = []
    for mod in sorted(set(out_mods) | set(in_mods)):
        o, i = out_mods.get(mod, "missing"), in_mods.get(mod, "missing")
        if o != i:
            diffs.append((f"module:{mod}", o, i, ""))
    for tid in sorted(set(out) | set(inn)):
        o, om = out.get(tid, ("missing", ""))
        i, im = inn.get(tid, ("missing", ""))
        if o != i:
            diffs.append((tid, o, i, im or om))
    result = {"outside": to, "inside": ti, "outside_modules": out_mods, "inside_modules": in_mods,
              "differences": []}
    # modules with a test-level difference: their module result follows from it
    test_diff_mods = {tid.split(".")[1] for tid, _, _, _ in diffs if not tid.startswith("module:") and "." in tid}
    for tid, o, i, msg in diffs:
        if tid.startswith("module:"):
            regression = o == "passed" and tid[len("module:"):] not in test_diff_mods
        else:
            regression = o == "pass" and i != "pass"
        pat, reason = known_reason(known, tid)
        if pat:
            known_seen.add(pat)
            tag = f"known: {reason}"
        elif regression:
            unexpected.append(tid)
            tag = "UNEXPECTED"
        else:
            other.append(tid)
            tag = "not a regression"
        print(f"DIFF {tid}: outside={o} inside={i}" + (f" ({msg})" if msg else "") + f" [{tag}]")
        result["differences"].append({"id": tid, "outside": o, "inside": i, "message": msg,
                                      "known": bool(pat), "regression": regression})
    for pat, reason in known:
        if pat not in known_seen:
            print(f"NOTE known difference did not show up this time: {pat}")
    print(f"{len(diffs)} difference(s): {len(unexpected)} unexpected, {len(known_seen)} known pattern(s) matched, "
          f"{len(other)} not regressions")
    if "--unexpected" in opts:
        with open(opts["--unexpected"], "w") as f:
            for tid in unexpected:
                f.write(tid + "\n")
    if "--json" in opts:
        with open(opts["--json"], "w") as f:
            json.dump(result, f, indent=1)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

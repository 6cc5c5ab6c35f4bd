#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The man pages say what the code does (no root needed).

    check-drift.py --sbxctl BUILD/sbxctl/sbxctl --source-root SRC --page PAGE... [--self-test]

Compares the generated pages (roff) with what they describe:
  sbxctl(1)       every option and command of `sbxctl --help` is documented, and nothing else; every
                  exit status of the help text and of src/shared/exit-codes.h is listed
  sbx-profile(5)  every key the parser knows (the JsonDocField tables of src/profile/profile.c, each
                  mapped to its place in the document) is documented in KEYS, and every key documented there
                  is one the parser knows. tests/man/every_key.json holds every key once: the real
                  parser must accept it (`sbxctl profile check`) and its keys must be exactly the
                  ones read from the source, which keeps the source reading honest
  sbxd(8)         every method and signal of the D-Bus vtable (sbxd/bus-manager.c) and every error name
                  is documented, every journal MESSAGE_ID of src/shared/message-ids.h is listed, and
                  every field of sbxd's journal events (and of the generator's, in sbx-generator(8))
                  is documented
  sbx-mcp(1)      every option of its table (mcp/sbx-mcp.c) is documented in OPTIONS, and nothing else
  all pages       every environment variable the program reads (getenv) is in ENVIRONMENT

A key, option or method is "documented" when it starts the tag of a definition (.TP) in the named
section, as the pages' markdown sources write them: **files.read_only** (...), **Run**(...).

--self-test checks the checker: it changes one input at a time (an extra option in the help text, a
new key in the parser, a new D-Bus method, ...) and fails unless each change is reported.

Exit status: 0 no drift, 1 drift (each finding on its own line), 77 the pages were not built (no
--page; $SBX_MAN_SKIP says why).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# getenv() names that are not for users: set by systemd for the program, or internal to sbx
ENV_IGNORED = {"JOURNAL_STREAM", "SBX_PROFILE_DIGEST", "USER"}

# Which object of the profile document each key table of src/profile/profile.c (a static const
# JsonDocField array, one { "key", ... } row per key) describes, by the table's name. "[]" marks the
# elements of an array. A new table makes the check fail until it is added here.
KEY_TABLES = {
    "profile_fields": [""],
    "files_fields": ["files"],
    "process_fields": ["process"],
    "syscalls_fields": ["process.syscalls"],
    "syscall_rule_fields": ["process.syscall_rules[]"],
    "network_fields": ["network"],
    "destination_fields": ["network.destinations[]"],
    "resources_fields": ["resources"],
    "aggregate_fields": ["aggregate"],
    "lifetime_fields": ["lifetime"],
    "cache_fields": ["lifetime.caches[]"],
    "pool_fields": ["pool"],
    "credentials_fields": ["credentials"],
    "environment_fields": ["environment"],
    "grant_fields": ["credentials.grants.*"],
    "export_fields": ["export"],
    "request_fields": ["request"],
    "dataset_fields": ["request.dataset"],
    "request_memory_fields": ["request.memory"],
    "request_tasks_fields": ["request.tasks"],
    "request_wall_time_fields": ["request.wall_time"],
    "request_cpu_fields": ["request.cpu"],
}


# ---- roff ---------------------------------------------------------------------------------------

def roff_text(s):
    """roff input text -> plain text (the escapes pandoc writes)."""
    s = re.sub(r"\\f(\[[A-Z]*\]|[A-Z])", "", s)
    named = {"ti": "~", "rs": "\\", "aq": "'", "dq": '"', "at": "@", "ha": "^", "em": "--", "en": "-",
             "lq": '"', "rq": '"', "cq": "'", "oq": "'", "bu": "*", "->": "->"}
    s = re.sub(r"\\\[u([0-9A-F]{4,6})\]", lambda m: chr(int(m.group(1), 16)), s)
    s = re.sub(r"\\\[([^\]]+)\]", lambda m: named.get(m.group(1), "?"), s)
    s = re.sub(r"\\\(([a-z]{2})", lambda m: named.get(m.group(1), "?"), s)
    return s.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")


class Page:
    """A man page: per section (.SH), the tags of its definitions and its plain text."""

    def __init__(self, name, roff):
        self.name = name
        self.tags = {}       # section -> [(plain tag, first bold word or None)]
        self.text = {}       # section -> plain text
        section = ""
        lines = roff.splitlines()
        for i, line in enumerate(lines):
            if line.startswith(".SH "):
                section = line[4:].strip().strip('"')
                continue
            if line.startswith(".TP") and i + 1 < len(lines):
                tag = lines[i + 1]
                m = re.match(r"\\f\[B\](.*?)\\f\[[RI]?\]", tag)
                self.tags.setdefault(section, []).append((roff_text(tag), roff_text(m.group(1)) if m else None))
            if not line.startswith((".", "'")):
                self.text[section] = self.text.get(section, "") + roff_text(line) + "\n"

    def section_tags(self, section):
        if section not in self.tags:
            raise KeyError(f"{self.name}: no definitions in section {section}")
        return self.tags[section]

    def all_text(self):
        return "\n".join(self.text.values())


# ---- the code -----------------------------------------------------------------------------------

def c_functions(source):
    """(function name, body) of each top-level function definition."""
    out = []
    starts = [(m.start(), m.group(1)) for m in
              re.finditer(r"^(?:static\s+)?[A-Za-z_][\w \*]*?\b(\w+)\([^;{]*\)\s*\{", source, re.M)]
    for k, (pos, name) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(source)
        out.append((name, source[pos:end]))
    return out


def profile_keys_from_source(source, errors):
    """Every key path of the profile parser, e.g. "files.read_only", "process.syscall_rules[].arg"."""
    paths, found = set(), set()
    if re.search(r"\(const JsonDocField\[\]\)", source):
        errors.append("profile.c: a key table written in place, (const JsonDocField[]) { ... }: make it a static "
                      "const JsonDocField array, so that its keys can be read here")
    for m in re.finditer(r"^static const JsonDocField (\w+)\[\]\s*=\s*\{(.*?)^\};", source, re.S | re.M):
        table, body = m.group(1), m.group(2)
        found.add(table)
        # one row per line start: { "key", ... }; the comments between rows are not rows
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        keys = re.findall(r'^\s*\{\s*"([^"]*)"', body, re.M)
        if not keys or not re.search(r"\{\s*\},?\s*$", body):
            errors.append(f"profile.c: key table {table} is not a list of {{ \"key\", ... }} rows ended by {{}}")
            continue
        where = KEY_TABLES.get(table)
        if where is None:
            errors.append(f"profile.c: key table {table} is not known to tests/man/check-drift.py: "
                          f"add it to KEY_TABLES with the object it describes, and document its keys in sbx-profile(5)")
            continue
        for prefix in where:
            for key in keys:
                paths.add(f"{prefix}.{key}" if prefix else key)
    for table in sorted(set(KEY_TABLES) - found):
        errors.append(f"profile.c: the key table {table} is gone: update KEY_TABLES in tests/man/check-drift.py")
    return paths


# Objects whose keys are names the document chooses (a grant's name), written "*" in key paths.
NAMED_MAPS = {"credentials.grants"}


def json_key_paths(value, prefix=""):
    paths = set()
    if isinstance(value, dict):
        for k, v in value.items():
            p = f"{prefix}.{k}" if prefix else k
            if prefix in NAMED_MAPS:
                p = f"{prefix}.*"
            else:
                paths.add(p)
            paths |= json_key_paths(v, p)
    elif isinstance(value, list):
        for v in value:
            paths |= json_key_paths(v, prefix + "[]")
    return paths


def help_options(help_text):
    longs = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", help_text))
    shorts = set(re.findall(r"(?<![\w-])(-[a-zA-Z])\b", help_text))
    return longs | shorts


def help_commands(help_text):
    m = re.search(r"^Commands:\n(.*?)\n\n", help_text, re.M | re.S)
    if not m:
        return None
    cmds = set()
    for line in m.group(1).splitlines():
        words = line.split()
        if words:
            cmds.add(" ".join(words[:2]) if words[0] == "profile" else words[0])
    return cmds


def help_exit_codes(help_text):
    m = re.search(r"^Exit status.*?(?:\n\n|\Z)", help_text, re.M | re.S)
    return set(re.findall(r"\b(1[0-9]{2}|2[0-5][0-9])\b", m.group(0))) if m else None


def getenv_names(sources):
    names = set()
    for text in sources:
        names |= set(re.findall(r'\bgetenv\("([A-Z_][A-Z0-9_]*)"\)', text))
    return names - ENV_IGNORED


# ---- the checks ---------------------------------------------------------------------------------

def check(inp):
    """inp: dict with help, sources (relative path -> text), pages (name -> Page), fixture (text),
    fixture_ok (bool, str). Returns the list of findings."""
    errors = []
    src = inp["sources"]
    pages = inp["pages"]

    def tags(page, section):
        try:
            return pages[page].section_tags(section)
        except KeyError as e:
            errors.append(str(e.args[0]))
            return []

    def options_documented(page, want, source):
        """the options of source (want) are those of the page's OPTIONS, both ways"""
        have = set()
        for tag, _ in tags(page, "OPTIONS"):
            have |= help_options(tag)
        name = page.replace(".", "(") + ")"
        for opt in sorted(want - have):
            errors.append(f"{name}: option {opt} of {source} is not documented in OPTIONS")
        for opt in sorted(have - want):
            errors.append(f"{name}: option {opt} is documented in OPTIONS but {source} does not know it")

    # sbxctl(1): options, commands, exit statuses
    helpt = inp["help"]
    want = help_options(helpt)
    if not want or "--help" not in want:
        errors.append("sbxctl --help: found no options in it")
    options_documented("sbxctl.1", want, "sbxctl --help")

    cmds = help_commands(helpt)
    if not cmds:
        errors.append("sbxctl --help: found no Commands: section in it")
    else:
        doc = set()
        for tag, _ in tags("sbxctl.1", "COMMANDS"):
            words = tag.split()
            doc.add(" ".join(words[:2]) if words and words[0] == "profile" else (words[0] if words else ""))
        for c in sorted(cmds - doc):
            errors.append(f"sbxctl(1): command '{c}' of sbxctl --help is not documented in COMMANDS")
        for c in sorted(doc - cmds):
            errors.append(f"sbxctl(1): command '{c}' is documented in COMMANDS but sbxctl --help does not list it")

    codes = set(re.findall(r"#define SBX_EXIT_\w+\s+(\d+)", src["src/shared/exit-codes.h"]))
    from_help = help_exit_codes(helpt)
    if not codes:
        errors.append("exit-codes.h: found no SBX_EXIT_ codes in it")
    if not from_help:
        errors.append("sbxctl --help: found no exit statuses in it")
    listed = set()
    for tag, _ in tags("sbxctl.1", "EXIT STATUS"):
        listed |= set(re.findall(r"\b\d+\b", tag))
    for c in sorted(codes | (from_help or set())):
        if c not in listed:
            errors.append(f"sbxctl(1): exit status {c} is not listed in EXIT STATUS")

    # sbx-mcp(1): the options of its table (mcp/sbx-mcp.c), which also makes its --help
    m = re.search(r"^static const Option options\[\]\s*=\s*\{(.*?)^\};", src["mcp/sbx-mcp.c"], re.S | re.M)
    table = set()
    for name, short in re.findall(r'^\s*\{ "([a-z][a-z0-9-]*)",\s*(0|\'[a-zA-Z]\')', m.group(1) if m else "", re.M):
        table.add("--" + name)
        if short != "0":
            table.add("-" + short.strip("'"))
    if not table:
        errors.append("mcp/sbx-mcp.c: found no options table in it")
    options_documented("sbx-mcp.1", table, "mcp/sbx-mcp.c")

    # sbx-profile(5): the profile keys, three ways
    # a grant's keys are grant.c's table grant_fields (its other tables are the broker's wire formats)
    # and the export section's are export-policy.c's table export_fields
    m = re.search(r"^static const JsonDocField grant_fields\[\]\s*=\s*\{.*?^\};", src["src/grant/grant.c"], re.S | re.M)
    if not m:
        errors.append("grant.c: the key table grant_fields is gone: update tests/man/check-drift.py")
    me = re.search(r"^static const JsonDocField export_fields\[\]\s*=\s*\{.*?^\};", src["src/export-policy/export-policy.c"],
                   re.S | re.M)
    if not me:
        errors.append("export-policy.c: the key table export_fields is gone: update tests/man/check-drift.py")
    source_keys = profile_keys_from_source(src["src/profile/profile.c"] + "\n" + (m.group(0) if m else "") + "\n" +
                                           (me.group(0) if me else ""), errors)
    top = {k for k in source_keys if "." not in k}
    if len(top) < 5 or "version" not in top:
        errors.append(f"profile.c: the top-level keys read from it look wrong: {sorted(top)}")
    ok, why = inp["fixture_ok"]
    if not ok:
        errors.append(f"tests/man/every_key.json: the parser refuses it, so a key the pages describe may be gone: {why}")
    try:
        fixture_keys = json_key_paths(json.loads(inp["fixture"]))
    except ValueError as e:
        errors.append(f"tests/man/every_key.json: not JSON: {e}")
        fixture_keys = set()
    # keys that exclude others (a base image has no host paths, caches or pool): a profile of their own
    for name, (text, (ok, why)) in inp.get("fixture_extra", {}).items():
        if not ok:
            errors.append(f"tests/man/{name}: the parser refuses it: {why}")
        try:
            fixture_keys |= json_key_paths(json.loads(text))
        except ValueError as e:
            errors.append(f"tests/man/{name}: not JSON: {e}")
    for k in sorted(source_keys - fixture_keys):
        errors.append(f"tests/man/every_key.json: key {k} of the parser is missing (add it, with a valid value)")
    for k in sorted(fixture_keys - source_keys):
        errors.append(f"tests/man/every_key.json: key {k} is accepted by the parser but was not found in profile.c's "
                      f"key tables: update KEY_TABLES in tests/man/check-drift.py")
    documented = {word for _, word in tags("sbx-profile.5", "KEYS") if word}
    for k in sorted(source_keys):
        if k not in documented and not any(d.startswith(k + ".") or d.startswith(k + "[].") for d in documented):
            errors.append(f"sbx-profile(5): key {k} of the parser is not documented in KEYS "
                          f"(as a definition **{k}** in man/sbx-profile.5.md)")
    for d in sorted(documented - source_keys):
        errors.append(f"sbx-profile(5): KEYS documents {d}, which the parser does not know")

    # sbxd(8): D-Bus interface, errors, journal message ids
    vtable = src["sbxd/bus-manager.c"]
    manager = src["sbxd/manager.c"] + src["sbxd/run.c"] + vtable
    member_re = r"SD_BUS_(?:METHOD|SIGNAL|PROPERTY)(?:_WITH_ARGS|_WITH_NAMES)?\(\s*\"(\w+)\""
    # the manager's vtable, and those of the objects of runs and sandboxes
    members = {x: "sbxd/bus-manager.c" for x in re.findall(member_re, vtable)}
    if not members:
        errors.append("sbxd/bus-manager.c: found no D-Bus methods in it")
    for x in re.findall(member_re, src.get("sbxd/objects.c", "")):
        members.setdefault(x, "sbxd/objects.c")
    doc_members = set()
    for tag, word in tags("sbxd.8", "D-BUS INTERFACE"):
        m = re.match(r"(\w+)\(", tag)
        if m:
            doc_members.add(m.group(1))
        elif word and re.fullmatch(r"[A-Z]\w+", word):
            doc_members.add(word)  # a property: **Name** TYPE
    for x in sorted(set(members) - doc_members):
        errors.append(f"sbxd(8): D-Bus member {x} of {members[x]} is not documented in D-BUS INTERFACE")
    for x in sorted(doc_members - set(members)):
        errors.append(f"sbxd(8): D-BUS INTERFACE documents {x}, which sbxd/bus-manager.c and sbxd/objects.c do not have")
    for e in sorted(set(re.findall(r'"(org\.sbx\.Error\.\w+)"', manager + src.get("sbxd/bus-errors.h", "")))):
        if e not in pages["sbxd.8"].text.get("D-BUS INTERFACE", ""):
            errors.append(f"sbxd(8): D-Bus error {e} is not documented in D-BUS INTERFACE")
    ids_h = src.get("src/shared/message-ids.h")
    if ids_h is not None:
        ids = set(re.findall(r'#define SBX_MESSAGE_\w+\s+"([0-9a-f]{32})"', ids_h))
        listed = {word for _, word in tags("sbxd.8", "LOGGING") if word and re.fullmatch(r"[0-9a-f]{32}", word)}
        for i in sorted(ids - listed):
            errors.append(f"sbxd(8): journal MESSAGE_ID {i} of src/shared/message-ids.h is not listed in LOGGING")
        for i in sorted(listed - ids):
            errors.append(f"sbxd(8): LOGGING lists MESSAGE_ID {i}, which src/shared/message-ids.h does not define")

    # the fields of the journal events: sbxd's (LOG_FIELDS) and the generator's (the native-protocol
    # entry gen_profile_invalid() writes)
    fields = {
        "sbxd.8": set(re.findall(r'\{\s*"(SBX_[A-Z0-9_]+)"\s*,', manager + src.get("sbxd/network.c", ""))),  # LogField initializers
        "sbx-generator.8": {k for span in re.findall(r"\nstatic void gen_profile_invalid\(.*?\n}\n",
                                                      src["generator/sbx-generator.c"], re.S)
                            for k in re.findall(r'(?:"|\\n)(SBX_[A-Z0-9_]+)=', span)},
    }
    if not fields["sbxd.8"] and "log_event(" in manager:
        errors.append("sbxd/manager.c: found no journal fields in its LOG_FIELDS()")
    for page, names in fields.items():
        text = pages[page].all_text()
        for n in sorted(names):
            if n + "=" not in text:
                errors.append(f"{page.replace('.', '(')}): journal field {n}= is logged but not documented")

    # every page: the environment its program reads
    readers = {
        "sbxctl.1": ["sbxctl/front.c", "sbxctl/run-direct.c", "sbxctl/basics.c", "sbxctl/sbxctl.c", "sbxctl/common.c", "sbxctl/run.c", "src/profile/profile-load.c", "src/shared/log.c"],
        "sbxd.8": ["sbxd/sbxd.c", "sbxd/manager.c", "sbxd/bus-manager.c", "sbxd/sandbox.c", "sbxd/network.c", "sbxd/store.c", "src/profile/profile-load.c",
                   "src/shared/log.c"],
        "sbx-generator.8": ["generator/sbx-generator.c", "src/profile/profile-load.c"],
    }
    for page, files in readers.items():
        names = getenv_names(src[f] for f in files if f in src)
        doc = {roff_text(t).strip() for t, _ in tags(page, "ENVIRONMENT")}
        for n in sorted(names - doc):
            errors.append(f"{page.replace('.', '(')}): environment variable {n} is read but not in ENVIRONMENT")
    return errors


# ---- inputs ---------------------------------------------------------------------------------------

SOURCES = ["src/shared/exit-codes.h", "src/profile/profile.c", "src/grant/grant.c", "src/export-policy/export-policy.c", "sbxd/manager.c", "sbxd/run.c", "sbxd/bus-manager.c", "sbxd/bus-errors.h", "sbxd/sandbox.c",
           "sbxd/objects.c",
           "sbxd/network.c", "sbxd/sbxd.c", "sbxd/store.c",
           "src/profile/profile-load.c", "src/shared/log.c", "sbxctl/sbxctl.c", "sbxctl/common.c", "sbxctl/run.c", "generator/sbx-generator.c",
           "src/shared/message-ids.h", "mcp/sbx-mcp.c"]
OPTIONAL = {"src/shared/message-ids.h"}
PAGES = ["sbxctl.1", "sbx-profile.5", "sbxd.8", "sbx-generator.8", "sbx-mcp.1"]


def profile_check(sbxctl, path):
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sbxctl, "profile", "check", path], capture_output=True, text=True,
                           env=dict(os.environ, SBX_PROFILES_PATH=d, LC_ALL="C"))
    return p.returncode == 0, (p.stderr or p.stdout).strip()


def load(args):
    run = subprocess.run([args.sbxctl, "--help"], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    if run.returncode != 0:
        sys.exit(f"FAIL: {args.sbxctl} --help exited with {run.returncode}: {run.stderr}")
    sources = {}
    for rel in SOURCES:
        path = os.path.join(args.source_root, rel)
        if not os.path.exists(path) and rel in OPTIONAL:
            continue
        with open(path, encoding="utf-8") as f:
            sources[rel] = f.read()
    pages = {}
    for p in args.page:
        with open(p, encoding="utf-8") as f:
            pages[os.path.basename(p)] = Page(os.path.basename(p), f.read())
    missing = [p for p in PAGES if p not in pages]
    if missing:
        sys.exit(f"FAIL: pages not given: {', '.join(missing)}")
    fixture = os.path.join(args.source_root, "tests/man/every_key.json")
    with open(fixture, encoding="utf-8") as f:
        fixture_text = f.read()
    extra = {}
    for name in ["every_key_image.json"]:
        path = os.path.join(args.source_root, "tests/man", name)
        with open(path, encoding="utf-8") as f:
            extra[name] = (f.read(), profile_check(args.sbxctl, path))
    return {"help": run.stdout, "sources": sources, "pages": pages, "fixture": fixture_text,
            "fixture_ok": profile_check(args.sbxctl, fixture), "fixture_extra": extra}


def self_test(inp):
    """Each change must add a finding that names it."""
    def changed(key, fn):
        new = dict(inp)
        new[key] = fn(inp[key])
        return new

    def src(rel, fn):
        return changed("sources", lambda s: dict(s, **{rel: fn(s[rel])}))

    def page(name, fn):
        return changed("pages", lambda p: dict(p, **{name: fn(p[name])}))

    def drop_tag(section, start):
        def fn(pg):
            q = Page(pg.name, "")
            q.text = pg.text
            q.tags = {s: [t for t in ts if not (s == section and t[0].startswith(start))] for s, ts in pg.tags.items()}
            return q
        return fn

    cases = [
        ("an option only in --help", "--frobnicate",
         changed("help", lambda h: h.replace("Other options:\n", "Other options:\n     --frobnicate       Frobnicate\n"))),
        ("an option gone from --help", "--dataset",
         changed("help", lambda h: h.replace("--dataset=DIR", "-X"))),
        ("a command only in --help", "profile frob",
         changed("help", lambda h: h.replace("Commands:\n", "Commands:\n  profile frob  Frobnicate\n"))),
        ("a new exit code", "121",
         src("src/shared/exit-codes.h", lambda s: s + "#define SBX_EXIT_FROB 121\n")),
        ("a new top-level key", "frobnicate",
         src("src/profile/profile.c", lambda s: s.replace('        { "version", ', '        { "frobnicate", NULL },\n        { "version", ', 1))),
        ("a new nested key", "resources.frob",
         src("src/profile/profile.c", lambda s: s.replace('        { "output", ', '        { "frob", NULL },\n        { "output", ', 1))),
        ("a new key table", "frob_fields",
         src("src/profile/profile.c", lambda s: s + '\nstatic const JsonDocField frob_fields[] = {\n        { "a", NULL },\n        {}\n};\n')),
        ("a key table renamed", "destination_fields",
         src("src/profile/profile.c", lambda s: s.replace("JsonDocField destination_fields[]", "JsonDocField dest_fields[]", 1))),
        ("a key table written in place", "written in place",
         src("src/profile/profile.c", lambda s: s + '\nstatic int frob(void) {\n        return f((const JsonDocField[]) { { "a", NULL }, {} });\n}\n')),
        ("a key documented but gone from the parser", "files.hidden",
         src("src/profile/profile.c", lambda s: re.sub(r'\n *\{ "hidden", [^\n]*', "", s, count=1))),
        ("a key gone from the page", "process.syscall_rules[].bits",
         page("sbx-profile.5", drop_tag("KEYS", "process.syscall_rules[].bits"))),
        ("a fixture the parser refuses", "every_key.json",
         changed("fixture_ok", lambda _: (False, "every_key.json: frob: unknown key"))),
        ("a new D-Bus method", "Frobnicate",
         src("sbxd/bus-manager.c", lambda s: s.replace("SD_BUS_VTABLE_START(0),", 'SD_BUS_VTABLE_START(0),\n        SD_BUS_METHOD_WITH_ARGS("Frobnicate", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, f, 0),', 1))),
        ("a new D-Bus error", "org.sbx.Error.Frob",
         src("sbxd/manager.c", lambda s: s + '\n#define ERR_FROB "org.sbx.Error.Frob"\n')),
        ("a new journal field of sbxd", "SBX_FROB_FIELD",
         src("sbxd/manager.c", lambda s: s.replace('LOG_FIELDS({ "SBX_RUN_ID", run->id }', 'LOG_FIELDS({ "SBX_FROB_FIELD", x }, { "SBX_RUN_ID", run->id }', 1))),
        ("a new journal field of the generator", "SBX_FROB_GEN",
         src("generator/sbx-generator.c", lambda s: s.replace('"SBX_ERROR=%s\\n"', '"SBX_ERROR=%s\\nSBX_FROB_GEN=%s\\n"', 1))),
        ("an sbx-mcp option only in its table", "--frob-max",
         src("mcp/sbx-mcp.c", lambda s: s.replace('        { "keep-sandboxes", ', '        { "frob-max", 0, "N", f, "" },\n        { "keep-sandboxes", ', 1))),
        ("an sbx-mcp option gone from its page", "--tasks-max",
         page("sbx-mcp.1", drop_tag("OPTIONS", "--tasks-max"))),
        ("a new environment variable", "SBX_FROB",
         src("generator/sbx-generator.c", lambda s: s + '\nstatic const char *frob(void) { return getenv("SBX_FROB"); }\n')),
    ]
    if "src/shared/message-ids.h" in inp["sources"]:
        cases.append(("a new journal message id", "0123456789abcdef0123456789abcdef",
                      src("src/shared/message-ids.h", lambda s: s + '#define SBX_MESSAGE_FROB "0123456789abcdef0123456789abcdef"\n')))

    base = set(check(inp))
    failed = 0
    for what, needle, mutated in cases:
        new = [e for e in check(mutated) if e not in base]
        if any(needle in e for e in new):
            print(f"ok: {what} is reported: {next(e for e in new if needle in e)}")
        else:
            print(f"FAIL: {what} ({needle}) is not reported; new findings: {new}")
            failed = 1
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sbxctl", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--page", action="append", default=[])
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()

    if not args.page:
        print(f"SKIP: the man pages were not built: {os.environ.get('SBX_MAN_SKIP', 'no --page given')}")
        return 77
    if not os.access(args.sbxctl, os.X_OK):
        print(f"FAIL: {args.sbxctl} is not built")
        return 1
    inp = load(args)
    if args.self_test:
        return self_test(inp)
    errors = check(inp)
    for e in errors:
        print(f"FAIL: {e}")
    if not errors:
        print(f"ok: {', '.join(sorted(inp['pages']))} match sbxctl --help, the profile parser, the D-Bus "
              f"interface, the exit codes, the message ids and the environment")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

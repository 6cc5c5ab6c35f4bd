#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/shape/check-shape.py - keeps the tree's shape (docs/design.md, "How the code is laid out"):
#   - no include circle: a module (a .c and its .h) never reaches itself again through "#include";
#   - no function longer than MAX_LINES lines, but those listed in LONG with the reason they are long.
# It reads the C sources of the folders in DIRS as text. Before the tree, it checks itself on a small
# tree of its own that has a circle and a long function (a check that cannot fail proves nothing).
# usage: check-shape.py SOURCE_ROOT [--report]   (--report: the figures, always exit 0)
import os
import re
import sys
import tempfile

DIRS = ['src', 'sbxd', 'sbxctl', 'mcp', 'helper', 'broker', 'export', 'generator']
MAX_LINES = 150
# function -> why it may be longer (keep this short: a long function is a place to split)
LONG = {
}


def sources(root):
    out = []
    for d in DIRS:
        for dp, _, fn in os.walk(os.path.join(root, d)):
            for f in fn:
                if f.endswith(('.c', '.h')) and '.bpf.' not in f and '.skel.' not in f:
                    out.append(os.path.relpath(os.path.join(dp, f), root))
    return sorted(out)


def module(path):
    return os.path.splitext(path)[0]


def include_graph(root, files):
    """module -> modules it includes ("x.h" resolved next to the file first, then by name)."""
    byname = {}
    for p in files:
        byname.setdefault(os.path.basename(p), []).append(p)
    edges = {}
    for p in files:
        with open(os.path.join(root, p), errors='replace') as f:
            for line in f:
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                near = os.path.normpath(os.path.join(os.path.dirname(p), m.group(1)))
                if near in files:
                    target = near
                else:
                    cands = byname.get(os.path.basename(m.group(1)), [])
                    if len(cands) != 1:
                        continue   # a generated header, or a system one in quotes
                    target = cands[0]
                if module(target) != module(p):
                    edges.setdefault(module(p), set()).add(module(target))
    return edges


def circles(edges):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    nodes = sorted(set(edges) | {w for ws in edges.values() for w in ws})
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


HEAD = re.compile(r'^[A-Za-z_].*\)\s*\{\s*$')


def functions(root, files):
    """(lines, path, name) of each function defined at the top level (the body's braces at column 0
    close it: the tree's style)."""
    out = []
    for p in files:
        if not p.endswith('.c'):
            continue
        with open(os.path.join(root, p), errors='replace') as f:
            lines = f.read().split('\n')
        start = name = None
        for i, line in enumerate(lines):
            if start is None and HEAD.match(line) and '=' not in line.split('(')[0]:
                sig, k = line, i
                while '(' not in sig.split('{')[0] and k > 0:
                    k -= 1
                    sig = lines[k] + sig
                m = re.search(r'(\w+)\s*\(', sig)
                if m and m.group(1) not in ('if', 'for', 'while', 'switch'):
                    start, name = i, m.group(1)
            elif start is not None and line.startswith('}'):
                out.append((i - start + 1, p, name))
                start = None
    return sorted(out, reverse=True)


def check(root, report=False):
    files = sources(root)
    problems = []
    for c in circles(include_graph(root, files)):
        problems.append('include circle of %d modules (each reaches the others): %s' % (len(c), ', '.join(c)))
    funcs = functions(root, files)
    for n, p, name in funcs:
        if n > MAX_LINES and name not in LONG:
            problems.append('%s: %s() is %d lines (more than %d; split it, or say why in LONG)'
                            % (p, name, n, MAX_LINES))
    if report:
        print('modules: %d, functions: %d, longest:' % (len({module(p) for p in files}), len(funcs)))
        for n, p, name in funcs[:10]:
            print('  %4d %s %s()' % (n, p, name))
    return problems, len(funcs)


def self_test():
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, 'src', 'a'))
        os.makedirs(os.path.join(t, 'sbxd'))
        w = lambda p, s: open(os.path.join(t, p), 'w').write(s)
        w('src/a/x.h', '#include "y.h"\n')
        w('src/a/y.h', '#pragma once\n')
        w('src/a/y.c', '#include "z.h"\n')
        w('sbxd/z.h', '#pragma once\n')
        w('sbxd/z.c', '#include "z.h"\n#include "x.h"\nint f(void) {\n' + '        f();\n' * MAX_LINES + '}\n')
        problems, n = check(t)
        want = ['include circle of 3 modules', 'sbxd/z.c: f() is %d lines' % (MAX_LINES + 2)]
        for wnt in want:
            if not any(p.startswith(wnt) for p in problems):
                print('self-test: expected a problem starting %r, got %r' % (wnt, problems))
                return False
        return n == 1


def main():
    root = sys.argv[1]
    if not self_test():
        return 1
    problems, n = check(root, report='--report' in sys.argv)
    if n < 100:
        print('read only %d functions under %s: the wrong folder?' % (n, root))
        return 1
    for p in problems:
        print(p)
    if '--report' in sys.argv:
        return 0
    print('%d problems in %d functions' % (len(problems), n))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

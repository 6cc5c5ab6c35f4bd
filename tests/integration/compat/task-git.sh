#!/usr/bin/env bash
# git: init, commit, branch, merge (a real merge commit), tag, log, a conflict, stash, a local clone
# and a push back, fsck; all in a fresh repository with no network and no identity configured (given
# with -c).
. "$(dirname "$0")/lib-task.sh"
command -v git >/dev/null || fail "git not installed"
g() { git -c user.name="Compat Test" -c user.email=compat@example.invalid -c init.defaultBranch=main \
        -c advice.detachedHead=false "$@"; }

step "init and first commit"
run g init -q repo
cd repo || fail "cd repo"
printf 'line 1\nline 2\nline 3\n' > a.txt
mkdir -p sub && echo "#!/bin/sh" > sub/run.sh && chmod +x sub/run.sh
run g add -A
run g commit -q -m "first"
step "a branch with a change, a change on main, merge"
run g checkout -q -b feature
echo "line 4 (feature)" >> a.txt
run g commit -q -am "feature: line 4"
run g checkout -q main
echo "new file on main" > b.txt
run g add b.txt
run g commit -q -m "main: b.txt"
run g merge -q --no-edit feature
expect 2 "$(g rev-list --parents -n 1 HEAD | wc -w | awk '{print $1 - 1}')" "parents of the merge commit"
expect 4 "$(g rev-list --count HEAD)" "commits on main"
contains "$(cat a.txt)" "line 4 (feature)" "merged a.txt"
run g tag -a v1 -m "version 1"
expect "v1" "$(g describe)" "git describe"
step "log, diff, status, blame, grep"
out=$(g log --oneline --graph --decorate) || fail "git log"
echo "$out"
contains "$out" "Merge branch 'feature'" "git log"
expect "" "$(g status --porcelain)" "git status after the merge"
contains "$(g diff HEAD~2 --stat)" "a.txt" "git diff --stat"
contains "$(g blame a.txt)" "Compat Test" "git blame"
contains "$(g grep -n 'line 4')" "a.txt:4:" "git grep"
expect "100755" "$(g ls-files -s sub/run.sh | cut -d' ' -f1)" "the executable bit"
step "a conflicting merge is reported and can be aborted"
run g checkout -q -b other HEAD~1
echo "other" > b.txt; run g commit -q -am "other: b.txt"
run g checkout -q main
echo "main again" > b.txt; run g commit -q -am "main: b.txt again"
if g merge -q --no-edit other >/dev/null 2>&1; then fail "a conflicting merge succeeded"; fi
contains "$(g status --porcelain)" "UU b.txt" "status in a conflict"
run g merge --abort
step "stash, a local clone, push back, fsck"
echo "wip" >> a.txt
run g stash -q
expect "" "$(g status --porcelain)" "status after stash"
run g stash pop -q
run g checkout -q -- a.txt
cd .. || fail "cd .."
run g clone -q repo clone
expect "$(git -C repo rev-parse HEAD)" "$(git -C clone rev-parse HEAD)" "HEAD of the clone"
echo "from clone" > clone/c.txt
run g -C clone add c.txt
run g -C clone commit -q -m "from the clone"
run g -C clone push -q origin main:from-clone
contains "$(g -C repo branch)" "from-clone" "branches after a push from the clone"
run g -C repo fsck --strict --no-progress --no-dangling
ok

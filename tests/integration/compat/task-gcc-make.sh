#!/usr/bin/env bash
# gcc and make: a small C project (two objects, a static library, a header dependency, libm and
# threads) built with a Makefile in parallel, run, rebuilt incrementally and cleaned.
. "$(dirname "$0")/lib-task.sh"
command -v gcc >/dev/null && command -v make >/dev/null || fail "gcc or make not installed"

mkdir -p src && cd src || fail "mkdir"
cat > stats.h <<'C'
#pragma once
#include <stddef.h>
double mean(const double *v, size_t n);
double stddev(const double *v, size_t n);
C
cat > stats.c <<'C'
#include <math.h>
#include "stats.h"
double mean(const double *v, size_t n) { double s = 0; for (size_t i = 0; i < n; i++) s += v[i]; return s / n; }
double stddev(const double *v, size_t n) {
        double m = mean(v, n), s = 0;
        for (size_t i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
        return sqrt(s / n);
}
C
cat > main.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "stats.h"
#define N 4
static double parts[N];
static void *work(void *arg) {
        long k = (long) arg; double s = 0;
        for (long i = k; i < 4000000; i += N) s += 1.0 / (2.0 * i + 1.0) * ((i % 2) ? -1 : 1);
        parts[k] = s; return NULL;
}
int main(int argc, char **argv) {
        pthread_t t[N]; double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 }, pi = 0;
        (void) argv;
        for (long k = 0; k < N; k++) if (pthread_create(&t[k], NULL, work, (void *) k) != 0) return 2;
        for (int k = 0; k < N; k++) { pthread_join(t[k], NULL); pi += parts[k]; }
        printf("mean=%.3f stddev=%.3f pi=%.4f argc=%d\n", mean(v, 8), stddev(v, 8), 4 * pi, argc);
        return 0;
}
C
cat > Makefile <<'M'
CC ?= gcc
CFLAGS ?= -O2 -Wall -Wextra -Werror -g
LDLIBS = -lm -pthread
all: app
libstats.a: stats.o
	$(AR) rcs $@ $^
app: main.o libstats.a
	$(CC) $(CFLAGS) -pthread -o $@ main.o -L. -lstats $(LDLIBS)
%.o: %.c stats.h
	$(CC) $(CFLAGS) -pthread -c -o $@ $<
check: app
	./app one two | tee out.txt
	grep -q 'mean=5.000 stddev=2.000 pi=3.1416 argc=3' out.txt
clean:
	rm -f *.o *.a app out.txt
.PHONY: all check clean
M

step "build (make -j2)"
run make -j2
[ -x app ] || fail "app was not built"
step "run"
run make check
step "incremental: nothing to do, then a header change rebuilds both objects"
out=$(make 2>&1) || fail "make: $out"
contains "$out" "Nothing to be done" "second make"
sleep 1; touch stats.h
out=$(make 2>&1) || fail "make after touch: $out"
contains "$out" "main.o" "rebuild after a header change"
contains "$out" "stats.o" "rebuild after a header change"
step "compile and run from stdin"
out=$(printf '#include <stdio.h>\nint main(void){puts("hello from cc");return 0;}\n' | gcc -x c -o hello - 2>&1) || fail "gcc from stdin: $out"
expect "hello from cc" "$(./hello)" "hello"
step "AddressSanitizer and its leak checker"
if gcc -g -fsanitize=address -o asan main.c stats.c -lm -pthread 2>/dev/null; then
  out=$(./asan x 2>&1); rc=$?
  if [ "$rc" != 0 ] && [[ $out == *"LeakSanitizer does not work under ptrace"* ]]; then
    # LeakSanitizer stops the world with ptrace; without it only the leak check is lost
    note_diff lsan-ptrace "LeakSanitizer cannot run (ptrace denied); checking ASan with detect_leaks=0"
    out=$(ASAN_OPTIONS=detect_leaks=0 ./asan x 2>&1) || fail "the ASan build failed with detect_leaks=0: $(printf '%s' "$out" | head -c 300)"
  elif [ "$rc" != 0 ]; then
    fail "the ASan build failed (exit $rc): $(printf '%s' "$out" | head -c 300)"
  fi
  contains "$out" "pi=3.1416" "asan build output"
  # a real leak must be reported where the leak checker runs
  printf '#include <stdlib.h>\nint main(void){void *p = malloc(77); p = 0; return 0;}\n' > leak.c
  gcc -g -fsanitize=address -o leak leak.c || fail "gcc leak.c"
  out=$(./leak 2>&1); rc=$?
  case $out in
    *"77 byte(s) leaked"*) echo "leak found by LeakSanitizer" ;;
    *"LeakSanitizer does not work under ptrace"*) ;;
    *) fail "LeakSanitizer did not report the leak (exit $rc): $(printf '%s' "$out" | head -c 300)" ;;
  esac
else
  echo "(no libasan: sanitizer builds not tested)"
fi
step "clean"
run make clean
[ ! -e app ] || fail "make clean left app"
ok

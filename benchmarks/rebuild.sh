#!/usr/bin/env bash
# Times rebuilds of `benchmarks/six-kernels` (a crate of six small kernels and a program
# that runs them), release profile, as issue 30 asks:
#   touch        a file of the crate touched, no kernel changed
#   one changed  one kernel's constant changed (heat_step), its PTX not in the cache
#   all changed  every kernel rebuilt without the PTX cache (STENCIL_CACHE=off)
#   no kernels   the same crate with its kernel module emptied (the floor: rustc alone)
# Each row is the median of RUNS builds (default 5). Run from the repository root; the
# crate is restored afterwards. Extra arguments go to every `cargo build`.
set -euo pipefail
RUNS=${RUNS:-5}
crate=benchmarks/six-kernels
lib=$crate/src/lib.rs
backup=$(mktemp)
cp "$lib" "$backup"
trap 'cp "$backup" "$lib"; rm -f "$backup"' EXIT

build() { cargo build --release -q -p six-kernels "$@" >/dev/null; }
# Wall seconds of one build, after the command $1 prepares it.
timed() {
    eval "$1"
    local t0 t1
    t0=$(date +%s.%N)
    build "${@:2}"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
row() {
    local name=$1 prep=$2
    shift 2
    local times=()
    for _ in $(seq "$RUNS"); do times+=("$(timed "$prep" "$@")"); done
    printf '| %s | %s | %s |\n' "$name" "$(printf '%s\n' "${times[@]}" | median)" "$(printf '%s ' "${times[@]}")"
}

build "$@"
echo "| rebuild | median (s) | runs (s) |"
echo "| --- | --- | --- |"
row "touch, no kernel changed" "touch $lib" "$@"
n=0
change() {
    n=$((n + 1))
    cp "$backup" "$lib"
    sed -i "s/out = u + a \* (u\[(-1, 0)\]/out = u + (a + 0.$(date +%s%N)$n) * (u[(-1, 0)]/" "$lib"
    grep -q "(a + 0\." "$lib"
}
row "one kernel changed (heat_step)" "change" "$@"
cp "$backup" "$lib"
row "all six kernels, PTX cache off" "touch $lib; export STENCIL_CACHE=off" "$@"
unset STENCIL_CACHE
# The floor: the kernels module emptied, the program kept out of the build.
empty() {
    printf '//! No kernels.\n#[allow(unused)]\npub mod kernels {}\n' >"$lib"
}
row "no kernels (library only)" "empty" --lib "$@"
cp "$backup" "$lib"

#!/usr/bin/env bash
# Times rebuilds of `benchmarks/six-kernels` (a crate of six small kernels and a program
# that runs them), release profile (or PROFILE, e.g. `iterate`), as issue 30 asks:
#   touch        a file of the crate touched, no kernel changed
#   one changed  one kernel's constant changed (heat_step), its PTX not in the cache
#   all changed  every kernel rebuilt without the PTX cache (STENCIL_CACHE=off)
# each for the library alone (`--lib`) and for the library and its program (which
# instantiates the kernels' CPU code, so rustc compiles it), and
#   no kernels   the library with its kernel module emptied (the floor: rustc alone).
# Each row is the median of RUNS builds (default 5). Run from the repository root; the
# crate is restored afterwards. Extra arguments go to every `cargo build`.
set -euo pipefail
# A failing step inside $(..) stops the script too.
shopt -s inherit_errexit
RUNS=${RUNS:-5}
crate=benchmarks/six-kernels
lib=$crate/src/lib.rs
backup=$(mktemp)
cp "$lib" "$backup"
trap 'cp "$backup" "$lib"; rm -f "$backup"' EXIT

build() { cargo build --profile "${PROFILE:-release}" -q -p six-kernels "$@" >/dev/null; }
# Wall seconds of one build, after the command $1 prepares it.
timed() {
    eval "$1"
    local t0 t1
    t0=$(date +%s%N)
    build "${@:2}"
    t1=$(date +%s%N)
    printf '%.2f\n' "$(echo "($t1 - $t0) / 1000000000" | bc -l)"
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
# A new constant in heat_step each time: a kernel the PTX cache has not seen.
change() {
    cp "$backup" "$lib"
    sed -i "s/out = u + a \* (u\[(-1, 0)\]/out = u + (a + 0.$(date +%s%N)) * (u[(-1, 0)]/" "$lib"
    grep -q "(a + 0\." "$lib"
}
echo "| rebuild | what is built | median (s) | runs (s) |"
echo "| --- | --- | --- | --- |"
for what in library program; do
    args=("$@")
    [ "$what" = library ] && args+=(--lib)
    row "touch, no kernel changed | $what" "touch $lib" "${args[@]}"
    row "one kernel changed (heat_step) | $what" "change" "${args[@]}"
    cp "$backup" "$lib"
    row "all six kernels, PTX cache off | $what" "touch $lib; export STENCIL_CACHE=off" "${args[@]}"
done
# The floor: the kernels module emptied, the library alone.
empty() {
    printf '//! No kernels.\n#[allow(unused)]\npub mod kernels {}\n' >"$lib"
}
row "no kernels (module emptied) | library" "empty" --lib "$@"
cp "$backup" "$lib"

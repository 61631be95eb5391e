#!/usr/bin/env bash
# `npm run fuzz [-- target...]`: runs each cargo-fuzz target (all of `cargo fuzz list` unless
# named) for FUZZ_SECONDS (default 60) seconds, one after the other, then prints executions and
# findings per target. Each target starts from its committed seeds (fuzz/seeds/<target>, read
# only) plus its working corpus (fuzz/corpus/<target>, kept between runs, not committed); a
# finding is saved in fuzz/artifacts/<target>/ — minimize it (`cargo fuzz tmin`), add it to the
# seeds, fix the code with a regression test next to it. Exits non-zero when anything was found.
# cargo-fuzz wants nightly features; the stable toolchain allows them with RUSTC_BOOTSTRAP=1.
# FUZZ_SANITIZER: cargo fuzz's -s (default address; none runs safe code about twice as fast).
# Extra libFuzzer flags: FUZZ_FLAGS (for example "-max_len=8192"). Not part of `npm test`.
set -euo pipefail

seconds="${FUZZ_SECONDS:-60}"
cd "$(dirname "$0")/../fuzz"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz (cargo install cargo-fuzz)" >&2
  cargo install cargo-fuzz
fi

if [ "$#" -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo fuzz list); fi

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
stat() { grep -m1 "^stat::$1:" "$logs/$target.log" | awk '{print $2}' || true; }
summary=()
failed=0
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target" "artifacts/$target"
  before="$(ls "artifacts/$target" | sort)"
  echo "fuzz: $target for ${seconds}s" >&2
  status=0
  # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
  nice cargo fuzz run -s "${FUZZ_SANITIZER:-address}" "$target" "corpus/$target" "seeds/$target" -- \
    -max_total_time="$seconds" -print_final_stats=1 ${FUZZ_FLAGS:-} \
    >"$logs/$target.log" 2>&1 || status=$?
  runs="$(stat number_of_executed_units)"
  rate="$(stat average_exec_per_sec)"
  found="$(comm -13 <(echo "$before") <(ls "artifacts/$target" | sort) | sed "s|^|artifacts/$target/|" | paste -sd' ' -)"
  if [ "$status" -ne 0 ] && [ -z "$found" ]; then
    found="exit status $status, log above"
    tail -n 30 "$logs/$target.log" >&2
  fi
  if [ -n "$found" ]; then failed=1; fi
  new="$(stat new_units_added)"
  corpus="$(($(ls "corpus/$target" | wc -l) + $(ls "seeds/$target" | wc -l)))"
  summary+=("$(printf '%-10s %12s %8s %6s %7s  %s' "$target" "${runs:-?}" "${rate:-?}" "${new:-?}" "$corpus" "${found:-none}")")
done

echo
printf '%-10s %12s %8s %6s %7s  %s\n' target executions exec/s new corpus findings
printf '%s\n' "${summary[@]}"
exit "$failed"

#!/usr/bin/env bash
# fuzz.sh FUZZTIME [PKG:Target...]: run each fuzz target for FUZZTIME (a
# duration or a count of inputs, as go test -fuzztime takes it), one after
# the other; without targets, every Fuzz function of the repository's
# _test.go files. make fuzz and make fuzz-short run it; GO comes from the
# Makefile.
set -euo pipefail
GO=${GO:-go}
fuzztime=${1:?usage: fuzz.sh FUZZTIME [PKG:Target...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for file in $(grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git '^func Fuzz' . | sort); do
		for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
			targets+=("$(dirname "$file"):$target")
		done
	done
fi
for t in "${targets[@]}"; do
	pkg=${t%%:*} target=${t#*:}
	echo "$GO test -run '^\$' -fuzz '^$target\$' -fuzztime $fuzztime $pkg"
	$GO test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" "$pkg"
done

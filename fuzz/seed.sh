#!/bin/sh
# fuzz/seed.sh: fills fuzz/corpus/<target>/ with seed inputs from the
# checkout (the corpus is not committed: /fuzz/corpus is in .gitignore).
#
#   kptfile_decode   every Kptfile under testdata/ and the conformance corpus
#   yaml_parse_emit  every YAML file (and Kptfile) there
#   function_output  every ResourceList/List file there, plus the stdin and
#                    stdout of KRM functions run on the packages there:
#                    the test functions of testdata/functions (identity,
#                    results in the current and the legacy form, a generator,
#                    PyYAML re-emitters, a List re-wrapper, ...) under
#                    `kpt fn eval --exec` (or `krmgraph fn eval --exec` when
#                    kpt is not installed; set FN_EVAL to choose, e.g.
#                    FN_EVAL="target/release/krmgraph fn eval"), each through
#                    a wrapper that keeps a copy of what went in and out.
#
# The conformance corpus is $KRMGRAPH_CONFORMANCE_DIR, else
# ../shared/conformance next to the checkout; it is skipped if missing.
# Files are named by their SHA-1, as libFuzzer names corpus entries, so
# running the script again adds nothing twice. Packages are copied to a
# temporary directory first: the checkout is not changed.
set -eu

fuzz=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$fuzz")
conformance=${KRMGRAPH_CONFORMANCE_DIR:-$root/../shared/conformance}
corpus=$fuzz/corpus
sources=$root/testdata
if [ -d "$conformance" ]; then
  conformance=$(cd "$conformance" && pwd)
  sources="$sources $conformance"
else
  echo "seed.sh: no conformance corpus at $conformance; testdata/ only" >&2
fi

# add TARGET FILE: FILE into corpus/TARGET (empty files are skipped).
add() {
  [ -s "$2" ] || return 0
  mkdir -p "$corpus/$1"
  sum=$(sha1sum <"$2" | cut -d' ' -f1)
  cp "$2" "$corpus/$1/$sum"
}

# Skips the fuzzers' own directories if a corpus sits inside a source.
files() {
  # shellcheck disable=SC2086
  find $sources \( -name target -o -name corpus -o -name artifacts \) -prune \
    -o -type f "$@" -print
}

files -name Kptfile | while IFS= read -r f; do
  add kptfile_decode "$f"
  add yaml_parse_emit "$f"
done

files \( -name '*.yaml' -o -name '*.yml' \) | while IFS= read -r f; do
  add yaml_parse_emit "$f"
  if grep -Eq '^kind: *(ResourceList|List) *$' "$f"; then
    add function_output "$f"
  fi
done

# The function runs.
if [ -z "${FN_EVAL:-}" ]; then
  if command -v kpt >/dev/null 2>&1; then
    FN_EVAL="kpt fn eval"
  elif [ -x "$root/target/release/krmgraph" ]; then
    FN_EVAL="$root/target/release/krmgraph fn eval"
  else
    echo "seed.sh: neither kpt nor target/release/krmgraph: no function runs" >&2
    FN_EVAL=
  fi
fi
[ -n "$FN_EVAL" ] || exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/runs"
cat >"$work/capture.sh" <<EOF
#!/bin/sh
# capture.sh FN ARGS...: runs FN, keeping its stdin and stdout.
run=\$(mktemp "$work/runs/run.XXXXXX")
tee "\$run.in" | "\$@" >"\$run.out"
code=\$?
cat "\$run.out"
exit \$code
EOF
chmod +x "$work/capture.sh"

fns=$root/testdata/functions
# One function per line: the identity on every package, the others on
# every fourth one (they are slower and add shapes, not coverage of
# packages).
others="$fns/stderr-results.py 2
$fns/stderr-results.py --legacy 2
$fns/generate.py ConfigMap:gen Service:ns/svc ConfigMap:moved@../x.yaml
$fns/pyyaml-requote.py
$fns/sort-keys.py new
$fns/as-list.sh
$fns/add-field.py fuzz
$fns/echo.py input echoed
$fns/move.py --legacy x=y.yaml:3
$fns/empty-list.sh
$fns/fail.sh 3 2"

# Root packages: directories with a Kptfile and no Kptfile above them up to
# the source directory (fn eval reads the subpackages too).
n=0
files -name Kptfile | sed 's|/Kptfile$||' | sort | while IFS= read -r pkg; do
  up=$(dirname "$pkg")
  nested=no
  while [ "$up" != "/" ] && [ "$up" != "$root" ] && [ "$up" != "$conformance" ]; do
    if [ -f "$up/Kptfile" ]; then nested=yes; break; fi
    up=$(dirname "$up")
  done
  [ "$nested" = no ] || continue
  n=$((n + 1))
  copy=$work/pkg
  rm -rf "$copy"
  cp -r "$pkg" "$copy"
  # shellcheck disable=SC2086
  $FN_EVAL "$copy" --exec "$work/capture.sh $fns/identity.sh" -- fuzz=seed \
    >/dev/null 2>&1 || true
  if [ $((n % 4)) -eq 1 ]; then
    echo "$others" | while IFS= read -r fn; do
      rm -rf "$copy"
      cp -r "$pkg" "$copy"
      # shellcheck disable=SC2086
      $FN_EVAL "$copy" --exec "$work/capture.sh $fn" >/dev/null 2>&1 || true
    done
  fi
done

for f in "$work"/runs/run.*.in "$work"/runs/run.*.out; do
  [ -e "$f" ] && add function_output "$f"
done

for t in kptfile_decode yaml_parse_emit function_output; do
  printf '%s: %s files\n' "$t" "$(find "$corpus/$t" -type f 2>/dev/null | wc -l)"
done

#!/usr/bin/env bash
# The generated completions against the real parsers (ctest: oishell_completion_matches_parsers):
#   - the scripts of both programs parse in bash, zsh and fish (zsh and fish when installed; said when not);
#   - every option `oishell completion` offers for a verb is accepted by that verb's parser
#     (`oishell VERB OPTION [VALUE] --help` prints the verb's usage and exits 0);
#   - every option a verb's synopsis names is offered, and every verb of `oishell --help` is offered;
#   - in bash, `oishell r<TAB>` offers `run`, and `interpreter --provider <TAB>` the providers its parser allows.
#
#   completion_check.sh OISHELL INTERPRETER
set -euo pipefail
oishell="$1"
interpreter="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

for shell in bash zsh fish; do
  "$oishell" completion "$shell" >"$tmp/oishell.$shell"
  "$interpreter" --completion "$shell" >"$tmp/interpreter.$shell"
  if ! command -v "$shell" >/dev/null; then
    echo "note: $shell is not installed: its scripts are not syntax-checked"
    continue
  fi
  for f in "$tmp/oishell.$shell" "$tmp/interpreter.$shell"; do
    "$shell" -n "$f" || fail "$(basename "$f") does not parse in $shell"
  done
done

# Every option offered for a verb, from the fish script (one line per option, easy to read):
#   complete -c oishell -n '__fish_seen_subcommand_from VERB' -l NAME [-s X] [-r|-x] [-a 'CHOICES'] -d '...'
checked=0
while IFS= read -r line; do
  verb="$(sed -n "s/.*__fish_seen_subcommand_from \([a-z-]*\)'.*/\1/p" <<<"$line")"
  name="$(sed -n 's/.* -l \([^ ]*\).*/\1/p' <<<"$line")"
  [ -n "$verb" ] && [ -n "$name" ] || continue
  [ "$name" = help ] && continue
  args=("--$name")
  if grep -Eq -- ' -(r|x)( |$)' <<<"$line"; then  # takes a value: the first choice, or any word
    choice="$(sed -n "s/.* -x -a '\([^ (']*\).*/\1/p" <<<"$line")"
    args+=("${choice:-1}")
  fi
  checked=$((checked + 1))
  out="$("$oishell" "$verb" "${args[@]}" --help 2>&1)" && status=0 || status=$?
  if [ "$status" -ne 0 ] || ! grep -q "^usage: oishell $verb" <<<"$out"; then
    fail "oishell $verb ${args[*]} --help: exit $status: $(head -1 <<<"$out")"
  fi
done <"$tmp/oishell.fish"
[ "$checked" -ge 20 ] || fail "only $checked options found in the fish script"
echo "$checked options offered by the completion are accepted by their verbs"

# The other way round: what `oishell --help` and each verb's synopsis (its `usage:` lines) name is offered.
verbs="$("$oishell" --help | sed -n 's/^  \([a-z-]*\) .*/\1/p')"
[ -n "$verbs" ] || fail "no verbs in oishell --help"
for verb in $verbs; do
  grep -q "__fish_use_subcommand -a '$verb'" "$tmp/oishell.fish" || fail "verb $verb is not offered"
  synopsis="$("$oishell" "$verb" --help | awk '/^usage:/ || (n && /^ /) { n = 1; print; next } { if (n) exit }')"
  for option in $(grep -o -- '--[a-z][a-z-]*' <<<"$synopsis" | sort -u); do
    grep -q "__fish_seen_subcommand_from $verb' -l ${option#--} " "$tmp/oishell.fish" ||
      fail "oishell $verb --help names $option, which the completion does not offer"
  done
done

# bash, as a user's shell runs it
bash_complete() {  # SCRIPT FUNCTION WORD...: what the completion function offers for the last word
  local script="$1" fn="$2"
  shift 2
  bash -c 'source "$1"; shift; fn="$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "$fn"; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$script" "$fn" "$@"
}
[ "$(bash_complete "$tmp/oishell.bash" _oishell oishell r)" = run ] || fail "bash: oishell r<TAB> does not offer run"
[ "$(bash_complete "$tmp/oishell.bash" _oishell oishell run --net = '' | tr '\n' ' ')" = "none proxy " ] ||
  fail "bash: oishell run --net=<TAB> does not offer none proxy"
offered=" $(bash_complete "$tmp/interpreter.bash" _interpreter interpreter --provider '' | tr '\n' ' ')"
for p in openai anthropic azure groq gemini ollama; do
  case "$offered" in *" $p "*) ;; *) fail "bash: interpreter --provider <TAB> does not offer $p (offered:$offered)" ;; esac
done
bash_complete "$tmp/interpreter.bash" _interpreter i --sa | grep -qx -- --sandbox ||
  fail "bash: i --sa<TAB> does not offer --sandbox"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "completions match the parsers"

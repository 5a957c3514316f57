# oishell shell executor driver: one persistent bash whose `cd`, variables, functions and options survive.
#
# Started by the supervisor as `bash --noprofile --norc shell_driver.bash` with the control socket at fd 3
# (docs/protocol.md, "Executor control channel"). The socket is moved to a high fd and fd 3 is closed, so a block
# sees no control fd at 3; stdout and stderr are the block's own, so nothing a block prints can end it.
#
# Each block runs at the top level of this shell through `source`, so `declare` makes globals as at a prompt.
# Interrupt: SIGINT to the process group; the INT trap returns from the sourced block (status 130), then every
# other process of our process group (background jobs the block started) is killed.
# Active line: a DEBUG trap (inherited by `source` through `set -T`) reports top-level lines of the block.

exec {__oi_ctl}<&3 3<&-
__oi_seq=
__oi_in=
__oi_intr=
__oi_line=
__oi_src=/proc/self/fd/9

__oi_send() { printf '%s\n' "$*" >&"$__oi_ctl"; }

# Kills every process of our process group but this shell (background jobs left by an interrupted block).
__oi_kill_group() {
  local stat rest pgid f pid
  read -r stat < "/proc/$$/stat" || return 0
  rest=${stat##*) }
  read -r _ _ pgid _ <<< "$rest"
  for f in /proc/[0-9]*/stat; do
    pid=${f#/proc/}; pid=${pid%/stat}
    [[ $pid == "$$" ]] && continue
    read -r stat < "$f" 2>/dev/null || continue
    rest=${stat##*) }
    read -r _ _ f _ <<< "$rest"
    [[ $f == "$pgid" ]] && kill -KILL "$pid" 2>/dev/null
  done
  return 0
}

__oi_traps() {
  trap '__oi_intr=1; [[ -n ${__oi_in-} ]] && return 130' INT
  trap '[[ -n ${__oi_in-} && ${#FUNCNAME[@]} == 0 && ${BASH_SOURCE[0]-} == "$__oi_src" && $LINENO != "${__oi_line-}" ]] && { __oi_line=$LINENO; printf "L %s %s\n" "$__oi_seq" "$LINENO" >&"$__oi_ctl"; }' DEBUG
}

set -T
__oi_send R
while :; do
  # Request: "X <seq> <code bytes> <stdin bytes or -1>\n" then the code, NUL, and the stdin data, NUL.
  __oi_hdr=
  IFS= read -r -u "$__oi_ctl" __oi_hdr
  __oi_rc=$?
  if (( __oi_rc > 128 )); then continue; fi   # a late SIGINT between blocks
  if (( __oi_rc != 0 )); then exit 0; fi      # the supervisor closed the channel
  read -r __oi_op __oi_seq __oi_clen __oi_slen <<< "$__oi_hdr"
  if [[ $__oi_op != X ]]; then
    printf 'oishell shell driver: bad request %q\n' "$__oi_hdr" >&2
    continue
  fi
  __oi_code=
  IFS= read -r -d '' -u "$__oi_ctl" __oi_code
  __oi_stdin=
  if (( __oi_slen >= 0 )); then IFS= read -r -d '' -u "$__oi_ctl" __oi_stdin; fi
  __oi_traps
  __oi_intr= __oi_line=
  if (( __oi_slen >= 0 )); then
    __oi_in=1
    source "$__oi_src" 9<<< "$__oi_code" < <(printf '%s' "$__oi_stdin")
    __oi_rc=$?
    __oi_in=
  else
    __oi_in=1
    source "$__oi_src" 9<<< "$__oi_code"
    __oi_rc=$?
    __oi_in=
  fi
  if [[ -n $__oi_intr ]]; then
    __oi_kill_group
    __oi_send "D $__oi_seq interrupted 130"
  elif (( __oi_rc == 0 )); then
    __oi_send "D $__oi_seq ok 0"
  else
    __oi_send "D $__oi_seq error $__oi_rc"
  fi
done

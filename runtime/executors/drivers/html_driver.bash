# oishell html "executor" driver: a block is a page, saved into the workspace for the user to open.
#
# Started by the supervisor as `bash --noprofile --norc html_driver.bash` with the control socket at fd 3
# (docs/protocol.md, "Executor control channel"), in the sandbox's working directory. Each block is written to
# oi-html/<n>.html there (n the first number not taken, created with O_EXCL through noclobber, so an existing file
# or a symlink planted in its place is never written through), and stdout names the file. It runs inside the
# sandbox like any block: it can write only where the policy lets sandboxed code write. Nothing is opened: the
# user opens the file (the agent says how where the host has a browser).

exec {__oi_ctl}<&3 3<&-
__oi_send() { printf '%s\n' "$*" >&"$__oi_ctl"; }
trap '' INT   # nothing here runs long enough to interrupt
set -o noclobber
__oi_dir=oi-html

__oi_save() {
  local n=1 path
  if ! mkdir -p -- "$__oi_dir"; then
    printf 'oishell: cannot create %s in %s\n' "$__oi_dir" "$PWD" >&2
    return 1
  fi
  while :; do
    path=$__oi_dir/$n.html
    if [[ -e $path || -L $path ]]; then n=$((n + 1)); continue; fi
    { printf '%s' "$1" > "$path"; } 2>/dev/null && break
    if [[ -e $path || -L $path ]]; then n=$((n + 1)); continue; fi  # taken in the meantime
    printf '%s' "$1" > "$path" && break  # once more, to say why it cannot be written
    return 1
  done
  path=$PWD/$path
  printf 'HTML saved to %s; the user can open it in a browser: file://%s\n' "$path" "$path"
}

__oi_send R
while :; do
  # Request: "X <seq> <code bytes> <stdin bytes or -1>\n" then the code, NUL, and the stdin data, NUL.
  __oi_hdr=
  IFS= read -r -u "$__oi_ctl" __oi_hdr || exit 0
  read -r __oi_op __oi_seq __oi_clen __oi_slen <<< "$__oi_hdr"
  if [[ $__oi_op != X ]]; then
    printf 'oishell html driver: bad request %q\n' "$__oi_hdr" >&2
    continue
  fi
  __oi_code=
  IFS= read -r -d '' -u "$__oi_ctl" __oi_code
  if (( __oi_slen >= 0 )); then IFS= read -r -d '' -u "$__oi_ctl" _; fi
  if __oi_save "$__oi_code"; then
    __oi_send "D $__oi_seq ok 0"
  else
    __oi_send "D $__oi_seq error 1"
  fi
done

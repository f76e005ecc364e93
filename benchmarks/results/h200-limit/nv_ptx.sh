# Sourced by run_zwalk.sh, run_row_base.sh and run_maxreg.sh (after step_budget.sh, with
# OUT, dev and here, this folder, set).
# nv NAME LIMIT CONFIGS [ARGS...]: ptxas's registers and NVIDIA's PTX of the
# configurations in here/CONFIGS (benchmarks/h200_ptx.py; CONFIGS - : none, the ARGS give
# them with --config) into OUT/nv/NAME.md, the ARGS (--template FILE, --option=OPT,
# --config ...) passed on; skipped, and said so in OUT/rc.txt, on a device that gives no
# PTX.
nv() {
  local name=$1 limit=$2 cfgs=(--configs "$here/$3")
  [ "$3" = - ] && cfgs=()
  shift 3
  case "$dev" in
    *NVIDIA* | *nvidia*) ;;
    *) echo "nv $name: skipped (no PTX from $dev)" >> "$OUT/rc.txt"; return ;;
  esac
  timeout "$(left "$limit")" python3 benchmarks/h200_ptx.py "$OUT/nv/$name.md" \
    --device "$dev" "${cfgs[@]}" "$@" > "$OUT/nv-$name.log" 2>&1
  echo "nv $name rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
}

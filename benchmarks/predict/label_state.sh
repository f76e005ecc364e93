# Sourced by collect_two_gpus.sh and avsa_then_labels.sh: a labelling part's state.
# unpack FROM WORK: the store and dataset of one part, from FROM (a call's OUT/c/A as it
# came back: collect.tar.gz, labels.db.gz.part.*; or a store labels.db.gz and a dataset
# NAME-hybrid.csv) into WORK; sets u_store and u_dataset (empty where FROM has none).
# A dataset of another name is refused (status 2): `gtune train` reads only
# NAME-hybrid.csv, and a dataset it does not read relabels every kernel of the groups.
unpack() {
  local from=$1 work=$2 other
  u_store="" u_dataset=""
  [ -d "$from" ] || return 0
  if compgen -G "$from/labels.db.gz.part.*" > /dev/null; then
    cat "$from"/labels.db.gz.part.* > "$work/labels.db.gz" && u_store=$work/labels.db.gz
  elif [ -f "$from/labels.db.gz" ]; then
    u_store=$from/labels.db.gz
  fi
  if [ -f "$from/collect.tar.gz" ]; then
    tar -xzf "$from/collect.tar.gz" -C "$work" --wildcards './*-hybrid.csv' 2> /dev/null
    from=$work
  fi
  other=$(find "$from" -maxdepth 1 -name '*.csv' ! -name '*-hybrid.csv' | head -1)
  if [ -n "$other" ]; then
    echo "$(basename "$0"): $other: gtune train reads only NAME-hybrid.csv; rename it" >&2
    return 2
  fi
  u_dataset=$(find "$from" -maxdepth 1 -name '*-hybrid.csv' | head -1)
}

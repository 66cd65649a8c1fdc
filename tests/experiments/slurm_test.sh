#!/usr/bin/env bash
# slurm_test.sh CARRIER: `carrier sweep --slurm 3 --submit` on a real single-node Slurm (Debian
# slurm-wlm + munge), started by this test on localhost with every file in a temporary folder
# (munge key and socket, slurm.conf, state, spool, logs; the ports chosen free). It waits for
# the dependent merge job and checks that the merged trials.csv equals the single-machine run
# row for row, timing columns (seconds, reference_seconds) aside. Exit 77 (CTest: Skipped), with
# the reason, where Slurm cannot start: not root, slurm-wlm or munge missing, daemons down.
# The daemons this test started are stopped by their pid on exit.
set -uo pipefail
CARRIER="$(readlink -f "${1:?usage: slurm_test.sh CARRIER}")"
skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to run munged and slurmd (CI runs as root)"
for b in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$b" >/dev/null || skip "$b not found (Debian: apt-get install slurm-wlm munge)"
done
T="$(mktemp -d /tmp/carrier-slurm.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for f in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munged.pid"; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 1
  rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/state" "$T/spool" "$T/munge" "$T/out"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --force --socket="$T/munge/sock" --key-file="$T/munge/munge.key" \
  --pid-file="$T/munged.pid" --log-file="$T/munged.log" --seed-file="$T/munge/seed" \
  || skip "munged would not start: $(tail -1 "$T/munged.log" 2>/dev/null)"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpus="$(nproc)"
cat > "$T/slurm.conf" <<CONF
ClusterName=carriertest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$T/munge/sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=carrier Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -i || skip "slurmctld would not start: $(tail -2 "$T/slurmctld.log" 2>/dev/null)"
slurmd -N localhost || skip "slurmd would not start: $(tail -2 "$T/slurmd.log" 2>/dev/null)"
up=""
for _ in $(seq 60); do
  state="$(sinfo -h -N -o '%T' 2>/dev/null | head -1)"
  case "$state" in idle*|mix*|alloc*) up=1; break ;; esac
  sleep 1
done
[ -n "$up" ] || skip "the local node never came up (state '$state'): $(tail -2 "$T/slurmd.log" 2>/dev/null)"
echo "slurm: node localhost $state, $cpus CPUs, conf $SLURM_CONF"

cat > "$T/sweep.toml" <<'TOML'
[sweep]
name = "slurmtest"
seed = 11
trials = 2
[grid]
op = ["sum", "lse", "welford"]
dtype = ["bf16", "fp32"]
schedule = ["seq", "pairwise", "blocked:16"]
n = [512]
input = ["normal"]
TOML
fail() { echo "FAILED: $*"; for f in "$T"/out/slurm/*.out "$T/slurmctld.log"; do [ -f "$f" ] && { echo "== $f"; tail -5 "$f"; }; done; exit 1; }
"$CARRIER" sweep "$T/sweep.toml" -o "$T/out" --slurm 3 --partition carrier --time 10 --submit \
  || fail "carrier sweep --slurm 3 --submit"
grep -q -- '--shard "$k/$n"' "$T/out/submit.sbatch" || fail "submit.sbatch runs no --shard K/N"
for _ in $(seq 300); do
  [ -s "$T/out/slurm/merge.jobid" ] && [ -z "$(squeue -h 2>/dev/null)" ] && break
  sleep 1
done
[ -s "$T/out/slurm/merge.jobid" ] || fail "the array's first task never submitted the merge job"
[ -z "$(squeue -h)" ] || fail "jobs still queued after 300 s: $(squeue -h | head -3)"
[ -s "$T/out/trials.csv" ] || fail "the merge job wrote no $T/out/trials.csv"
echo "slurm: array and merge job $(cat "$T/out/slurm/merge.jobid") done; merged $(($(wc -l < "$T/out/trials.csv") - 1)) rows"

"$CARRIER" sweep "$T/sweep.toml" -o "$T/single" --jobs 2 --quiet >/dev/null || fail "single-machine run"
/usr/bin/python3 - "$T/single/trials.csv" "$T/out/trials.csv" <<'PY' || fail "merged CSV differs"
import csv, sys
timing = {"seconds", "reference_seconds"}
def rows(path):
    with open(path, newline="") as f:
        r = list(csv.DictReader(f))
    return sorted(({k: v for k, v in row.items() if k not in timing} for row in r),
                  key=lambda row: int(row["trial_id"]))
a, b = rows(sys.argv[1]), rows(sys.argv[2])
print(f"single run {len(a)} rows, slurm merge {len(b)} rows")
assert len(a) == len(b) and len(a) == 3 * 2 * 3 * 2, (len(a), len(b))
for x, y in zip(a, b):
    if x != y:
        diff = {k: (x[k], y.get(k)) for k in x if x[k] != y.get(k)}
        sys.exit(f"trial {x['trial_id']} differs: {diff}")
print("merged rows equal the single run's, timing columns aside")
PY
echo "PASSED"

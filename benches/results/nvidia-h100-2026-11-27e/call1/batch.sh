# Next session, first call: main against the two UAlloc branches, with and without give-back.
# Prebuilt at the end of the fourth session of 2026-11-27 (stripped, gzipped in .gpu/bin; md5
# of the stripped binaries): m = main 39ccbeb (7636add3), r = ualloc-rank-claims b029177
# (266e0310), x = ualloc-exclusive-finds 0a1ee84 (99c8a653), xG = x with both
# `ua_give_back(bin, c);` calls commented out and `took = ua_may_take_bins(c, bins);` in
# ua_release replaced by `took = false;` (no bin goes back; emptied bins are still listed in
# UA_RETIRE; measurement only) (dc466a46). Rebuild if main has moved.
# Then the winner's conformance at 1024 in a second call (two processes: basic,exhaustion,
# utilisation,growth ~270 s; free-all,round-trip,churn,device-bad-input,host-bad-input,scale
# ~150 s, scale's first pipeline build included) and scale at 8192 (~140 s) in a third.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 560 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-m 75 .gpu/bin/gpu-heap-m bench --strategy bump,ualloc --test alloc,accumulate $G --json $o/bench-m.json
for b in r x xG; do
  run bench-$b 60 .gpu/bin/gpu-heap-$b bench --strategy ualloc --test alloc,accumulate $G --json $o/bench-$b.json
done
run conf-x-1024-b 200 .gpu/bin/gpu-heap-x conformance --strategy ualloc --scenario free-all,round-trip,churn,device-bad-input,host-bad-input,scale --workgroups 1024 --json $o/conf-x-1024-b.json
cat $o/log.txt; grep -hiE "pass|fail" $o/conf-*.txt | cut -c1-160 | head -40

# twenty-seventh session, call 1 (call62): G = fresh runs for the page-based variants (fresh_runs.wgsl), M = main 1cbbf18. Page-based grids with bump, M then G then M; conformance of ouro-p-s/va/vl at 1024 (G); the page-based root tests (G)
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 560 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1 --strategy bump,ouro-p-s,ouro-p-va,ouro-p-vl"
run p-M 60 .gpu/bin/gpu-heap-M bench $g --json $o/p-M.json
run p-G 60 .gpu/bin/gpu-heap-G bench $g --json $o/p-G.json
run conf-G 240 .gpu/bin/gpu-heap-G conformance --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/conf-G.json
for t in mixed refill saturated vlq; do run t-$t 60 .gpu/bin/G-ouroboros_$t --test-threads 1; done
run p-M2 60 .gpu/bin/gpu-heap-M bench $g --json $o/p-M2.json
run p-G2 60 .gpu/bin/gpu-heap-G bench $g --json $o/p-G2.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt

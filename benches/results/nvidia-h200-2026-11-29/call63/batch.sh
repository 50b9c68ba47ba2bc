# twenty-seventh session, call 2 (call63): G2 = ced6009 (fresh runs; the malloc takes a queued unit first, as the wait's first take, then the fresh run), M = main 1cbbf18. Page-based grids with bump, M then G2 (twice); kernel-stats; conformance of ouro-p-s/va/vl at 1024 (G2); refill and saturated tests (G2); the other strategies' grids (G2) for the full 13-strategy table
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
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
p="--strategy bump,ouro-p-s,ouro-p-va,ouro-p-vl"
run p-M 60 .gpu/bin/gpu-heap-M bench $g $p --json $o/p-M.json
run p-G2 60 .gpu/bin/gpu-heap-G2 bench $g $p --json $o/p-G2.json
run ks-M 40 .gpu/bin/gpu-heap-M kernel-stats --strategy ouro-p-s,ouro-p-va,ouro-p-vl
run ks-G2 40 .gpu/bin/gpu-heap-G2 kernel-stats --strategy ouro-p-s,ouro-p-va,ouro-p-vl
run conf-G2 200 .gpu/bin/gpu-heap-G2 conformance --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/conf-G2.json
run t-refill 60 .gpu/bin/G2-refill --test-threads 1
run t-saturated 30 .gpu/bin/G2-saturated
run walks 70 .gpu/bin/gpu-heap-G2 bench $g --strategy bump,rw-bm,rw,corw,rw-malloc --json $o/walks.json
run buddy 40 .gpu/bin/gpu-heap-G2 bench $g --strategy tbuddy,ualloc --json $o/buddy.json
run ouro-c 50 .gpu/bin/gpu-heap-G2 bench $g --strategy ouro-c-s,ouro-c-va,ouro-c-vl --json $o/ouro-c.json
run p-M2 40 .gpu/bin/gpu-heap-M bench $g $p --json $o/p-M2.json
run p-G2b 40 .gpu/bin/gpu-heap-G2 bench $g $p --json $o/ouro-p.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt

# twenty-seventh session, call 5 (call66): G5 = G2 whose fresh run claims fresh memory with a compare-exchange (never past the end, nothing to pool) and takes one chunk from ouro_chunk_alloc otherwise: one call site of the chunk manager in the install. M = main 1cbbf18, G2 = ced6009. ouro-p-s/va grids of M, G2, G5 twice; kernel-stats; G5's conformance of ouro-p-s/va/vl at 1024 and the refill and saturated tests
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 420 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1 --strategy bump,ouro-p-s,ouro-p-va"
for i in 1 2; do for b in M G2 G5; do run s-$b-$i 40 .gpu/bin/gpu-heap-$b bench $g --json $o/s-$b-$i.json; done; done
run ks-G5 30 .gpu/bin/gpu-heap-G5 kernel-stats --strategy ouro-p-s,ouro-p-va,ouro-p-vl
run conf-G5 150 .gpu/bin/gpu-heap-G5 conformance --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/conf-G5.json
run t-refill 60 .gpu/bin/G5-refill --test-threads 1
run t-saturated 30 .gpu/bin/G5-saturated
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt

# twenty-seventh session, call 6 (call67): G6 = G5 whose fresh runs take fresh memory only (the install's one chunk from ouro_chunk_alloc removed; pooled chunks left to the queue path); M = main 1cbbf18. ouro-p-s/va grids of M and G6 twice; kernel-stats; G6's conformance of ouro-p-s/va/vl at 1024, the refill and saturated tests; then G6's grids of all 13 strategies (walks, buddy, ouro-p, ouro-c) for the reference tables
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 500 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
s="--strategy bump,ouro-p-s,ouro-p-va"
for i in 1 2; do for b in M G6; do run s-$b-$i 40 .gpu/bin/gpu-heap-$b bench $g $s --json $o/s-$b-$i.json; done; done
run ks-G6 30 .gpu/bin/gpu-heap-G6 kernel-stats --strategy ouro-p-s,ouro-p-va,ouro-p-vl
run conf-G6 150 .gpu/bin/gpu-heap-G6 conformance --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/conf-G6.json
run t-refill 70 .gpu/bin/G6-refill --test-threads 1
run t-saturated 30 .gpu/bin/G6-saturated
K=.gpu/bin/gpu-heap-G6
run walks 70 $K bench $g --strategy bump,rw-bm,rw,corw,rw-malloc --json $o/walks.json
run buddy 40 $K bench $g --strategy tbuddy,ualloc --json $o/buddy.json
run ouro-p 40 $K bench $g --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/ouro-p.json
run ouro-c 50 $K bench $g --strategy ouro-c-s,ouro-c-va,ouro-c-vl --json $o/ouro-c.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt

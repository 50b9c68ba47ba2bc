# twenty-first session, call 1 (call31): v (vl_link links a run of up to 8 chunks while a quarter of the heap is free) against f (= main 5884d0e's kernels + the bench flag --full-statistics): v's VLQ tests, ouro-p-vl/ouro-c-vl grids; s (a subgroup's full statistics in one atomic each) against f with --full-statistics
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
for t in ouroboros_vlq ouroboros_queue_chunks composition; do run t-$t 90 .gpu/bin/t-$t; done
V="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1 --strategy bump,ouro-p-vl,ouro-c-vl"
for k in 1 2; do for b in f v; do run vl-$b-$k 45 .gpu/bin/gpu-heap-$b bench $V --json $o/vl-$b-$k.json; done; done
S="--test alloc --threads 10000,1000000 --sizes 16,4096 --prime --cell-secs 1 --strategy bump,rw-bm,ualloc,tbuddy,ouro-p-s"
for k in 1 2; do for b in f s; do run st-$b-$k 30 .gpu/bin/gpu-heap-$b bench $S --full-statistics --json $o/st-$b-$k.json; done; done
run st-s-failures 30 .gpu/bin/gpu-heap-s bench $S --json $o/st-s-failures.json
cat $o/log.txt; grep -h "test result" $o/t-*.txt

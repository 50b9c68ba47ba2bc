# call 7 (tenth session): u = the hot path without the tree buddy's merges (ua_malloc_small / ua_malloc_block) and the sweep plan recomputed; b = main 5b2ec3b: registers, grids, conformance
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 120 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
B=.gpu/bin/gpu-heap-b; U=.gpu/bin/gpu-heap-u; S=.gpu/bin/pstats
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
for st in ualloc tbuddy; do
  mkdir -p $o/wgsl-u-$st
  GPU_HEAP_DUMP_WGSL=$o/wgsl-u-$st run dump-u-$st 60 $U bench --strategy $st --test alloc --threads 10000 --sizes 16 --cell-secs 1
  run stats-u-$st 60 $S $o/wgsl-u-$st/bench-subgroup.wgsl.wgsl bench_malloc bench_free
done
for k in 1 2; do
run grid-b$k 90 $B bench --strategy bump,ualloc,tbuddy $G --json $o/grid-b$k.json
run grid-u$k 90 $U bench --strategy bump,ualloc,tbuddy $G --json $o/grid-u$k.json
done
run conf-u 240 $U conformance --strategy ualloc --workgroups 1024 --json $o/conf-u.json
run conf-u-scale 100 $U conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-u-scale.json
run util-u-32MiB 60 $U utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-u-32MiB.json
run conf-u-tbuddy 100 $U conformance --strategy tbuddy --workgroups 1024 --json $o/conf-u-tbuddy.json
cat $o/log.txt; grep -h "Register" $o/stats-*.txt | cut -c1-60; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110; tail -14 $o/util-u-32MiB.txt

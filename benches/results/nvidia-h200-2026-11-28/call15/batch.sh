# eighteenth session, call 2: m11 = main ab84ab3, jf = branch joint-free (a subgroup's frees into one bitmap word share one atomicAnd in UAlloc, heap_clear_bit shared with RW-BM). Registers, grids alternating, conformance of ualloc and rw-bm at 1024, ualloc scale, tests/ualloc.rs; the scaling test (1 to 2^20 threads) of bump, rw-bm, tbuddy and ualloc (jf) at 16 and 512 B.
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
run ks-jf 30 .gpu/bin/gpu-heap-jf kernel-stats --strategy ualloc,rw-bm --json $o/ks-jf.json
G="--strategy bump,ualloc --test alloc --threads 10000,100000,1000000 --sizes 16,64,256,1024,2048,4096,8192 --prime --cell-secs 1"
for k in 1 2 3; do for b in m11 jf; do run g-$b-$k 25 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
run g-rwbm-jf 25 .gpu/bin/gpu-heap-jf bench --strategy bump,rw-bm --test alloc --threads 10000,100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1 --json $o/g-rwbm-jf.json
run g-rwbm-m11 25 .gpu/bin/gpu-heap-m11 bench --strategy bump,rw-bm --test alloc --threads 10000,100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1 --json $o/g-rwbm-m11.json
run scaling 120 .gpu/bin/gpu-heap-jf bench --strategy bump,rw-bm,tbuddy,ualloc --test scaling --threads 1,32,256,1024,4096,16384,65536,131072,262144,524288,1048576 --sizes 16,512 --prime --cell-secs 1 --json $o/scaling.json
for k in 1 2; do s=$(date +%s); timeout 40 .gpu/bin/ualloc-test-jf --nocapture --test-threads 1 > $o/ua-jf-$k.txt 2>&1; echo "ua-jf-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; done; save
run conf-jf-rwbm 40 .gpu/bin/gpu-heap-jf conformance --strategy rw-bm,corw --workgroups 1024 --json $o/conf-jf-rwbm.json
run conf-jf-scale 80 .gpu/bin/gpu-heap-jf conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-jf-scale.json
run conf-jf 170 .gpu/bin/gpu-heap-jf conformance --strategy ualloc --workgroups 1024 --json $o/conf-jf.json
cat $o/log.txt; grep -h "Register" $o/ks-*.txt; grep -h "test result\|panicked" $o/ua-*.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

# call 3 (twelfth session): c2 = m with sb_search repairing once, after its descents (one site per inlined search); against n (restore one atomicOr) and c1 (one site per descent). kernel-stats, small grids alternating; then c2's survey, conformance, utilisation and full grids
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
run ks-c2 60 .gpu/bin/gpu-heap-c2 kernel-stats --strategy ualloc,tbuddy --json $o/ks-c2.json
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1"
for k in 1 2; do for b in n c1 c2; do run g-$b-$k 40 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
C=.gpu/bin/gpu-heap-c2
S="--strategy ualloc --test alloc,accumulate --threads 1000000 --sizes 16,64 --prime --cell-secs 1"
for k in 1 2 3 4 5 6 7 8; do run s-c2-$k 40 $C bench $S --books --json $o/s-c2-$k.json; done
run conf-c2 200 $C conformance --strategy ualloc --workgroups 1024 --json $o/conf-c2.json
run conf-c2-scale 100 $C conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-c2-scale.json
run conf-c2-tbuddy 60 $C conformance --strategy tbuddy --workgroups 1024 --json $o/conf-c2-tbuddy.json
run util-c2-32MiB 60 $C utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-c2-32MiB.json
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
for k in 1 2; do run grid-c2-$k 60 $C bench --strategy bump,ualloc,tbuddy $G --json $o/grid-c2-$k.json; done
cat $o/log.txt; grep -E "malloc" $o/ks-c2.txt | cut -c1-160; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110; tail -14 $o/util-c2-32MiB.txt 2>/dev/null

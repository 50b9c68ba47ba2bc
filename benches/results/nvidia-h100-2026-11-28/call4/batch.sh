# call 4 (twelfth session): j = main 71b1075 (c2) with frees publishing tree-buddy blocks by sb_set_joining (no summary atomic where the word had another bit); c2 = main 71b1075. Grids alternating, kernel-stats, survey and conformance of j
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
J=.gpu/bin/gpu-heap-j; C=.gpu/bin/gpu-heap-c2
run ks-j 60 $J kernel-stats --strategy ualloc,tbuddy --json $o/ks-j.json
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
for k in 1 2; do
run grid-c2-$k 60 $C bench --strategy bump,ualloc,tbuddy $G --json $o/grid-c2-$k.json
run grid-j-$k 60 $J bench --strategy bump,ualloc,tbuddy $G --json $o/grid-j-$k.json
done
S="--strategy ualloc --test alloc,accumulate --threads 1000000 --sizes 16,64 --prime --cell-secs 1"
for k in 1 2 3 4; do run s-j-$k 40 $J bench $S --books --json $o/s-j-$k.json; done
run conf-j-tbuddy 60 $J conformance --strategy tbuddy --workgroups 1024 --json $o/conf-j-tbuddy.json
run conf-j-scale 100 $J conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-j-scale.json
run conf-j 200 $J conformance --strategy ualloc --workgroups 1024 --json $o/conf-j.json
run util-j-32MiB 60 $J utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-j-32MiB.json
cat $o/log.txt; grep -E "malloc|free" $o/ks-j.txt | cut -c1-160; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110; tail -14 $o/util-j-32MiB.txt 2>/dev/null

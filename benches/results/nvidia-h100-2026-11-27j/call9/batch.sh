# call 9 (tenth session): L = the tree buddy's sweep plan recomputed, not carried through malloc's rounds, plus gpu-heap kernel-stats; b = main 5b2ec3b. Registers of every strategy's bench kernels, grids, conformance
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
B=.gpu/bin/gpu-heap-b; L=.gpu/bin/gpu-heap-L
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
run kernel-stats 150 $L kernel-stats --json $o/kernel-stats.json
for k in 1 2 3; do
run grid-b$k 90 $B bench --strategy bump,ualloc,tbuddy $G --json $o/grid-b$k.json
run grid-L$k 90 $L bench --strategy bump,ualloc,tbuddy $G --json $o/grid-L$k.json
done
run conf-L-tbuddy 100 $L conformance --strategy tbuddy --workgroups 1024 --json $o/conf-L-tbuddy.json
run conf-L 240 $L conformance --strategy ualloc --workgroups 1024 --json $o/conf-L.json
run conf-L-scale 100 $L conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-L-scale.json
cat $o/log.txt; cut -c1-75 $o/kernel-stats.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110

# call 1 (eleventh session): p = branch ualloc-passes 29dab0c (malloc in passes, merge reservation kept); b = main 318bf06 shaders (5b2ec3b build). Registers, grids of three processes each, conformance and utilisation of p
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
B=.gpu/bin/gpu-heap-b; P=.gpu/bin/gpu-heap-p
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
run kernel-stats 120 $P kernel-stats --strategy ualloc,tbuddy --json $o/kernel-stats.json
for k in 1 2 3; do
run grid-b$k 90 $B bench --strategy bump,ualloc,tbuddy $G --json $o/grid-b$k.json
run grid-p$k 90 $P bench --strategy bump,ualloc,tbuddy $G --json $o/grid-p$k.json
done
run conf-p 200 $P conformance --strategy ualloc --workgroups 1024 --json $o/conf-p.json
run conf-p-scale 100 $P conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-p-scale.json
run util-p-32MiB 60 $P utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-p-32MiB.json
run conf-p-tbuddy 150 $P conformance --strategy tbuddy --workgroups 1024 --json $o/conf-p-tbuddy.json
cat $o/log.txt; cut -c1-75 $o/kernel-stats.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110; tail -14 $o/util-p-32MiB.txt 2>/dev/null

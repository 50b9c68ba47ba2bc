# call 1 (twelfth session): m = main 984bb1d (the hidden-summaries fix as landed, never on the GPU before); r0 = d00daa5 plus measurement aids (main before the fix; shaders main's with no variable set). Survey alternating, grids alternating, conformance and utilisation of m
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
M=.gpu/bin/gpu-heap-m; R0=.gpu/bin/gpu-heap-r0
S="--strategy ualloc --test alloc,accumulate --threads 1000000 --sizes 16,64 --prime --cell-secs 1"
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
for k in 1 2 3 4 5 6 7 8 9 10 11 12; do
run s-m-$k 40 $M bench $S --books --json $o/s-m-$k.json
GPU_HEAP_BENCH_BOOKS=1 run s-r0-$k 40 $R0 bench $S --json $o/s-r0-$k.json
done
for k in 1 2; do
run grid-r0-$k 60 $R0 bench --strategy bump,ualloc,tbuddy $G --json $o/grid-r0-$k.json
run grid-m-$k 60 $M bench --strategy bump,ualloc,tbuddy $G --json $o/grid-m-$k.json
done
run conf-m 200 $M conformance --strategy ualloc --workgroups 1024 --json $o/conf-m.json
run conf-m-scale 100 $M conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-m-scale.json
run conf-m-tbuddy 60 $M conformance --strategy tbuddy --workgroups 1024 --json $o/conf-m-tbuddy.json
run util-m-32MiB 60 $M utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-m-32MiB.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110; tail -14 $o/util-m-32MiB.txt 2>/dev/null

# Call 1 (ninth session): per-arena semaphores in ualloc. D = the arena build, arenas and semaphore stride chosen at plan time by env (diagnostic); B = main e0fe1e5.
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
K=.gpu/bin/gpu-heap-k
run conf-k-scale 150 $K conformance --strategy tbuddy,ualloc,ouro-c-s --scenario scale --workgroups 8192 --json $o/conf-k-scale.json
B=.gpu/bin/gpu-heap-b; D=.gpu/bin/gpu-heap-d
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run grid-b1 100 $B bench --strategy bump,ualloc $G --json $o/grid-b1.json
run grid-d32 100 env GPU_HEAP_UA_ARENAS=32 $D bench --strategy ualloc $G --json $o/grid-d32.json
run grid-d1s2 100 env GPU_HEAP_UA_ARENAS=1 GPU_HEAP_UA_STRIDE=2 $D bench --strategy ualloc $G --json $o/grid-d1s2.json
run grid-d8 100 env GPU_HEAP_UA_ARENAS=8 $D bench --strategy ualloc $G --json $o/grid-d8.json
run grid-d128 100 env GPU_HEAP_UA_ARENAS=128 $D bench --strategy ualloc $G --json $o/grid-d128.json
run grid-b2 100 $B bench --strategy bump,ualloc $G --json $o/grid-b2.json
run grid-d32b 100 env GPU_HEAP_UA_ARENAS=32 $D bench --strategy bump,ualloc $G --json $o/grid-d32b.json
run conf-d32 200 env GPU_HEAP_UA_ARENAS=32 $D conformance --strategy ualloc --workgroups 1024 --json $o/conf-d32.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110

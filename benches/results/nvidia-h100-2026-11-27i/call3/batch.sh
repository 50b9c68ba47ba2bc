# Call 3 (ninth session): bins of 32 blocks from 128 B (tree buddy blocks of order c - 3), 256 from 16-64 B as before; per-arena semaphores chosen by env (diagnostic); B = main e0fe1e5.
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
B=.gpu/bin/gpu-heap-b; F=.gpu/bin/gpu-heap-f
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run grid-b1 100 $B bench --strategy bump,ualloc $G --json $o/grid-b1.json
run grid-f1 100 env GPU_HEAP_UA_ARENAS=1 GPU_HEAP_UA_STRIDE=2 $F bench --strategy ualloc $G --json $o/grid-f1.json
run grid-f8 100 env GPU_HEAP_UA_ARENAS=8 $F bench --strategy ualloc $G --json $o/grid-f8.json
run grid-b2 100 $B bench --strategy bump,ualloc $G --json $o/grid-b2.json
run grid-f1b 100 env GPU_HEAP_UA_ARENAS=1 GPU_HEAP_UA_STRIDE=2 $F bench --strategy bump,ualloc $G --json $o/grid-f1b.json
run grid-f8b 100 env GPU_HEAP_UA_ARENAS=8 $F bench --strategy ualloc $G --json $o/grid-f8b.json
run grid-b3 100 $B bench --strategy ualloc $G --json $o/grid-b3.json
run grid-f1c 100 env GPU_HEAP_UA_ARENAS=1 GPU_HEAP_UA_STRIDE=2 $F bench --strategy ualloc $G --json $o/grid-f1c.json
run conf-f1 300 env GPU_HEAP_UA_ARENAS=1 GPU_HEAP_UA_STRIDE=2 $F conformance --strategy ualloc --workgroups 1024 --json $o/conf-f1.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110

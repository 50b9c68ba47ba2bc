# Call 2 (ninth session): bins of 256 blocks (tree buddy blocks of order min(c, 7)) with per-arena semaphores, arenas chosen by env (diagnostic); B = main e0fe1e5.
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
B=.gpu/bin/gpu-heap-b; E=.gpu/bin/gpu-heap-e
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run grid-b1 100 $B bench --strategy bump,ualloc $G --json $o/grid-b1.json
run grid-e1 100 env GPU_HEAP_UA_ARENAS=1 GPU_HEAP_UA_STRIDE=2 $E bench --strategy ualloc $G --json $o/grid-e1.json
run grid-e8 100 env GPU_HEAP_UA_ARENAS=8 $E bench --strategy ualloc $G --json $o/grid-e8.json
run grid-e32 100 env GPU_HEAP_UA_ARENAS=32 $E bench --strategy ualloc $G --json $o/grid-e32.json
run grid-b2 100 $B bench --strategy bump,ualloc $G --json $o/grid-b2.json
run grid-e1b 100 env GPU_HEAP_UA_ARENAS=1 GPU_HEAP_UA_STRIDE=2 $E bench --strategy bump,ualloc $G --json $o/grid-e1b.json
run grid-e8b 100 env GPU_HEAP_UA_ARENAS=8 $E bench --strategy ualloc $G --json $o/grid-e8b.json
run util-e8 100 env GPU_HEAP_UA_ARENAS=8 $E utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-e8.json
run conf-e8 300 env GPU_HEAP_UA_ARENAS=8 $E conformance --strategy ualloc --workgroups 1024 --json $o/conf-e8.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110; tail -16 $o/util-e8.txt

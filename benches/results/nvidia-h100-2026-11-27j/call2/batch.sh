# call 2 (tenth session): slots of bins per class (L, with S), a subgroup's frees into one word cleared together (F), env-switched in build q
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
P=.gpu/bin/gpu-heap-q
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
Q="--test alloc,accumulate --threads 100000,1000000 --sizes 16,64,256 --prime --cell-secs 1"
for k in 1 2; do
run grid-b$k 90 $P bench --strategy bump,ualloc $G --json $o/grid-b$k.json
GPU_HEAP_UA_START=1 GPU_HEAP_UA_SLOTS=1 run grid-L$k 90 $P bench --strategy bump,ualloc $G --json $o/grid-L$k.json
GPU_HEAP_UA_FREE_GROUP=1 run grid-F$k 90 $P bench --strategy bump,ualloc $G --json $o/grid-F$k.json
GPU_HEAP_UA_START=1 GPU_HEAP_UA_SLOTS=1 GPU_HEAP_UA_FREE_GROUP=1 run grid-LF$k 90 $P bench --strategy bump,ualloc $G --json $o/grid-LF$k.json
done
GPU_HEAP_PROBE=2 GPU_HEAP_UA_START=1 GPU_HEAP_UA_SLOTS=1 run probe2L 60 $P bench --strategy ualloc $Q --json $o/probe2L.json
cat $o/log.txt; grep -h probe $o/probe*.txt

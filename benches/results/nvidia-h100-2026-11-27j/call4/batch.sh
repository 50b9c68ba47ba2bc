# call 4 (tenth session): registers of ualloc's bench_malloc with parts left out (GPU_HEAP_UA_V, measurement only), build s
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
P=.gpu/bin/gpu-heap-s; S=.gpu/bin/pstats
for v in "" "NOTB" "NOSWEEP" "NOCOLL" "NOLOOP" "NORETRY" "NOLOOP NOTB" "NOLOOP NOSWEEP" "NOSWEEP NORETRY"; do
  n=v$(echo "$v" | tr ' ' _); mkdir -p $o/wgsl-$n
  GPU_HEAP_UA_V="$v" GPU_HEAP_DUMP_WGSL=$o/wgsl-$n run dump-$n 60 $P bench --strategy ualloc --test alloc --threads 10000 --sizes 16 --cell-secs 1
  run stats-$n 60 $S $o/wgsl-$n/bench-subgroup.wgsl.wgsl bench_malloc bench_free
done
mkdir -p $o/wgsl-tb-nosweep
GPU_HEAP_UA_V="NOSWEEP" GPU_HEAP_DUMP_WGSL=$o/wgsl-tb-nosweep run dump-tb-nosweep 60 $P bench --strategy tbuddy --test alloc --threads 10000 --sizes 16 --cell-secs 1
run stats-tb-nosweep 60 $S $o/wgsl-tb-nosweep/bench-subgroup.wgsl.wgsl bench_malloc bench_free
cat $o/log.txt; for f in $o/stats-*.txt; do echo "== $f"; cat $f; done

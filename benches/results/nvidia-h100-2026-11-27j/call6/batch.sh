# call 6 (tenth session): registers of bench_malloc for leaner merge sweeps (GPU_HEAP_UA_V: LEAN1 plan not carried, LEAN2 one loop over words, NOHELP; measurement only), build t
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
P=.gpu/bin/gpu-heap-t; S=.gpu/bin/pstats
for st in tbuddy ualloc; do
for v in "" "LEAN1" "LEAN2" "LEAN1 LEAN2" "LEAN1 NOHELP" "LEAN1 LEAN2 NOHELP"; do
  n=$st-v$(echo "$v" | tr ' ' _); mkdir -p $o/wgsl-$n
  GPU_HEAP_UA_V="$v" GPU_HEAP_DUMP_WGSL=$o/wgsl-$n run dump-$n 60 $P bench --strategy $st --test alloc --threads 10000 --sizes 16 --cell-secs 1
  run stats-$n 60 $S $o/wgsl-$n/bench-subgroup.wgsl.wgsl bench_malloc
done; done
cat $o/log.txt | grep -v ": rc 0"; for f in $o/stats-*.txt; do echo "$f $(grep -o 'Register Count=[0-9]*' $f)"; done

# call 3 (tenth session): registers of the bench kernels per strategy (pstats: VK_KHR_pipeline_executable_properties on naga's SPIR-V), and the runtime checks' cost (GPU_HEAP_CHECKS: L loop bounding off, D integer division checks off), build r
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
P=.gpu/bin/gpu-heap-r; S=.gpu/bin/pstats
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
for s in bump rw-bm rw-malloc ualloc tbuddy ouro-p-s; do
  mkdir -p $o/wgsl-$s
  GPU_HEAP_DUMP_WGSL=$o/wgsl-$s run dump-$s 60 $P bench --strategy $s --test alloc --threads 10000 --sizes 16 --cell-secs 1
  f=$o/wgsl-$s/bench-subgroup.wgsl.wgsl
  run stats-$s 60 $S $f bench_malloc bench_free
  NO_LOOP_BOUNDING=1 run stats-$s-L 60 $S $f bench_malloc bench_free
  NO_LOOP_BOUNDING=1 NO_DIV_CHECKS=1 run stats-$s-LD 60 $S $f bench_malloc bench_free
done
for k in 1 2; do
run grid-b$k 90 $P bench --strategy bump,ualloc,rw-bm $G --json $o/grid-b$k.json
GPU_HEAP_CHECKS=L run grid-L$k 90 $P bench --strategy bump,ualloc,rw-bm $G --json $o/grid-L$k.json
GPU_HEAP_CHECKS=LD run grid-LD$k 90 $P bench --strategy bump,ualloc,rw-bm $G --json $o/grid-LD$k.json
done
cat $o/log.txt; for f in $o/stats-*.txt; do echo "== $f"; cat $f; done

# call 2 (eleventh session): q = main d00daa5 plus GPU_HEAP_UA_V switches (G: the collective attempt's shape recomputed, 4 values kept across the tree buddy's malloc instead of 9; NOCOLL; NOTB, registers only). Registers of each; grids of q and q+G (bump, ualloc), three processes each; conformance and utilisation of G
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
Q=.gpu/bin/gpu-heap-q
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
for v in base G NOCOLL NOTB "G NOTB" "NOCOLL NOTB"; do n=$(echo $v | tr ' ' '-')
GPU_HEAP_UA_V="${v#base}" run kernel-stats-$n 60 $Q kernel-stats --strategy ualloc --json $o/kernel-stats-$n.json
done
for k in 1 2 3; do
run grid-q$k 90 $Q bench --strategy bump,ualloc $G --json $o/grid-q$k.json
GPU_HEAP_UA_V=G run grid-G$k 90 $Q bench --strategy bump,ualloc $G --json $o/grid-G$k.json
done
export GPU_HEAP_UA_V=G
run conf-G 200 $Q conformance --strategy ualloc --workgroups 1024 --json $o/conf-G.json
run conf-G-scale 100 $Q conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-G-scale.json
run util-G-32MiB 60 $Q utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-G-32MiB.json
cat $o/log.txt; for f in $o/kernel-stats-*.txt; do echo $f; grep bench_malloc $f | cut -c1-200; done; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110; tail -14 $o/util-G-32MiB.txt 2>/dev/null

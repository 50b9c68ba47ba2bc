# Call 4 (ninth session): G = bins of one bitmap word from 128 B (tree buddy blocks of order c - 3) with class hints in their other leaves' state words for frees; B = main e0fe1e5. Three processes each, alternating; conformance of G; out-of-memory utilisation of G.
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
B=.gpu/bin/gpu-heap-b; N=.gpu/bin/gpu-heap-g
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for i in 1 2 3; do
run grid-b$i 100 $B bench --strategy bump,ualloc $G --json $o/grid-b$i.json
run grid-g$i 100 $N bench --strategy bump,ualloc $G --json $o/grid-g$i.json
done
run conf-g 300 $N conformance --strategy ualloc --workgroups 1024 --json $o/conf-g.json
run conf-g-scale 100 $N conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-g-scale.json
run util-g-32MiB 100 $N utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-g-32MiB.json
run util-g-1GiB 100 $N utilisation --strategy ualloc --heap-size 1GiB --sizes 1024,2048,4096,8192,16384,32768,65536 --json $o/util-g-1GiB.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110; tail -14 $o/util-g-32MiB.txt; tail -8 $o/util-g-1GiB.txt

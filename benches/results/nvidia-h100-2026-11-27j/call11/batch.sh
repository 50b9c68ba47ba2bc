# call 11 (tenth session): x = malloc's rounds ask the tree buddy without merges, and a malloc that found the heap in pieces merges between passes (tb_merge_for), nothing of the rounds live; b = main 5b2ec3b. Registers first; grids and conformance only if ualloc's malloc holds 80 or fewer
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
B=.gpu/bin/gpu-heap-b; X=.gpu/bin/gpu-heap-x
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
run kernel-stats 120 $X kernel-stats --strategy ualloc,tbuddy --json $o/kernel-stats.json
r=$(grep -A12 '"ualloc"' $o/kernel-stats.json | grep -m1 -A1 '"Register Count"' | tail -1 | tr -dc 0-9)
echo "ualloc bench_malloc registers: $r" >> $o/log.txt
if [ -n "$r" ] && [ "$r" -le 80 ]; then
for k in 1 2; do
run grid-b$k 90 $B bench --strategy bump,ualloc $G --json $o/grid-b$k.json
run grid-x$k 90 $X bench --strategy bump,ualloc $G --json $o/grid-x$k.json
done
run conf-x 200 $X conformance --strategy ualloc --workgroups 1024 --json $o/conf-x.json
run conf-x-scale 90 $X conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-x-scale.json
run util-x-32MiB 60 $X utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-x-32MiB.json
fi
cat $o/log.txt; cut -c1-75 $o/kernel-stats.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110; tail -14 $o/util-x-32MiB.txt 2>/dev/null

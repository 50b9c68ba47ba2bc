# fourteenth session, call 7: m5 = main 8255882; tt = m5 with a subgroup's tree-buddy mallocs claiming nodes of one word together and its frees clearing, publishing and counting them together (tbuddy defines GPU_HEAP_SUBGROUPS). Grids alternating, then conformance of tt
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 190 - $(date +%s) + t0 )); }
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
G="--strategy bump,tbuddy,ualloc --test alloc --threads 100000,1000000 --sizes 16,256,4096,8192 --prime --cell-secs 1"
for k in 1 2; do for b in m5 tt; do run g-$b-$k 30 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
run conf-tt-tbuddy 40 .gpu/bin/gpu-heap-tt conformance --strategy tbuddy --workgroups 1024 --json $o/conf-tt-tbuddy.json
run conf-tt-scale 90 .gpu/bin/gpu-heap-tt conformance --strategy tbuddy,ualloc --scenario scale --workgroups 8192 --json $o/conf-tt-scale.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110

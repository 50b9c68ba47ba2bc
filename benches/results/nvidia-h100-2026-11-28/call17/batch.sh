# first call of the fifteenth session: m6 = main 16e3e60; ts = tt-spread ba9ddf8. Grids alternating, conformance of main's ualloc (16e3e60 only ran on lavapipe), then of ts
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
G="--strategy bump,ualloc,tbuddy --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2; do for b in m6 ts; do run g-$b-$k 45 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
run conf-m6-ualloc 170 .gpu/bin/gpu-heap-m6 conformance --strategy ualloc --workgroups 1024 --json $o/conf-m6-ualloc.json
run conf-m6-scale 80 .gpu/bin/gpu-heap-m6 conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-m6-scale.json
run conf-ts-tbuddy 60 .gpu/bin/gpu-heap-ts conformance --strategy tbuddy --workgroups 1024 --json $o/conf-ts-tbuddy.json
run conf-ts-scale 100 .gpu/bin/gpu-heap-ts conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-ts-scale.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110

# q = 6ce2f73 (group search + group release); q2 = 2e0d43f (q + fresh bins claimed with no look)
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 560 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-q 75 .gpu/bin/gpu-heap-q bench --strategy bump,ualloc --test alloc,accumulate $G --json $o/bench-q.json
run bench-q2 60 .gpu/bin/gpu-heap-q2 bench --strategy ualloc --test alloc,accumulate $G --json $o/bench-q2.json
run conf-q-8192-scale 150 .gpu/bin/gpu-heap-q conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-q-8192-scale.json
run conf-q-1024-scale 40 .gpu/bin/gpu-heap-q conformance --strategy ualloc --scenario scale --workgroups 1024 --json $o/conf-q-1024-scale.json
run conf-q-tbuddy-8192 70 .gpu/bin/gpu-heap-q conformance --strategy tbuddy --workgroups 8192 --json $o/conf-q-tbuddy-8192.json
run conf-q2-1024-b 200 .gpu/bin/gpu-heap-q2 conformance --strategy ualloc --scenario basic,churn,scale,device-bad-input,host-bad-input,free-all,round-trip --workgroups 1024 --json $o/conf-q2-1024-b.json
run conf-q2-1024-a 300 .gpu/bin/gpu-heap-q2 conformance --strategy ualloc --scenario exhaustion,utilisation,growth --workgroups 1024 --json $o/conf-q2-1024-a.json
cat $o/log.txt; grep -hiE "pass|fail" $o/conf-*.txt | cut -c1-160 | head -40

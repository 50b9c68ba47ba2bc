# twenty-third session, call 3 (call42): n = b3abfa6 (rw-malloc's neighbours, committed), b = n + rw-malloc's word loops RWM_BATCH (4) words at a time (check, claim, free's end search). rw-malloc's alloc and accumulate cells at 100k and 1M, n and b alternately, twice; b's conformance at 1024 and 8192 workgroups, random-walk tests and out-of-memory
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 300 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2; do
  for b in n b; do run rwm-$b-$k 40 .gpu/bin/gpu-heap-$b bench $g --strategy bump,rw-malloc --json $o/rwm-$b-$k.json; done
done
run t-rw 40 .gpu/bin/t-rw-b --test-threads 1
run conf-b-1024 60 .gpu/bin/gpu-heap-b conformance --strategy rw-malloc --workgroups 1024 --json $o/conf-b-1024.json
run conf-b-8192 50 .gpu/bin/gpu-heap-b conformance --strategy rw-malloc --scenario scale,round-trip,free-all --workgroups 8192 --json $o/conf-b-8192.json
run oom-b 60 .gpu/bin/gpu-heap-b bench --test out-of-memory --strategy rw-malloc --json $o/oom-b.json
cat $o/log.txt; grep -h "test result\|panicked\|assertion" $o/t*.txt | cut -c1-600; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100; grep -h utilisation= $o/oom-b.txt | tail -10 | cut -c1-160

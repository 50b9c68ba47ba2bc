# twenty-third session, call 2 (call41): m = main ecb5599, n = m + rw-malloc's neighbours (a subgroup's larger lanes reserve together and first try their pieces of one block). rw-malloc's alloc and accumulate cells at 100k and 1M, m and n alternately, twice; n's conformance at 1024 and 8192 workgroups, random-walk tests and out-of-memory; tbuddy's and ualloc's slow cells of call 33 in three processes of m
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 480 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2; do
  for b in m n; do run rwm-$b-$k 60 .gpu/bin/gpu-heap-$b bench $g --strategy bump,rw-malloc --json $o/rwm-$b-$k.json; done
done
run t-rw 60 .gpu/bin/t-rw-n --test-threads 1
run conf-n-1024 60 .gpu/bin/gpu-heap-n conformance --strategy rw-malloc --workgroups 1024 --json $o/conf-n-1024.json
run conf-n-8192 60 .gpu/bin/gpu-heap-n conformance --strategy rw-malloc --scenario scale,round-trip,free-all --workgroups 8192 --json $o/conf-n-8192.json
run oom-n 60 .gpu/bin/gpu-heap-n bench --test out-of-memory --strategy rw-malloc --json $o/oom-n.json
for k in 1 2 3; do run bu-m-$k 40 .gpu/bin/gpu-heap-m bench --test alloc,accumulate --threads 100000,1000000 --sizes 16,256 --prime --cell-secs 1 --strategy bump,tbuddy,ualloc --json $o/bu-m-$k.json; done
cat $o/log.txt; grep -h "test result\|panicked\|assertion" $o/t*.txt | cut -c1-600; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

# twentieth session, call 4 (call30): l1 (branch lines: a queue descriptor of four 128-byte lines, the semaphore, front, back and spread counter one in each) against m16 = main 6597b91: l1's root tests, grids, conformance
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 370 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
for t in lib growth ouroboros_vlq ouroboros_saturated ouroboros_mixed ouroboros_refill ouroboros_queue_chunks composition bulk_semaphore shader_errors random_walk tbuddy ualloc; do run t-$t 60 .gpu/bin/t-$t; done
A="--threads 10000,1000000 --prime --cell-secs 1"
for k in 1 2; do
  for b in m16 l1; do run g-$b-$k 40 .gpu/bin/gpu-heap-$b bench --test alloc $A --strategy bump,ouro-p-s,ouro-p-va,ouro-p-vl --sizes 16,256,4096,8192 --json $o/g-$b-$k.json; done
  for b in m16 l1; do run a-$b-$k 30 .gpu/bin/gpu-heap-$b bench --test accumulate $A --strategy bump,ouro-p-s,ouro-p-va --sizes 16,256 --json $o/a-$b-$k.json; done
done
run conf-l1 400 .gpu/bin/gpu-heap-l1 conformance --strategy ouro-p-va,ouro-c-s --workgroups 1024 --json $o/conf-l1.json
cat $o/log.txt; grep -h "test result\|panicked\|FAILED" $o/t-*.txt | head -40; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

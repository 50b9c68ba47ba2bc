# twentieth session, call 1: the root test suite at main e6129ac plus the review's refactor (ouro_take_step, ouro_rounds_spent, ct_hint_back_to); conformance of Ouroboros at 1024; page-based frees: main vs e1 (spill decision read before the live bit's atomic) vs e3 (standard rings: no spill look before the put)
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 560 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
A="--test alloc --threads 10000,1000000 --prime --cell-secs 1"
for k in 1 2 3; do
  for b in main e1 e3; do run g-$b-$k 30 .gpu/bin/gpu-heap-$b bench $A --strategy bump,ouro-p-s,ouro-p-va --sizes 16,256,4096,8192 --json $o/g-$b-$k.json; done
done
for k in 1 2 3; do run bs-$k 25 .gpu/bin/t-bulk_semaphore; done
for t in lib shader_errors composition random_walk tbuddy ualloc growth ouroboros_vlq ouroboros_saturated ouroboros_mixed ouroboros_refill ouroboros_queue_chunks; do run t-$t 60 .gpu/bin/t-$t; done
run conf-ouro 150 .gpu/bin/gpu-heap-main conformance --strategy ouro-p-s,ouro-c-vl --workgroups 1024 --json $o/conf-ouro.json
cat $o/log.txt; grep -h "test result\|panicked\|FAILED" $o/*.txt | head -40; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

# nineteenth session, call 24: where a page-based free's time goes, and the live bits cleared jointly. m15 = main b2c8732; d1 = m15 whose ouro_p_free returns at once (no enqueue, no signal: pages are lost; diagnostic only, sizes up to 1 KiB); d2 = m15 whose strategy_free does not clear the live bit (diagnostic only); v1 = branch live-joint d193bb4 (Ouroboros plans use subgroups; the live bit cleared with heap_clear_bit). Alloc grids, three processes each alternating; then main's root crate tests once each; then v1's conformance of ouro-p-s and ouro-c-s at 1024
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 540 - $(date +%s) + t0 )); }
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
A="--test alloc --threads 10000,100000,1000000 --prime --cell-secs 1"
for k in 1 2 3; do
  for b in m15 v1; do run g-$b-$k 40 .gpu/bin/gpu-heap-$b bench $A --strategy bump,ouro-p-s,ouro-p-va --sizes 16,64,256,1024,4096,8192 --json $o/g-$b-$k.json; done
  for b in d1 d2; do run g-$b-$k 30 .gpu/bin/gpu-heap-$b bench $A --strategy bump,ouro-p-s --sizes 16,64,256,1024 --json $o/g-$b-$k.json; done
done
for t in lib shader_errors bulk_semaphore composition random_walk tbuddy ualloc growth ouroboros_vlq ouroboros_saturated ouroboros_mixed ouroboros_refill ouroboros_queue_chunks; do run t-$t 90 .gpu/bin/t-$t; done
run conf-v1 150 .gpu/bin/gpu-heap-v1 conformance --strategy ouro-p-s,ouro-c-s --workgroups 1024 --json $o/conf-v1.json
cat $o/log.txt; grep -h "test result\|panicked\|FAILED" $o/t-*.txt | head -40; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

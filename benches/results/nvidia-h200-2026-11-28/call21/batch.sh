# nineteenth session, call 21: m13 = main bb97521 (a subgroup's frees of one class share their queue reservation and signal, ouro-p-*) against m12 = 67f0af6: alloc grids of bump and the page-based variants, three processes each alternating; tests/growth.rs's OuroPVL trim test at m12 three times, the new growth tests twice; the Ouroboros tests and the page-based conformance at 1024 at m13
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
for k in 1 2 3; do run t-refill-$k 90 .gpu/bin/t-ouroboros_refill --nocapture; run t-qchunks-$k 120 .gpu/bin/t-ouroboros_queue_chunks --nocapture; done
G="--strategy bump,ouro-p-s,ouro-p-va,ouro-p-vl --test alloc --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2 3; do for b in m12 m13; do run g-$b-$k 40 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
for k in 1 2 3; do run t-growth-m12-$k 40 .gpu/bin/t-growth-m12 ouroboros_virtual_queues_keep_segments_they_reference; done
for k in 1 2; do run t-growth-$k 40 .gpu/bin/t-growth; done
for t in lib ouroboros_refill ouroboros_queue_chunks ouroboros_mixed ouroboros_saturated ouroboros_vlq; do run t-$t 60 .gpu/bin/t-$t; done
run conf-p 200 .gpu/bin/gpu-heap-m13 conformance --strategy ouro-p-s,ouro-p-va --workgroups 1024 --json $o/conf-p.json
run conf-pvl 250 .gpu/bin/gpu-heap-m13 conformance --strategy ouro-p-vl --workgroups 1024 --json $o/conf-pvl.json
cat $o/log.txt; grep -h "test result\|panicked\|FAILED" $o/t-*.txt | head -40; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

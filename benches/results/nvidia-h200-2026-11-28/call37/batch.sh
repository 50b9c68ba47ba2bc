# twenty-second session, call 2 (call37): main 05e8baa's kernels. The growth test that failed in call 36 (ouro-p-vl's refill, 6137 of 6144), 40 times a strategy in one process with the heap's state printed after each release and refill (d: the test with diagnostics); then conformance of ouro-c-vl (b979713) and ouro-p-vl at 1024 workgroups
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 565 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
export GPU_HEAP_TEST_REPEATS=40; run tg-d 100 .gpu/bin/t-growth-d ouroboros_virtual_queues_keep --nocapture --test-threads 1
run conf-ouro-c-vl 260 .gpu/bin/gpu-heap-m conformance --strategy ouro-c-vl --workgroups 1024 --json $o/conf-ouro-c-vl.json
run conf-ouro-p-vl 250 .gpu/bin/gpu-heap-m conformance --strategy ouro-p-vl --workgroups 1024 --json $o/conf-ouro-p-vl.json
cat $o/log.txt; grep -h "test result\|panicked" $o/t*.txt; grep -c "after refill" $o/tg-d.txt; grep "after refill" $o/tg-d.txt | grep -v "6144 live" | head; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

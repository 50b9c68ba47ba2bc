# twenty-second session, call 3 (call38): s = a60d5e0 (a malloc about to report out of memory searches the whole spill). The refill tests (the new spilled-page test among them), the growth test in four processes of three runs a strategy each, then conformance at 1024 workgroups: ouro-p-vl and ouro-p-va where the spill is used (exhaustion, utilisation, growth, free-all) and ouro-c-vl's four scenarios that call 37 did not reach
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 540 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
run t-orefill 60 .gpu/bin/t-orefill-s --test-threads 1
export GPU_HEAP_TEST_REPEATS=3
for k in 1 2 3 4; do run tg-$k 40 .gpu/bin/t-growth-s ouroboros_virtual_queues_keep --test-threads 1; done
run conf-c-vl 220 .gpu/bin/gpu-heap-s conformance --strategy ouro-c-vl --scenario growth,scale,free-all,round-trip --workgroups 1024 --json $o/conf-c-vl.json
run conf-p-vl 120 .gpu/bin/gpu-heap-s conformance --strategy ouro-p-vl --scenario exhaustion,utilisation,growth,free-all --workgroups 1024 --json $o/conf-p-vl.json
run conf-p-va 100 .gpu/bin/gpu-heap-s conformance --strategy ouro-p-va --scenario exhaustion,utilisation,free-all,round-trip --workgroups 1024 --json $o/conf-p-va.json
cat $o/log.txt; grep -h "test result\|panicked\|assertion\|left\|right" $o/t*.txt | cut -c1-600; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

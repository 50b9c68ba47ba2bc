# twenty-third session, call 1 (call40): m = main ecb5599 (f616711's early stop of the spill's whole search, ouro-c-vl's front re-reads: never on the GPU). The refill, token-log and queue-chunk tests, the growth test in four processes of three runs a strategy each, conformance at 1024 workgroups of ouro-p-va and ouro-p-vl where the spill is used, and ouro-c-vl's scenarios but growth and scale
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
run t-orefill 60 .gpu/bin/t-orefill-m --test-threads 1
run t-otl 40 .gpu/bin/t-otl-m --test-threads 1
run t-oqc 70 .gpu/bin/t-oqc-m --test-threads 1
export GPU_HEAP_TEST_REPEATS=3
for k in 1 2 3 4; do run tg-$k 40 .gpu/bin/t-growth-m ouroboros_virtual_queues_keep --test-threads 1 --nocapture; done
run conf-p-va 90 .gpu/bin/gpu-heap-m conformance --strategy ouro-p-va --scenario exhaustion,utilisation,growth,free-all --workgroups 1024 --json $o/conf-p-va.json
run conf-p-vl 130 .gpu/bin/gpu-heap-m conformance --strategy ouro-p-vl --scenario exhaustion,utilisation,growth,free-all --workgroups 1024 --json $o/conf-p-vl.json
run conf-c-vl 250 .gpu/bin/gpu-heap-m conformance --strategy ouro-c-vl --scenario basic,churn,exhaustion,device-bad-input,utilisation,free-all,round-trip --workgroups 1024 --json $o/conf-c-vl.json
cat $o/log.txt; grep -h "test result\|panicked\|assertion\|left\|right" $o/t*.txt | cut -c1-600; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

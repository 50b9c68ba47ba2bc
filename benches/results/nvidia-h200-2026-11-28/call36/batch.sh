# twenty-second session, call 1 (call36): main 05e8baa on the GPU: every root test binary, then conformance at 1024 workgroups, strategy by strategy (the statistics layout of ab56e4e-0c17124 and ouro-c-vl's b979713 had run only on lavapipe)
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
for t in otl lib bsem comp growth omixed oqc orefill osat ovlq rw tbuddy ualloc sherr; do run t-$t 90 .gpu/bin/t-$t --test-threads 1; done
for s in bump rw corw rw-bm rw-malloc tbuddy ouro-p-s ualloc ouro-c-s ouro-p-va; do run conf-$s 150 .gpu/bin/gpu-heap-m conformance --strategy $s --workgroups 1024 --json $o/conf-$s.json; done
cat $o/log.txt; grep -h "test result\|panicked" $o/t-*.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

# twenty-second session, call 4 (call39): s (a60d5e0): ouro-c-vl scale, round-trip and free-all at 1024 workgroups, which call 38 did not reach
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 150 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
run conf-c-vl 150 .gpu/bin/gpu-heap-s conformance --strategy ouro-c-vl --scenario scale,round-trip,free-all --workgroups 1024 --json $o/conf-c-vl.json
cat $o/log.txt; grep -h "test result\|panicked\|assertion\|left\|right" $o/t*.txt | cut -c1-600; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

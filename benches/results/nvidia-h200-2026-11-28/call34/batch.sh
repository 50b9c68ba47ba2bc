# twenty-first session, call 4 (call34): conformance of ouro-c-vl at 1024 workgroups at f (main's kernels): scale, free-all and round-trip, the three not run at this build in the twentieth session
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 420 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
run conf-c-vl 400 .gpu/bin/gpu-heap-f conformance --strategy ouro-c-vl --scenario scale,free-all,round-trip --workgroups 1024 --json $o/conf-c-vl.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100

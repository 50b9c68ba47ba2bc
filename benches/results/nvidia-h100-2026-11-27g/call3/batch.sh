# Call 3 of the seventh session: l. Conformance at 8192: scale of ouro-p-vl and ouro-c-vl; ouro-c-vl first five scenarios at 1024.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/gpu-heap-* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
L=.gpu/bin/gpu-heap-l
run conf-l-scale-vl 230 $L conformance --strategy ouro-p-vl,ouro-c-vl --scenario scale --workgroups 8192 --json $o/conf-l-scale-vl.json
run conf-l-c-vl-a 330 $L conformance --strategy ouro-c-vl --scenario basic,churn,exhaustion,device-bad-input,host-bad-input --workgroups 1024 --json $o/conf-l-c-vl-a.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110

# Call 8 of the seventh session: m (the trim check retires chunk-based chunks whose retirement gave up). Conformance: growth and free-all of ouro-c-s, ouro-c-va, ouro-c-vl at 1024.
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
M=.gpu/bin/gpu-heap-m
run conf-m-c-s 90 $M conformance --strategy ouro-c-s --scenario growth,free-all --workgroups 1024 --json $o/conf-m-c-s.json
run conf-m-c-va 150 $M conformance --strategy ouro-c-va --scenario growth,free-all --workgroups 1024 --json $o/conf-m-c-va.json
run conf-m-c-vl 300 $M conformance --strategy ouro-c-vl --scenario growth,free-all --workgroups 1024 --json $o/conf-m-c-vl.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110

# Call 9 of the fifth session: f (2c12a05: chunk-token logs' drained chunks unmarked; one publication expression).
# bench of bump, ouro-p-va, ouro-p-vl (that the fix keeps e's numbers); conformance at 1024: ouro-c-vl (two processes), ouro-p-vl, ouro-p-va.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/gpu-heap-f >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
F=.gpu/bin/gpu-heap-f
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-f 45 $F bench --strategy bump,ouro-p-va,ouro-p-vl --test alloc $G --json $o/bench-f.json
run conf-f-c-vl-a 190 $F conformance --strategy ouro-c-vl --scenario basic,churn,exhaustion,device-bad-input,host-bad-input,utilisation --workgroups 1024 --json $o/conf-f-c-vl-a.json
run conf-f-c-vl-b 210 $F conformance --strategy ouro-c-vl --scenario growth,scale,free-all,round-trip --workgroups 1024 --json $o/conf-f-c-vl-b.json
run conf-f-p-va 120 $F conformance --strategy ouro-p-va --workgroups 1024 --json $o/conf-f-p-va.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110

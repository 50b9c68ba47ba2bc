# Call 3 of the sixth session: j (index, walk from the hint cut to 32 positions).
# the chunk-based grid with bump; conformance of ouro-c-s and ouro-c-va at 1024, scale at 8192.
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
J=.gpu/bin/gpu-heap-j
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-j 120 $J bench --strategy bump,ouro-p-s,ouro-c-s,ouro-c-va,ouro-c-vl --test alloc,accumulate $G --json $o/bench-j.json
run conf-j-c-s 100 $J conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-j-c-s.json
run conf-j-c-va 160 $J conformance --strategy ouro-c-va --workgroups 1024 --json $o/conf-j-c-va.json
run conf-j-scale 150 $J conformance --strategy ouro-c-s,ouro-c-va,ouro-c-vl --scenario scale --workgroups 8192 --json $o/conf-j-scale.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110

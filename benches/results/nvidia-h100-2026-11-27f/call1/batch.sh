# Call 1 of the sixth session: i (chunk-based index) against f (2c12a05, the Ouroboros of main).
# bench of bump, ouro-p-s and the chunk-based variants with i, then with f; conformance of ouro-c-s at 1024 and its scale at 8192 with i.
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
I=.gpu/bin/gpu-heap-i; F=.gpu/bin/gpu-heap-f
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-i 150 $I bench --strategy bump,ouro-p-s,ouro-c-s,ouro-c-va,ouro-c-vl --test alloc,accumulate $G --json $o/bench-i.json
run conf-i-c-s 150 $I conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-i-c-s.json
run conf-i-c-s-8192 60 $I conformance --strategy ouro-c-s --scenario scale --workgroups 8192 --json $o/conf-i-c-s-8192.json
run bench-f 200 $F bench --strategy bump,ouro-p-s,ouro-c-s,ouro-c-va,ouro-c-vl --test alloc,accumulate $G --json $o/bench-f.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110
